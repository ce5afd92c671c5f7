"""``servewise tags``: a repository's tags with their created dates, oldest first.

Each tag is resolved to its manifest for one platform and its config blob, whose
``created`` field dates the build (tags carry no date of their own). Tags are
resolved on several threads; the registry is asked with ``HEAD`` first (which
Docker Hub does not count as a pull), and manifests and configs, immutable by
digest, are kept in the store per repository so a second listing fetches only
what changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from servewise.errors import DeadlineError, RateLimitError, ServewiseError, UsageError
from servewise.formats.imageref import ImageReference
from servewise.sources.deadline import Deadline
from servewise.sources.image import DEFAULT_PLATFORM
from servewise.sources.registry import (
    RegistryClient,
    ResolvedImage,
    parse_image_reference,
    resolve,
)
from servewise.store import Store

#: Threads resolving tags at once.
THREADS = 8
#: Bump when the kept documents change shape.
DOCUMENTS_VERSION = 1


@dataclass(frozen=True)
class TagInfo:
    """One tag, resolved to a platform's image."""

    tag: str
    created: str | None
    """RFC 3339 date from the config blob; ``None`` when the tag could not be resolved."""
    digest: str | None
    """What ``repo@digest`` pins (the index for multi-platform tags)."""
    manifest_digest: str | None
    platform: str | None
    error: str | None = None
    """Why the tag could not be resolved (no image for the platform, a broken manifest)."""
    image: ResolvedImage | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tag": self.tag, "created": self.created, "digest": self.digest,
            "manifest_digest": self.manifest_digest, "platform": self.platform,
            "error": self.error,
        }


@dataclass(frozen=True)
class TagList:
    """A repository's tags, oldest first; unresolvable tags last."""

    repository: str
    platform: str
    tags: tuple[TagInfo, ...]
    match: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"repository": self.repository, "platform": self.platform, "match": self.match,
                "tags": [tag.to_dict() for tag in self.tags]}


def _documents_key(reference: ImageReference) -> str:
    return f"documents:{reference.registry}/{reference.repository}"


def load_documents(store: Store | None, reference: ImageReference) -> dict[str, bytes]:
    """The manifests and configs of a repository kept in the store."""
    if store is None:
        return {}
    found = store.get_scans([_documents_key(reference)], DOCUMENTS_VERSION)
    data = found.get(_documents_key(reference), {})
    return {key: text.encode("latin-1") for key, text in data.items() if isinstance(text, str)}


def save_documents(store: Store | None, reference: ImageReference,
                   documents: dict[str, bytes]) -> None:
    """Keep a repository's manifests and configs (immutable by digest) in the store."""
    if store is not None:
        store.put_scan(_documents_key(reference), DOCUMENTS_VERSION,
                       {key: data.decode("latin-1") for key, data in documents.items()})


def compile_match(match: str | None) -> re.Pattern[str] | None:
    """The ``--match`` expression, or a usage error saying what is wrong with it."""
    if match is None:
        return None
    try:
        return re.compile(match)
    except re.error as error:
        raise UsageError(f"--match {match!r} is not a regular expression: {error}",
                         hint="e.g. --match '^nightly-'", found=match) from None


def date_order(tags: list[TagInfo]) -> list[TagInfo]:
    """Oldest first; tags without a date last, by name."""
    return sorted(tags, key=lambda t: (t.created is None, t.created or "", t.tag))


def resolve_tags(
    client: RegistryClient, reference: ImageReference, names: list[str], platform: str | None,
    documents: dict[str, bytes], progress: Callable[[str], None] | None = None,
) -> list[TagInfo]:
    """Resolve each tag on several threads; a tag that fails keeps its error."""

    def one(name: str) -> TagInfo:
        try:
            image = resolve(client, reference.with_reference(tag=name), platform, documents)
        except ServewiseError as error:
            if isinstance(error, (RateLimitError, DeadlineError)):
                raise
            return TagInfo(name, None, None, None, None, error=error.message)
        if progress:
            progress(name)
        return TagInfo(name, image.config.created, image.digest, image.manifest_digest,
                       str(image.config.platform), image=image)

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return list(pool.map(one, names))


def list_tags(
    repo: str,
    *,
    match: str | None = None,
    platform: str | None = None,
    insecure: bool = False,
    store: Store | None = None,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> TagList:
    """Every tag of ``repo`` (matching ``match``), with created dates, oldest first."""
    reference = parse_image_reference(repo, allow_bare=True)
    if reference.tag or reference.digest:
        raise UsageError(f"{repo} names one image; `tags` takes a repository",
                         hint=f"drop the tag: servewise tags {reference.registry}/"
                         f"{reference.repository}", found=repo)
    pattern = compile_match(match)
    documents = load_documents(store, reference)
    with RegistryClient.connect(reference, insecure=insecure, deadline=deadline) as client:
        names = [t for t in client.tags() if pattern is None or pattern.search(t)]
        infos = resolve_tags(client, reference, names, platform, documents, progress)
    save_documents(store, reference, documents)
    return TagList(f"{reference.registry}/{reference.repository}", platform or DEFAULT_PLATFORM,
                   tuple(date_order(infos)), match)


__all__ = ["TagInfo", "TagList", "compile_match", "date_order", "list_tags", "load_documents",
           "resolve_tags", "save_documents"]
