"""A model on the Hugging Face Hub: metadata and safetensors headers, never the weights.

Everything goes through ``huggingface_hub`` (its endpoint — ``HF_ENDPOINT`` —, its HTTP
session, its token handling — ``HF_TOKEN`` or the saved login —, its errors and its
``HF_HUB_OFFLINE`` switch):

1. ``HfApi.model_info(files_metadata=True)``: the commit and every file with its size;
2. ``config.json`` (and ``hf_quant_config.json``, ``model.safetensors.index.json``);
3. per shard, one ranged GET of the first :data:`SPECULATIVE_BYTES` bytes, which holds the
   whole header for nearly every shard, and a second ranged GET for the rest of the header
   only when it is longer: at most two ranged reads per shard, in parallel.

What was read is kept in the store under the repository and both the asked-for revision
and the commit, so the same commit is never read twice and ``HF_HUB_OFFLINE=1`` plans
from the store.
"""

from __future__ import annotations

import importlib
import json
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import TYPE_CHECKING, Any

from servewise.errors import SourceError
from servewise.formats.checkpoint import Checkpoint, WeightTensor, collapse
from servewise.formats.hfconfig import config_from_mapping, parse_config, parse_quant_config
from servewise.formats.safetensors import (
    INDEX_FILE,
    MAX_HEADER_BYTES,
    PREFIX_BYTES,
    header_length,
    parse_header,
    parse_index,
)
from servewise.sources.deadline import Deadline, current_deadline, host_of
from servewise.sources.model_folder import BUNDLED_CARD as BUNDLED_CARD  # hints name it
from servewise.sources.model_folder import MAX_CONFIG_BYTES

if TYPE_CHECKING:
    from servewise.store import Store

#: Bytes asked for in the first ranged read of a shard (header length + most headers).
SPECULATIVE_BYTES = 512 * 1024
#: Shards read at once.
WORKERS = 8
#: Bumped when what is stored changes shape.
READER_VERSION = 1
SINGLE_FILE = "model.safetensors"


class HubReader:
    """Reads model metadata from a Hub (``endpoint`` defaults to ``HF_ENDPOINT``)."""

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        token: str | bool | None = None,
        store: Store | None = None,
        max_header_bytes: int = MAX_HEADER_BYTES,
        deadline: Deadline | None = None,
    ) -> None:
        from huggingface_hub import HfApi, constants

        self.api = HfApi(endpoint=endpoint, token=token)
        self.endpoint = self.api.endpoint or constants.ENDPOINT
        self.token = token
        self.store = store
        self.max_header_bytes = max_header_bytes
        self.deadline = deadline or current_deadline()
        self.host = host_of(self.endpoint)
        _no_hidden_fetch()

    # ---------------------------------------------------------------- HTTP helpers

    def _headers(self) -> dict[str, str]:
        from huggingface_hub.utils._headers import build_hf_headers

        return dict(build_hf_headers(token=self.token, library_name="servewise"))

    def _url(self, repo: str, filename: str, revision: str) -> str:
        from huggingface_hub import hf_hub_url

        return str(hf_hub_url(repo, filename, revision=revision, endpoint=self.endpoint))

    def _get(self, repo: str, filename: str, revision: str,
             byte_range: tuple[int, int] | None = None) -> tuple[bytes, int | None]:
        """A file's bytes (or a range of them) and the total size a range reply states."""
        from huggingface_hub import get_session, hf_raise_for_status

        headers = self._headers()
        if byte_range is not None:
            headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
        what = f"{repo}/{filename}"
        limit = self.deadline.wait_limit()
        try:
            self.deadline.check(self.host, what)
            with self.deadline.waiting(self.host, what):
                response = get_session().get(self._url(repo, filename, revision),
                                             headers=headers, timeout=limit,
                                             follow_redirects=True)
            hf_raise_for_status(response)
        except _hub_failures() as exc:
            raise self._error(exc, repo, filename, limit) from exc
        total = None
        content_range = response.headers.get("Content-Range", "")
        if "/" in content_range and content_range.rsplit("/", 1)[1].isdigit():
            total = int(content_range.rsplit("/", 1)[1])
        data = response.content
        if byte_range is not None and response.status_code == 200:
            # a server that ignores Range sends the whole file: keep what was asked for
            total = len(data)
            data = data[byte_range[0]: byte_range[1] + 1]
        return data, total

    def _error(self, exc: BaseException, repo: str, filename: str | None, limit: float
               ) -> SourceError:
        """A timeout as the deadline's error; anything else as :func:`_hub_error`."""
        what = f"{repo}/{filename}" if filename else f"the file list of {repo}"
        if isinstance(exc, _transport().TimeoutException):
            return self.deadline.timed_out(self.host, what, limit, exc)
        return _hub_error(exc, repo, filename)

    # ---------------------------------------------------------------------- reading

    def read(self, repo: str, revision: str | None = None) -> Checkpoint:
        """The :class:`Checkpoint` of ``repo`` at ``revision`` (default ``main``)."""
        from huggingface_hub import constants

        wanted = revision or "main"
        if constants.HF_HUB_OFFLINE:
            cached = self._cached(repo, wanted)
            if cached is None:
                raise SourceError(
                    f"HF_HUB_OFFLINE is set and the store has no metadata for {repo}@{wanted}",
                    hint="unset HF_HUB_OFFLINE once to read it, or give a local folder or "
                    f"{BUNDLED_CARD}",
                    repo=repo, revision=wanted,
                )
            return cached
        limit = self.deadline.wait_limit()
        try:
            self.deadline.check(self.host, f"the file list of {repo}")
            with self.deadline.waiting(self.host, f"the file list of {repo}"):
                info = self.api.model_info(repo, revision=revision, files_metadata=True,
                                           timeout=limit)
        except _hub_failures() as exc:
            raise self._error(exc, repo, None, limit) from exc
        sha = str(info.sha or wanted)
        cached = self._cached(repo, sha)
        if cached is not None:
            return cached
        sizes = {s.rfilename: s.size for s in (info.siblings or []) if s.rfilename}
        model = self._read_files(repo, sha, sizes)
        self._remember(repo, wanted, sha, model)
        return model

    def _read_files(self, repo: str, sha: str, sizes: dict[str, int | None]) -> Checkpoint:
        if "config.json" not in sizes:
            raise SourceError(f"{repo} has no config.json",
                              hint="is this a model repository?", repo=repo)
        if (sizes.get("config.json") or 0) > MAX_CONFIG_BYTES:
            raise SourceError(f"{repo}/config.json is {sizes['config.json']} bytes, more than "
                              "a config.json can be", expected=f"at most {MAX_CONFIG_BYTES} "
                              "bytes", found=f"{sizes['config.json']} bytes", hint="check the "
                              "repository id: this is not a model's config")
        config_bytes, _ = self._get(repo, "config.json", sha)
        config = parse_config(config_bytes, source=f"{repo}/config.json")
        quant = None
        if "hf_quant_config.json" in sizes:
            data, _ = self._get(repo, "hf_quant_config.json", sha)
            quant = parse_quant_config(data, source=f"{repo}/hf_quant_config.json")
        if INDEX_FILE in sizes:
            data, _ = self._get(repo, INDEX_FILE, sha)
            shards = list(parse_index(data, source=f"{repo}/{INDEX_FILE}").files)
            missing = [name for name in shards if name not in sizes]
            if missing:
                raise SourceError(
                    f"{repo}: the index names {len(missing)} shard(s) the repository lacks: "
                    + ", ".join(missing[:5]),
                    hint="the repository is incomplete; try another revision", missing=missing,
                )
        else:
            shards = sorted(name for name in sizes if name.endswith(".safetensors"))
        if not shards:
            raise SourceError(
                f"{repo} has no safetensors weights",
                hint="servewise reads safetensors headers; use a card or a local folder",
                repo=repo,
            )
        with ThreadPoolExecutor(max_workers=min(WORKERS, len(shards))) as pool:
            headers = list(pool.map(lambda name: self._shard(repo, sha, name, sizes.get(name)),
                                    shards))
        rows = [row for header_rows, _ in headers for row in header_rows]
        return Checkpoint(
            ref=repo,
            source="hub",
            config=config,
            tensors=tuple(collapse(rows)),
            files=len(shards),
            file_bytes=sum(size for _, size in headers),
            provenance=(f"{self.endpoint.rstrip('/')}/{repo} @ {sha}",),
            quant_config=quant,
            revision=sha,
        )

    def _shard(self, repo: str, sha: str, name: str, size: int | None
               ) -> tuple[list[tuple[str, str, tuple[int, ...], int]], int]:
        source = f"{repo}/{name}"
        first, total = self._get(repo, name, sha, (0, SPECULATIVE_BYTES - 1))
        size = size if size is not None else total
        length = header_length(first[:PREFIX_BYTES], limit=self.max_header_bytes, source=source,
                               file_size=size)
        end = PREFIX_BYTES + length
        data = first[PREFIX_BYTES:end]
        if len(first) < end:
            rest, _ = self._get(repo, name, sha, (len(first), end - 1))
            data = first[PREFIX_BYTES:] + rest
        header = parse_header(data, file_size=size, source=source)
        rows = [(t.name, t.dtype, t.shape, t.nbytes) for t in header.tensors]
        return rows, header.file_size

    # ------------------------------------------------------------------------ store

    def _key(self, repo: str) -> str:
        return f"{self.endpoint.rstrip('/')}/{repo}"

    def _cached(self, repo: str, revision: str) -> Checkpoint | None:
        if self.store is None:
            return None
        data = self.store.get_hub(self._key(repo), revision, READER_VERSION)
        if data is None:
            return None
        return checkpoint_from_stored(repo, data)

    def _remember(self, repo: str, wanted: str, sha: str, model: Checkpoint) -> None:
        if self.store is None:
            return
        data = stored_form(model)
        for revision in {wanted, sha}:
            self.store.put_hub(self._key(repo), revision, sha, READER_VERSION, data)


def stored_form(model: Checkpoint) -> dict[str, Any]:
    """What the store keeps for a Hub model (config, quant config, grouped tensors)."""
    return {
        "config": dict(model.config.raw),
        "quant_config": model.quant_config,
        "tensors": [[t.name, t.dtype, list(t.shape), t.nbytes, t.count] for t in model.tensors],
        "files": model.files,
        "file_bytes": model.file_bytes,
        "revision": model.revision,
        "provenance": list(model.provenance),
    }


def checkpoint_from_stored(repo: str, data: dict[str, Any]) -> Checkpoint:
    """Rebuild a :class:`Checkpoint` from :func:`stored_form`."""
    try:
        tensors = tuple(WeightTensor(str(n), str(d), tuple(int(x) for x in s), int(b), int(c))
                        for n, d, s, b, c in data["tensors"])
        return Checkpoint(
            ref=repo,
            source="hub",
            config=config_from_mapping(data["config"], source=f"{repo}/config.json (stored)"),
            tensors=tensors,
            files=int(data["files"]),
            file_bytes=int(data["file_bytes"]),
            provenance=(*tuple(data.get("provenance") or ()), "read from the local store"),
            quant_config=data.get("quant_config"),
            revision=data.get("revision"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SourceError(f"the stored metadata of {repo} is unreadable: {exc}",
                          hint="delete the store (SERVEWISE_CACHE_DIR) or read without it"
                          ) from None


def _no_hidden_fetch() -> None:
    """Keep huggingface_hub from a network wait outside the deadline.

    Its user-agent header names the AI agent running it, from a registry it fetches from
    the Hub once a day with its own 3-s timeout (``utils._detect_agent``), before the first
    request of a process and under no deadline of ours. servewise gives it the cached copy,
    or an empty one (no agent named); should that private module change, the fetch happens
    as before.
    """
    try:
        from huggingface_hub import constants
        from huggingface_hub.utils import _detect_agent as agent

        if agent._registry is None:
            cached = agent._read_cached_registry(constants.AGENT_HARNESSES_PATH, max_age=None)
            agent._registry = cached or agent._EMPTY_REGISTRY
    except (ImportError, AttributeError):  # pragma: no cover - another huggingface_hub
        return


def _transport() -> ModuleType:
    """The HTTP library huggingface_hub speaks through (``httpx2`` today, ``httpx`` in 1.x)."""
    try:
        return importlib.import_module("httpx2")
    except ImportError:  # pragma: no cover - huggingface_hub 1.x
        return importlib.import_module("httpx")


def _hub_failures() -> tuple[type[BaseException], ...]:
    """What a Hub request raises when the network, the server or the request fails.

    The HTTP library's errors (no connection, a timeout, an error status, which
    huggingface_hub raises as its own ``HfHubHTTPError`` kinds), an endpoint that is no
    URL, ``HF_HUB_OFFLINE``, a repository id the Hub refuses, and a reply that is not JSON
    (a proxy's page). Anything else is a bug and reaches the CLI's boundary as one.
    The :class:`SourceError` of the deadline passes through as it is.
    """
    from huggingface_hub import errors

    transport = _transport()
    return (transport.HTTPError, transport.InvalidURL, errors.OfflineModeIsEnabled,
            errors.HFValidationError, json.JSONDecodeError)


def _hub_error(exc: BaseException, repo: str, filename: str | None) -> SourceError:
    """A :class:`SourceError` naming what failed and what to try."""
    from huggingface_hub import errors

    what = f"{repo}/{filename}" if filename else repo
    hint: str | None = "check the repository id and your network (HF_ENDPOINT)"
    if isinstance(exc, errors.GatedRepoError):
        hint = "the repository is gated: accept its terms on the Hub and set HF_TOKEN"
    elif isinstance(exc, errors.RepositoryNotFoundError):
        hint = ("no such repository, or it is private: check the id, or set HF_TOKEN; "
                f"or give {BUNDLED_CARD}")
    elif isinstance(exc, errors.RevisionNotFoundError):
        hint = "no such revision (branch, tag or commit)"
    elif isinstance(exc, errors.OfflineModeIsEnabled):
        hint = "HF_HUB_OFFLINE is set; unset it to reach the Hub"
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return SourceError(f"cannot read {what} from the Hub: {message}", hint=hint, repo=repo)


def read_hub(repo: str, *, revision: str | None = None, store: Store | None = None,
             endpoint: str | None = None, token: str | bool | None = None,
             deadline: Deadline | None = None) -> Checkpoint:
    """Read ``repo`` (see :class:`HubReader`) within ``deadline`` (default: the current one)."""
    return HubReader(endpoint=endpoint, token=token, store=store,
                     deadline=deadline).read(repo, revision)

