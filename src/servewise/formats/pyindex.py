"""Package indexes: PEP 691 (JSON) and PEP 503 (HTML) project pages, and wheel file names.

Pure parsers: a project page's bytes in, its files out; a wheel's file name in, its
name, version and tags out (PEP 427 / the binary distribution format spec).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion

from servewise.errors import FormatError

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
SIMPLE_HTML = "application/vnd.pypi.simple.v1+html"
ACCEPT = f"{SIMPLE_JSON}, {SIMPLE_HTML};q=0.2, text/html;q=0.01"
#: Largest project page read.
MAX_PAGE_BYTES = 64 * 2**20



def normalize_name(name: str) -> str:
    """PEP 503 normalised project name (``Flash_Attn`` → ``flash-attn``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class WheelName:
    """What a wheel's file name says."""

    name: str
    version: str
    build: str
    python: tuple[str, ...]
    abi: tuple[str, ...]
    platform: tuple[str, ...]

    def supports(self, arch: str | None, exact_platform: str | None = None) -> bool:
        """Whether it installs on Linux for ``arch`` (``x86_64``), or has ``exact_platform``."""
        if exact_platform is not None:
            return exact_platform in self.platform
        return any(tag == "any" or (tag.startswith(("manylinux", "musllinux", "linux_"))
                                    and tag.endswith("_" + (arch or "")))
                   for tag in self.platform)

    def rank(self) -> tuple[int, int, int]:
        """Higher is preferred: manylinux over linux over musllinux over pure; abi3; newest cp."""
        plat = max(3 if t.startswith("manylinux") else 2 if t.startswith("linux_") else
                   1 if t.startswith("musllinux") else 0 for t in self.platform)
        abi3 = 1 if "abi3" in self.abi else 0
        cpython = max((int(t[2:]) for t in self.python if t.startswith("cp") and t[2:].isdigit()),
                      default=0)
        return plat, abi3, cpython


def parse_wheel_name(filename: str) -> WheelName | None:
    """A wheel's name and tags (``packaging``'s parser); ``None`` when it is not a wheel's."""
    try:
        name, version, build, tags = parse_wheel_filename(filename.rsplit("/", 1)[-1])
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return WheelName(
        name=str(name),
        version=str(version),
        build="".join(str(part) for part in build),
        python=tuple(sorted({tag.interpreter for tag in tags})),
        abi=tuple(sorted({tag.abi for tag in tags})),
        platform=tuple(sorted({tag.platform for tag in tags})),
    )


@dataclass(frozen=True)
class IndexFile:
    """One file of a project on an index."""

    filename: str
    url: str
    sha256: str | None = None
    size: int | None = None
    upload_time: str | None = None
    yanked: bool = False

    @functools.cached_property
    def wheel(self) -> WheelName | None:
        """Its wheel name, when it is a wheel (parsed once)."""
        return parse_wheel_name(self.filename)


def _hash_from_fragment(url: str) -> tuple[str, str | None]:
    parts = urlsplit(url)
    if parts.fragment.startswith("sha256="):
        return url.split("#", 1)[0], parts.fragment[len("sha256="):].lower()
    return url.split("#", 1)[0], None


def parse_simple_json(data: bytes, base_url: str) -> list[IndexFile]:
    """A PEP 691 JSON project page."""
    try:
        doc: Any = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise FormatError("project page", offset=0, expected="PEP 691 JSON",
                          found=str(error)[:120]) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise FormatError("project page", offset=0, expected="an object with a 'files' list",
                          found=repr(doc)[:80])
    found: list[IndexFile] = []
    for entry in doc["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str) \
                or not isinstance(entry.get("url"), str):
            raise FormatError("project page file", offset=0, expected="filename and url",
                              found=repr(entry)[:80])
        url, fragment_hash = _hash_from_fragment(urljoin(base_url, entry["url"]))
        raw_hashes = entry.get("hashes")
        hashes: dict[str, Any] = raw_hashes if isinstance(raw_hashes, dict) else {}
        size = entry.get("size")
        found.append(IndexFile(
            filename=entry["filename"], url=url,
            sha256=str(hashes.get("sha256") or fragment_hash or "") or None,
            size=size if isinstance(size, int) and not isinstance(size, bool) else None,
            upload_time=entry.get("upload-time") if isinstance(entry.get("upload-time"), str)
            else None,
            yanked=bool(entry.get("yanked")),
        ))
    return found


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[dict[str, str | None], str]] = []
        self._current: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._current, self._text = dict(attrs), []

    def handle_data(self, data: str) -> None:
        if self._current is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._current is not None:
            self.found.append((self._current, "".join(self._text).strip()))
            self._current = None


def parse_simple_html(data: bytes, base_url: str) -> list[IndexFile]:
    """A PEP 503 HTML project page: one anchor per file, hashes in the URL fragment."""
    parser = _Anchors()
    parser.feed(data.decode("utf-8", "replace"))
    found: list[IndexFile] = []
    for attrs, text in parser.found:
        href = attrs.get("href")
        if not href:
            continue
        url, sha256 = _hash_from_fragment(urljoin(base_url, href))
        found.append(IndexFile(filename=text or url.rsplit("/", 1)[-1], url=url, sha256=sha256,
                               yanked="data-yanked" in attrs))
    return found


__all__ = ["ACCEPT", "MAX_PAGE_BYTES", "SIMPLE_HTML", "SIMPLE_JSON", "IndexFile", "WheelName",
           "normalize_name", "parse_simple_html", "parse_simple_json", "parse_wheel_name"]
