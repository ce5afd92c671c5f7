"""The series ``bisect`` walks: a repository's tags, a package's versions, or files.

:func:`series_for` turns the command line's REFs into an ordered list of
:class:`~servewise.inspect.bisect.Candidate`: one bare repository (no tag) gives its
tags by created date, ``pypi:NAME`` (no version) the package's versions in version
order, and several REFs the builds oldest first: by the version their REFs name
(``pypi:NAME==V``, a wheel's file name, an image tag such as ``v0.33.0``) when every one
names one, else as given — and then :func:`~servewise.inspect.bisect.bisect` checks the
two ends it judges by the engine version or date inside them and turns the series round
when it was given newest first. Tags that point at the same image are one build.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from servewise.errors import ServewiseError, UsageError
from servewise.inspect.bisect import Candidate
from servewise.inspect.tags import (
    compile_match,
    date_order,
    load_documents,
    resolve_tags,
    save_documents,
)
from servewise.sources import SourceOptions
from servewise.sources.pypi import Release, index_url, open_release, parse_pypi_ref, releases
from servewise.sources.registry import (
    RegistryAccess,
    RegistryClient,
    ResolvedImage,
    image_source,
    parse_image_reference,
)
from servewise.sources.resolve import looks_like_path
from servewise.store import Store
from servewise.versions import EngineVersion


@dataclass
class Series:
    """The builds to bisect, oldest first, and what was left out."""

    kind: str
    """``tags``, ``versions`` or ``list``."""
    candidates: list[Candidate]
    notes: list[str] = field(default_factory=list)
    order: str = "as given"
    """How the builds are ordered, oldest first: ``by created date``, ``by version``,
    ``as given`` (a list whose REFs name no versions: checked by ``bisect``)."""


def _image_opener(access: RegistryAccess, image: ResolvedImage, ref: str) -> Candidate:
    return Candidate(
        label=image.reference.tag or ref, ref=ref, created=image.config.created,
        open=lambda: image_source(access, image, ref),
    )


def image_series(repo: str, *, match: str | None, options: SourceOptions,
                 store: Store | None) -> Series:
    """A repository's tags (matching ``match``) by created date, one build per digest."""
    reference = parse_image_reference(repo, allow_bare=True)
    pattern = compile_match(match)
    documents = load_documents(store, reference)
    with RegistryClient.connect(reference, insecure=options.insecure,
                                deadline=options.deadline) as client:
        names = [t for t in client.tags() if pattern is None or pattern.search(t)]
        infos = resolve_tags(client, reference, names, options.platform, documents)
        access = client.current_access
    save_documents(store, reference, documents)
    series = Series("tags", [], order="by created date")
    by_digest: dict[str, int] = {}
    for info in date_order(infos):
        if info.image is None or info.digest is None:
            series.notes.append(f"tag {info.tag} left out: {info.error}")
            continue
        if info.created is None:
            series.notes.append(f"tag {info.tag} left out: its config has no created date")
            continue
        if info.digest in by_digest:
            index = by_digest[info.digest]
            old = series.candidates[index]
            series.candidates[index] = Candidate(old.label, old.ref, old.created,
                                                 (*old.aliases, info.tag), old.open)
            continue
        ref = f"{reference.registry}/{reference.repository}@{info.digest}"
        by_digest[info.digest] = len(series.candidates)
        series.candidates.append(_image_opener(access, info.image, ref))
    return series


def version_series(ref: str, *, match: str | None, options: SourceOptions) -> Series:
    """The versions of ``pypi:NAME`` (matching ``match``) that have a wheel for the platform."""
    name, _ = parse_pypi_ref(ref)
    pattern = compile_match(match)
    series = Series("versions", [], order="by version")
    for release in releases(name, index_url(options.index_url), options.platform,
                            deadline=options.deadline):
        if pattern is not None and not pattern.search(release.version):
            continue
        if release.wheel is None:
            series.notes.append(f"{name} {release.version} left out: no wheel for the platform")
            continue
        series.candidates.append(_release_candidate(release, options))
    return series


def _release_candidate(release: Release, options: SourceOptions) -> Candidate:
    ref = f"pypi:{release.name}=={release.version}"
    return Candidate(label=release.version, ref=ref, created=release.uploaded,
                     open=lambda: open_release(release, ref, options.platform,
                                               options.deadline))


def series_for(refs: list[str], *, match: str | None, options: SourceOptions,
               store: Store | None) -> Series:
    """The series the REFs name (see the module's docstring)."""
    if not refs:
        raise UsageError("bisect needs a repository, pypi:NAME, or several builds",
                         hint="e.g. servewise bisect vllm/vllm-openai --gpu rtx-pro-6000 "
                         "--match '^nightly-'")
    if len(refs) == 1:
        ref = refs[0]
        if ref.startswith("pypi:") and "==" not in ref:
            return version_series(ref, match=match, options=options)
        remote_or_path = ref.startswith(("http://", "https://", "oci:", "docker-archive:",
                                         "oci-archive:"))
        if not looks_like_path(ref) and not remote_or_path and not Path(ref).exists():
            reference = parse_image_reference(ref, allow_bare=True)
            if reference.tag is None and reference.digest is None:
                return image_series(ref, match=match, options=options, store=store)
        raise UsageError(
            f"{ref} is one build; bisect needs a series",
            hint="give a repository without a tag, pypi:NAME without a version, "
            "or several builds in order",
            found=ref,
        )
    if match is not None:
        raise UsageError("--match selects tags or versions; with a list of builds, give the "
                         "ones you want", found=match, hint="drop --match")
    return list_series(refs)


def ref_version(ref: str) -> EngineVersion | None:
    """The version a REF names by itself (``pypi:vllm==0.33.0``, a wheel, ``repo:v0.33.0``)."""
    from servewise.knowledge.version_reading import read_version

    try:
        return read_version(ref.removeprefix("pypi:")).engine_version
    except ServewiseError:
        return None


def list_series(refs: list[str]) -> Series:
    """Builds named one by one, oldest first by the versions their REFs name, if all do."""
    candidates = [Candidate(label=ref, ref=ref) for ref in refs]
    versions = [ref_version(ref) for ref in refs]
    known = [v for v in versions if v is not None]
    if len(known) < len(refs) or len(set(known)) < 2:
        return Series("list", candidates)
    order = sorted(range(len(refs)), key=lambda i: versions[i])  # type: ignore[arg-type,return-value]
    series = Series("list", [candidates[i] for i in order], order="by version")
    if order != list(range(len(refs))):
        shown = " < ".join(f"{versions[i]}" for i in order)
        series.notes.append(f"builds ordered oldest first by the versions their names give "
                            f"({shown}), not as given")
    return series


__all__ = ["Series", "image_series", "list_series", "ref_version", "series_for",
           "version_series"]
