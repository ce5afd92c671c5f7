"""The series ``bisect`` walks: a repository's tags, a package's versions, or files.

:func:`series_for` turns the command line's REFs into an ordered list of
:class:`~servewise.inspect.bisect.Candidate`: one bare repository (no tag) gives its
tags by created date, ``pypi:NAME`` (no version) the package's versions in version
order, and several REFs the builds in the order given. Tags that point at the same
image are one build.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from servewise.errors import UsageError
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


@dataclass
class Series:
    """The builds to bisect, oldest first, and what was left out."""

    kind: str
    """``tags``, ``versions`` or ``list``."""
    candidates: list[Candidate]
    notes: list[str] = field(default_factory=list)


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
    series = Series("tags", [])
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
    series = Series("versions", [])
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
    return Series("list", [Candidate(label=ref, ref=ref) for ref in refs])


__all__ = ["Series", "image_series", "series_for", "version_series"]
