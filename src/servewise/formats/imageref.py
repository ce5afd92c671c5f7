"""Image references: ``[registry/]repo[:tag|@digest]``, normalised the way Docker does.

``vllm/vllm-openai:nightly`` is ``docker.io/vllm/vllm-openai:nightly``; ``ubuntu`` is
``docker.io/library/ubuntu:latest``; the first component names a registry only when
it holds a ``.`` or a ``:`` or is ``localhost`` (grammar of distribution/reference).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from servewise.errors import FormatError

DOCKER_HUB = "docker.io"
#: Where Docker Hub's registry API answers.
DOCKER_HUB_API = "registry-1.docker.io"

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REPO_RE = re.compile(rf"^{_COMPONENT}(?:/{_COMPONENT})*$")
_TAG_RE = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST_RE = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$")
_HOST_RE = re.compile(
    r"^(?:\[[0-9a-fA-F:.]+\]|[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?)(?::\d{1,5})?$"
)


@dataclass(frozen=True)
class ImageReference:
    """A parsed, normalised image reference."""

    registry: str
    """``docker.io``, ``ghcr.io``, ``127.0.0.1:5000``."""
    repository: str
    """``vllm/vllm-openai``, ``library/ubuntu``."""
    tag: str | None = None
    digest: str | None = None

    @property
    def reference(self) -> str:
        """What to ask the registry for: the digest when given, else the tag."""
        return self.digest or self.tag or "latest"

    @property
    def api_host(self) -> str:
        """Host (and port) of the registry's HTTP API."""
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def is_loopback(self) -> bool:
        """A registry on this machine (``localhost``, 127.0.0.0/8, ``::1``): plain HTTP allowed."""
        host = self.registry.rsplit(":", 1)[0] if not self.registry.startswith("[") \
            else self.registry[1:].split("]", 1)[0]
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def with_reference(self, tag: str | None = None, digest: str | None = None) -> ImageReference:
        """The same repository at another tag or digest."""
        return ImageReference(self.registry, self.repository, tag, digest)

    def __str__(self) -> str:
        text = f"{self.registry}/{self.repository}"
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def looks_like_registry(component: str) -> bool:
    """Whether the first path component names a registry host."""
    return "." in component or ":" in component or component == "localhost"


def parse_reference(text: str, *, allow_bare: bool = False) -> ImageReference:
    """Parse ``[registry/]repo[:tag][@digest]``; ``allow_bare`` keeps a missing tag as None."""
    original = text
    text = text.strip()
    if text.startswith("docker://"):
        text = text[len("docker://"):]

    def bad(why: str) -> FormatError:
        return FormatError("image reference", offset=0,
                           expected="[registry/]repository[:tag|@digest], e.g. "
                           "vllm/vllm-openai:nightly", found=f"{original!r} ({why})")

    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
        if not _DIGEST_RE.match(digest):
            raise bad("the digest is not algorithm:hex")
    registry = DOCKER_HUB
    first, slash, rest = text.partition("/")
    if slash and looks_like_registry(first):
        if not _HOST_RE.match(first):
            raise bad("the registry host is malformed")
        registry = first
        text = rest
    tag = None
    last_slash = text.rfind("/")
    colon = text.rfind(":")
    if colon > last_slash:
        text, tag = text[:colon], text[colon + 1:]
        if not _TAG_RE.match(tag):
            raise bad("the tag has characters other than letters, digits, '_', '.', '-'")
    if registry in ("index.docker.io", "registry-1.docker.io"):
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in text:
        text = f"library/{text}"
    if not _REPO_RE.match(text):
        raise bad("repository names are lowercase letters, digits and . _ - separated by /")
    if tag is None and digest is None and not allow_bare:
        tag = "latest"
    return ImageReference(registry, text, tag, digest)


__all__ = ["DOCKER_HUB", "DOCKER_HUB_API", "ImageReference", "looks_like_registry",
           "parse_reference"]
