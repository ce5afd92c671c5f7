"""``pypi:NAME==VERSION``: a wheel chosen from a package index and read remotely.

The index is spoken to through the simple API: PEP 691 JSON when it offers it, PEP
503 HTML otherwise (both give each file's URL and sha256). The index is
``--index-url``, else ``$PIP_INDEX_URL``, else PyPI. Among a version's wheels the
one for Linux on the platform's architecture is taken (``--platform``, default
linux/amd64; a wheel platform tag such as ``manylinux_2_28_aarch64`` is accepted
too), preferring manylinux, then abi3, then the newest CPython.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from servewise.errors import FormatError, RateLimitError, RegistryError, SourceError, UsageError
from servewise.formats import pyindex
from servewise.formats.oci import parse_platform
from servewise.sources._http import httpx
from servewise.sources.deadline import Deadline, current_deadline, host_of, send
from servewise.sources.remote_wheel import (
    RemoteWheelSource,
    StreamedWheelSource,
    open_remote_wheel,
)

PYPI = "https://pypi.org/simple/"
#: OCI CPU architecture (``--platform linux/arm64``) → the machine name wheel tags use.
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x"}


def index_url(explicit: str | None) -> str:
    """The simple-API root to use."""
    url = explicit or os.environ.get("PIP_INDEX_URL") or PYPI
    return url if url.endswith("/") else url + "/"


def wheel_machine(platform: str | None) -> tuple[str | None, str | None]:
    """``(CPU machine name, exact wheel platform tag)`` for ``--platform``: ``x86_64`` for
    ``linux/amd64`` (a CPU, never a CUDA arch)."""
    if platform and "/" not in platform:
        return None, platform  # a wheel platform tag, e.g. manylinux_2_28_aarch64
    wanted = parse_platform(platform or "linux/amd64")
    return _MACHINE.get(wanted.architecture, wanted.architecture), None


def parse_pypi_ref(ref: str) -> tuple[str, str | None]:
    """``pypi:NAME[==VERSION]`` as ``(normalised name, version)``."""
    text = ref[len("pypi:"):] if ref.startswith("pypi:") else ref
    name, sep, version = text.partition("==")
    name = name.strip()
    if not name or (sep and not version.strip()):
        raise UsageError(f"{ref!r} is not pypi:NAME==VERSION", found=ref,
                         hint="e.g. pypi:vllm==0.33.0")
    return pyindex.normalize_name(name), version.strip() or None


def project_files(name: str, index: str, deadline: Deadline | None = None
                  ) -> list[pyindex.IndexFile]:
    """Every file the index lists for a project, within ``deadline``."""
    url = f"{index}{name}/"
    deadline = deadline or current_deadline()
    try:
        with httpx.Client(follow_redirects=True) as client:
            answer = send(client, client.build_request("GET", url,
                                                       headers={"Accept": pyindex.ACCEPT}),
                          deadline, host=host_of(url), what=f"the index page of {name}")
    except httpx.TransportError as error:
        raise RegistryError(f"cannot reach the package index {index}: {error}", url=url,
                            hint="check --index-url and the network") from None
    if answer.status_code == 404:
        raise RegistryError(f"the index {index} has no project {name!r}", url=url,
                            hint="check the name", status=404)
    if answer.status_code == 429:
        wait = answer.headers.get("retry-after", "")
        raise RateLimitError(f"the index {index} is rate-limiting requests (HTTP 429)",
                             url=url, hint="wait and run again",
                             retry_after_s=int(wait) if wait.isdigit() else None)
    if answer.status_code != 200:
        raise RegistryError(f"{url}: HTTP {answer.status_code}", url=url,
                            hint="try again later", status=answer.status_code)
    if len(answer.content) > pyindex.MAX_PAGE_BYTES:
        raise SourceError(f"{url}: the project page is larger than servewise reads", url=url,
                          hint="this is not a normal package index")
    kind = answer.headers.get("content-type", "")
    try:
        if pyindex.SIMPLE_JSON in kind or kind.startswith("application/json"):
            return pyindex.parse_simple_json(answer.content, str(answer.url))
        return pyindex.parse_simple_html(answer.content, str(answer.url))
    except FormatError as error:
        raise SourceError(f"{url}: {error.message}", url=url,
                          hint="the index serves a page servewise cannot read") from None


@dataclass(frozen=True)
class Release:
    """One version of a project, with the wheel chosen for the platform."""

    name: str
    version: str
    wheel: pyindex.IndexFile | None
    uploaded: str | None
    """Earliest upload time among the version's files (PEP 700), when the index gives it."""
    platforms: tuple[str, ...]
    """The platform tags of its wheels (for the error when none fits)."""


def _version_key(text: str) -> tuple[int, Version | str]:
    try:
        return 0, Version(text)
    except InvalidVersion:
        return 1, text


def releases(name: str, index: str, platform: str | None, *,
             deadline: Deadline | None = None) -> list[Release]:
    """Every version that has wheels, in version order, each with its best wheel."""
    machine, exact = wheel_machine(platform)
    by_version: dict[str, list[pyindex.IndexFile]] = {}
    for file in project_files(name, index, deadline):
        wheel = file.wheel
        if wheel is None or file.yanked:
            continue
        by_version.setdefault(wheel.version, []).append(file)
    found: list[Release] = []
    for version in sorted(by_version, key=_version_key):
        files = by_version[version]
        fitting = [f for f in files if f.wheel is not None and f.wheel.supports(machine, exact)]
        best = max(fitting, key=lambda f: f.wheel.rank() if f.wheel else (0, 0, 0),
                   default=None)
        times = [f.upload_time for f in files if f.upload_time]
        platforms = sorted({t for f in files if f.wheel for t in f.wheel.platform})
        found.append(Release(name, version, best, min(times) if times else None,
                             tuple(platforms)))
    return found


def _same_version(a: str, b: str) -> bool:
    key_a, key_b = _version_key(a), _version_key(b)
    return key_a == key_b


def open_release(release: Release, ref: str, platform: str | None,
                 deadline: Deadline | None = None) -> RemoteWheelSource | StreamedWheelSource:
    """The chosen wheel of one release, read remotely."""
    if release.wheel is None:
        raise SourceError(
            f"{release.name} {release.version} has no wheel for "
            f"{platform or 'linux/amd64'}; its wheels are for {', '.join(release.platforms)}",
            hint="pick one with --platform (linux/arm64, or a wheel platform tag)",
            platforms=list(release.platforms),
        )
    wheel = release.wheel
    return open_remote_wheel(ref, wheel.url, expected_sha256=wheel.sha256, deadline=deadline,
                             metadata={
        "package": release.name, "version": release.version, "filename": wheel.filename,
        "sha256": wheel.sha256, "uploaded": release.uploaded,
    })


def open_pypi(ref: str, options: Any) -> RemoteWheelSource | StreamedWheelSource:
    """The resolver's opener for ``pypi:NAME==VERSION``."""
    name, version = parse_pypi_ref(ref)
    if version is None:
        raise UsageError(f"{ref} names no version", found=ref,
                         hint=f"give one, e.g. pypi:{name}==VERSION; `servewise bisect "
                         f"pypi:{name}` walks all of them")
    platform = getattr(options, "platform", None)
    index = index_url(getattr(options, "index_url", None))
    deadline = getattr(options, "deadline", None) or current_deadline()
    for release in releases(name, index, platform, deadline=deadline):
        if _same_version(release.version, version):
            return open_release(release, ref, platform, deadline)
    raise RegistryError(f"{name} {version} is not on {index}", hint="check the version",
                        url=index)


__all__ = ["PYPI", "Release", "index_url", "open_pypi", "open_release", "parse_pypi_ref",
           "project_files", "releases", "wheel_machine"]
