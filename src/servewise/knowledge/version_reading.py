"""Read engine version strings and image tags: what a name says about the build behind it.

:func:`read_version` takes what a user has in hand — a version
(``0.26.1rc1.dev229+g6f91edf96.d20260731``), an image tag (``nightly-<commit>``,
``v0.5.2-cu126``, ``25.08-py3``), an image reference (``vllm/vllm-openai:nightly``), a
wheel file name, or ``NAME==VERSION`` — and returns a :class:`VersionReading`: the PEP
440 parts (release, pre, post, dev, local, via ``packaging``), then the engines'
conventions on top (setuptools-scm's ``+g<commit>`` and ``.dYYYYMMDD``, CUDA variants
``+cu126``, date-numbered dev builds, tag conventions from
``knowledge/data/image_tags.toml``), with a sentence for each thing it tells.

It is a pure function: no I/O beyond reading the shipped knowledge tables.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from servewise.errors import UsageError
from servewise.knowledge.engines import (
    Engine,
    EngineTable,
    TagConvention,
    load_engine_table,
    normalize_repository,
)
from servewise.versions import EngineVersion

FORMS = ("version", "requirement", "wheel", "image-tag", "image-reference")
"""What the input was read as."""

CHANNELS = (
    "release", "pre-release", "post-release", "development", "local-build", "nightly",
    "commit", "monthly", "floating", "pinned",
)
"""What kind of build a reading names."""

_REQUIREMENT_RE = re.compile(r"^(?:pypi:)?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)$")
_REFERENCE_RE = re.compile(
    r"^(?P<repository>[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?::\d+)?(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9._-]{0,127}))?"
    r"(?:@(?P<digest>[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}))?$"
)
_COMMIT_PART = re.compile(r"^g(?P<commit>[0-9a-f]{7,40})$")
_DATE_PART = re.compile(r"^d(?P<date>\d{8})(?P<time>\d{6})?$")
_CUDA_PART = re.compile(r"^cu(?P<cuda>\d{3})$")
_VARIANT_PART = re.compile(r"^(?:cpu|xpu|tpu|hpu|neuron|rocm\d+(?:\.\d+)*)$")
_HINT = (
    "give a version (0.26.1rc1.dev229+g6f91edf96.d20260731), an image tag (nightly-<commit>, "
    "v0.10.1, 25.08-py3), an image reference (vllm/vllm-openai:nightly), a wheel file name "
    "or NAME==VERSION"
)


@dataclass(frozen=True)
class VersionReading:
    """What a version string or image tag says about a build."""

    input: str
    """The text as given."""
    form: str
    """One of :data:`FORMS`."""
    channel: str
    """One of :data:`CHANNELS`."""
    engine: str | None = None
    """The engine (``vllm``, ``sglang``, ``tensorrt-llm``) the name belongs to, when known."""
    package: str | None = None
    """The distribution, for a wheel file name or ``NAME==VERSION``."""
    repository: str | None = None
    """The image repository, for an image reference."""
    tag: str | None = None
    """The image tag (an image reference without one means ``latest``)."""
    digest: str | None = None
    """The image digest, when the reference pins one."""
    tag_convention: str | None = None
    """The id of the tag convention the tag follows (``image_tags.toml``)."""
    floating: bool = False
    """Whether the tag is moved to newer builds."""
    version: str | None = None
    """The PEP 440 version, normalized."""
    public: str | None = None
    """The version without its local part."""
    base_version: str | None = None
    """The release alone (``0.26.1``)."""
    release: tuple[int, ...] = ()
    epoch: int = 0
    pre: tuple[str, int] | None = None
    """``("rc", 1)``, ``("a", 2)``, ``("b", 0)``."""
    post: int | None = None
    dev: int | None = None
    local: str | None = None
    """The local part after ``+`` (``g6f91edf96.d20260731``)."""
    commits_since_tag: int | None = None
    """For setuptools-scm versions: how many commits after the last tag (the dev number)."""
    commit: str | None = None
    """The source commit (abbreviated as written)."""
    build_date: str | None = None
    """``YYYY-MM-DD`` the build or image was made, when the name says."""
    dirty: bool = False
    """Built from a checkout with uncommitted changes (``.dYYYYMMDD``)."""
    official_build_possible: bool = True
    """False when no official image or wheel can carry this name (a local build)."""
    cuda: str | None = None
    """The CUDA version a variant names (``+cu126`` → ``12.6``)."""
    variant: str | None = None
    """Another build variant (``cpu``, ``rocm6.2``) or an image platform (``aarch64``, ``b200``)."""
    unknown_local_parts: tuple[str, ...] = ()
    """Local parts servewise does not know."""
    meaning: tuple[str, ...] = field(default_factory=tuple)
    """One sentence per thing the name tells, for a person."""

    @property
    def engine_version(self) -> EngineVersion | None:
        """The version as the shared :class:`EngineVersion`, when the name carries one."""
        return EngineVersion(Version(self.version), self.version) if self.version else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with stable keys."""
        data = asdict(self)
        data["release"] = list(self.release)
        data["pre"] = {"phase": self.pre[0], "number": self.pre[1]} if self.pre else None
        data["unknown_local_parts"] = list(self.unknown_local_parts)
        data["meaning"] = list(self.meaning)
        return data


def read_version(text: str, engines: EngineTable | None = None) -> VersionReading:
    """Read ``text`` (a version, tag, image reference, wheel file name or ``NAME==VERSION``).

    Raises :class:`~servewise.errors.UsageError` (exit 2) for text that is none of those.
    """
    table = engines or load_engine_table()
    given = text.strip()
    if not given or any(c.isspace() for c in given):
        raise _bad(text, "an empty string or one with spaces")
    name = given.rsplit("/", 1)[-1]
    if name.endswith(".whl"):
        return _wheel(given, name, table)
    requirement = _REQUIREMENT_RE.match(given)
    if requirement is not None:
        package = requirement["name"]
        engine = table.for_package(package)
        return _versioned(given, "requirement", requirement["version"], engine,
                          package=package)
    if "/" in given or "@" in given or ":" in given:
        return _reference(given, table)
    try:
        Version(given)
    except InvalidVersion:
        return _tag(given, "image-tag", given, None, table)
    return _versioned(given, "version", given, None)


def _bad(text: str, found: str) -> UsageError:
    return UsageError(f"cannot read {text!r} as a version or an image tag: {found}",
                      hint=_HINT, found=text)


def _wheel(given: str, name: str, table: EngineTable) -> VersionReading:
    # packaging.utils brings packaging.tags (platform and interpreter probing): only here.
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        package, version, _build, _tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, InvalidVersion) as error:
        raise _bad(given, f"not a valid wheel file name ({error})") from None
    engine = table.for_package(str(package))
    return _versioned(given, "wheel", str(version), engine, package=str(package))


def _reference(given: str, table: EngineTable) -> VersionReading:
    match = _REFERENCE_RE.match(given)
    if match is None:
        raise _bad(given, "not an image reference ([registry/]repository[:tag][@digest])")
    repository = match["repository"]
    engine = table.for_image(repository)
    base: dict[str, Any] = {
        "repository": normalize_repository(repository), "digest": match["digest"],
    }
    if match["tag"] is None and match["digest"] is not None:
        return VersionReading(
            given, "image-reference", "pinned", engine=engine.id if engine else None, **base,
            meaning=("pinned by digest: always exactly the same image; the name says nothing "
                     "about its version (inspect it to read the engine version inside)",),
        )
    tag = match["tag"] or "latest"
    reading = _tag(given, "image-reference", tag, engine, table, **base)
    if match["tag"] is None:
        return _with(reading, meaning=("no tag: Docker reads it as :latest",
                                       *reading.meaning))
    if match["digest"] is not None:
        return _with(reading, channel="pinned", floating=False, meaning=(
            *reading.meaning, "the digest pins the image: the tag is only a label here"))
    return reading


def _tag(
    given: str, form: str, tag: str, engine: Engine | None, table: EngineTable,
    **extra: Any,
) -> VersionReading:
    found = table.tag(engine.id if engine else None, tag)
    if found is None:
        if form == "image-tag":
            raise _bad(given, "neither a PEP 440 version nor a tag convention servewise knows")
        return VersionReading(
            given, form, "floating" if tag == "latest" else "release", tag=tag,
            engine=engine.id if engine else None, floating=tag == "latest", **extra,
            meaning=(f"tag {tag!r} follows no convention servewise knows; inspect the image "
                     "to read the engine version inside",),
        )
    convention, match = found
    owner = engine or table.get(convention.engine)
    groups = {k: v for k, v in match.groupdict().items() if v is not None}
    meaning = [convention.meaning]
    if owner is not None and engine is None and convention.engine != "any":
        meaning.append(f"the tag has the form {owner.name} uses")
    base: dict[str, Any] = {
        "tag": tag, "tag_convention": convention.id, "floating": convention.floating, **extra,
    }
    if "version" in groups:
        reading = _versioned(given, form, groups["version"], owner, **base)
        channel = reading.channel if convention.kind == "release" else convention.kind
        meaning += list(reading.meaning)
    else:
        reading = VersionReading(given, form, convention.kind,
                                 engine=owner.id if owner else None, **base)
        channel = convention.kind
    updates: dict[str, Any] = {"channel": channel}
    if "commit" in groups:
        updates["commit"] = groups["commit"]
        if owner is not None:
            meaning.append(f"commit {groups['commit']} of {owner.repository}")
    if "date" in groups:
        day = _date(groups["date"])
        if day is None:
            meaning.append(f"{groups['date']} reads like a date but is none")
        else:
            updates["build_date"] = day
            meaning.append(f"built on {day}")
    if "year" in groups:
        month = int(groups["month"])
        if not 1 <= month <= 12:
            raise _bad(given, f"month {groups['month']} of a YY.MM tag")
        updates["build_date"] = f"20{groups['year']}-{groups['month']}"
        meaning.append(f"the {updates['build_date']} monthly release")
    if "cuda" in groups:
        updates["cuda"] = _cuda(groups["cuda"])
        meaning.append(f"built for CUDA {updates['cuda']}")
    if "platform" in groups:
        updates["variant"] = groups["platform"]
        meaning.append(f"variant {groups['platform']}")
    updates["engine"] = owner.id if owner else reading.engine
    return _with(reading, meaning=tuple(dict.fromkeys(meaning)), **updates)


def _versioned(
    given: str, form: str, text: str, engine: Engine | None, **extra: Any
) -> VersionReading:
    try:
        version = Version(text)
    except InvalidVersion:
        raise _bad(given, f"{text!r} is not a PEP 440 version") from None
    meaning: list[str] = []
    fields: dict[str, Any] = {
        "version": str(version), "public": version.public, "base_version": version.base_version,
        "release": version.release, "epoch": version.epoch, "pre": version.pre,
        "post": version.post, "dev": version.dev, "local": version.local,
    }
    if version.epoch:
        meaning.append(f"epoch {version.epoch}: versions of this epoch sort after every "
                       "version of lower epochs")
    local = _local_parts(version.local, meaning)
    fields.update(local)
    scheme = engine.version_scheme if engine else None
    if version.dev is not None:
        day = _dev_date(version.dev) if scheme in ("date-dev", None) else None
        if day is not None:
            fields["build_date"] = fields.get("build_date") or day
            meaning.append(f"development build of {day} (dev number {version.dev}: the "
                           "nightly's date and build number)")
        else:
            target = re.sub(r"\.dev\d+$", "", version.public)
            if scheme == "setuptools-scm" or local.get("commit"):
                fields["commits_since_tag"] = version.dev
                meaning.append(f"development build {version.dev} commits after the last "
                               f"tag, heading for {target} (setuptools-scm)")
            else:
                meaning.append(f"development release {version.dev} of {target}")
    if version.pre is not None:
        phase = {"a": "alpha", "b": "beta", "rc": "release candidate"}[version.pre[0]]
        meaning.append(f"{phase} {version.pre[1]} of {version.base_version}")
    if version.post is not None:
        meaning.append(f"post-release {version.post} of {version.base_version} (a fix after "
                       "the release)")
    if local.get("commit") and engine is not None:
        meaning.append(f"commit {local['commit']} of {engine.repository}")
    channel = (
        "local-build" if local.get("dirty") else "development" if version.dev is not None
        else "pre-release" if version.pre is not None
        else "post-release" if version.post is not None else "release"
    )
    if channel == "release":
        meaning.insert(0, f"release {version.base_version}")
    if local.get("dirty"):
        where = (f"; official images of this commit, if any, are tagged "
                 f"nightly-<the full 40-hex commit starting {local['commit']}>"
                 if engine is not None and engine.id == "vllm" and local.get("commit") else "")
        meaning.insert(
            0,
            f"built on {local['build_date']} from a source checkout with uncommitted changes "
            f"(.d{local['build_date'].replace('-', '')[:8]}): a local build, so no official "
            f"image or wheel carries this version{where}"
        )
    return VersionReading(
        given, form, channel, engine=engine.id if engine else None,
        official_build_possible=not local.get("dirty"), meaning=tuple(meaning),
        **{**fields, **extra},
    )


def _local_parts(local: str | None, meaning: list[str]) -> dict[str, Any]:
    """Commit, dirty date, CUDA and other variants from a local version part."""
    found: dict[str, Any] = {}
    unknown: list[str] = []
    parts: list[str] = []
    for part in (local or "").split("."):
        # "rocm6.2" is one variant split by the dot: numbers after rocmN belong to it.
        if part.isdigit() and parts and re.fullmatch(r"rocm\d+(?:\.\d+)*", parts[-1]):
            parts[-1] += f".{part}"
        elif part:
            parts.append(part)
    for part in parts:
        commit = _COMMIT_PART.match(part)
        stamp = _DATE_PART.match(part)
        cuda = _CUDA_PART.match(part)
        if commit is not None:
            found["commit"] = commit["commit"]
        elif stamp is not None and _date(stamp["date"]) is not None:
            found["build_date"] = _date(stamp["date"])
            found["dirty"] = True
        elif cuda is not None:
            found["cuda"] = _cuda(cuda["cuda"])
            meaning.append(f"built for CUDA {found['cuda']}")
        elif _VARIANT_PART.match(part):
            found["variant"] = part
            meaning.append(f"the {part} build")
        else:
            unknown.append(part)
    if unknown:
        found["unknown_local_parts"] = tuple(unknown)
        meaning.append(f"local part(s) {', '.join(unknown)} servewise does not know")
    return found


def _date(text: str) -> str | None:
    """``YYYYMMDD`` as ``YYYY-MM-DD``, or None when it is no calendar date."""
    try:
        return datetime.datetime.strptime(text[:8], "%Y%m%d").date().isoformat()
    except ValueError:
        return None


def _dev_date(dev: int) -> str | None:
    """A dev number that is a date: ``YYYYMMDD`` or ``YYYYMMDDNN`` (a build number after it)."""
    text = str(dev)
    if len(text) not in (8, 10) or not text.startswith("20"):
        return None
    return _date(text[:8])


def _cuda(digits: str) -> str:
    """``126`` → ``12.6``; ``130`` → ``13.0``; ``118`` → ``11.8``."""
    return f"{int(digits[:-1])}.{digits[-1]}"


def _with(reading: VersionReading, **changes: Any) -> VersionReading:
    return dataclasses.replace(reading, **changes)


__all__ = ["CHANNELS", "FORMS", "TagConvention", "VersionReading", "read_version"]
