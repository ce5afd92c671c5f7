"""Images straight from a registry, over the OCI distribution API; no Docker daemon.

:class:`RegistryClient` speaks the API with httpx: manifests negotiated with every
index and manifest type, blobs streamed (redirects to a CDN followed without the
registry's credentials, as httpx drops ``Authorization`` across origins), tag
lists paginated. Authentication follows the 401 challenge: Docker Hub's anonymous
token flow, any bearer realm (with credentials from the Docker config when it has
them), or basic auth. HTTPS is the default; a registry on this machine is spoken
to in plain HTTP, as Docker allows; ``--insecure`` allows unverified TLS and plain
HTTP for others. Every request keeps the command's :class:`~servewise.sources.deadline.Deadline`
and its one retry policy (:func:`~servewise.sources.deadline.send`): a dropped connection,
429 and 502/503/504 are retried when the pause fits the deadline, a timeout never; a 429
that cannot be waited for is reported with when to retry.

Manifests and configs are limited in size and checked against their digests; a
registry that lies about a digest or a size is an :class:`IntegrityError`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, replace
from typing import Any

from servewise.errors import FormatError, IntegrityError, RateLimitError, RegistryError, SourceError
from servewise.formats import oci
from servewise.formats.imageref import ImageReference, parse_reference
from servewise.sources._http import httpx
from servewise.sources.auth import Challenge, Credentials, credentials_for, parse_challenge
from servewise.sources.deadline import Deadline, current_deadline, guarded, host_of, send
from servewise.sources.image import ImageSource, choose_platform, image_metadata, layer_units
from servewise.sources.interface import CHUNK_SIZE

#: Most tags listed from one repository.
MAX_TAGS = 100_000
USER_AGENT = "servewise (OCI distribution client)"

#: Cache of immutable documents by key (``manifest:<digest>``, ``blob:<digest>``).
DocumentCache = MutableMapping[str, bytes]


@dataclass(frozen=True)
class RegistryAccess:
    """How to reach one repository: a picklable value worker processes rebuild a client from."""

    registry: str
    """As in the reference (``docker.io``, ``127.0.0.1:5000``)."""
    base_url: str
    """``https://registry-1.docker.io`` or ``http://127.0.0.1:5000``."""
    repository: str
    verify: bool = True
    credentials: Credentials | None = None
    authorization: str | None = None
    """The last ``Authorization`` value that worked."""
    deadline: Deadline | None = None
    """The command's deadline (travels to worker processes without its callback)."""


def _error_codes(response: httpx.Response) -> list[str]:
    try:
        doc = json.loads(response.read()[:65536])
        return [str(e.get("code", "")) for e in doc.get("errors", []) if isinstance(e, dict)]
    except (ValueError, AttributeError, httpx.HTTPError):
        return []


def _retry_after(response: httpx.Response) -> float | None:
    from servewise.sources.deadline import retry_after

    return retry_after(response)


class RegistryClient:
    """An HTTP client for one repository of one registry."""

    def __init__(self, access: RegistryAccess) -> None:
        self.access = access
        self._authorization = access.authorization
        self.deadline = access.deadline or current_deadline()
        self._client = httpx.Client(
            verify=access.verify, follow_redirects=True,
            timeout=httpx.Timeout(self.deadline.wait_s), headers={"User-Agent": USER_AGENT},
        )

    @classmethod
    def connect(cls, reference: ImageReference, *, insecure: bool = False,
                deadline: Deadline | None = None) -> RegistryClient:
        """A client for ``reference``'s repository, with the scheme Docker would use."""
        credentials = credentials_for(reference.registry)
        deadline = deadline or current_deadline()
        if reference.is_loopback:
            base, verify = f"http://{reference.api_host}", False
        elif insecure:
            base, verify = f"https://{reference.api_host}", False
            try:
                with httpx.Client(verify=False) as probe:
                    send(probe, probe.build_request("GET", f"{base}/v2/"), deadline,
                         host=reference.api_host, what="the HTTPS check of --insecure",
                         retries=0).close()
            except httpx.TransportError:
                base = f"http://{reference.api_host}"
        else:
            base, verify = f"https://{reference.api_host}", True
        return cls(RegistryAccess(reference.registry, base, reference.repository, verify,
                                  credentials, deadline=deadline))

    def close(self) -> None:
        """Close the connections."""
        self._client.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def current_access(self) -> RegistryAccess:
        """The access with the authorization that works now (for worker processes)."""
        return replace(self.access, authorization=self._authorization, deadline=self.deadline)

    def _where(self, what: str = "") -> str:
        return f"{self.access.registry}/{self.access.repository}{what}"

    # -- requests ------------------------------------------------------------

    def request(self, method: str, path: str, *, headers: dict[str, str] | None = None,
                stream: bool = False, what: str = "") -> httpx.Response:
        """Send a request with authentication, the deadline and the retry policy."""
        url = path if path.startswith(("http://", "https://")) else self.access.base_url + path
        waited_for = what or f"{method} {httpx.URL(url).path}"
        authenticated = False
        while True:
            sent = dict(headers or {})
            if self._authorization:
                sent["Authorization"] = self._authorization
            try:
                response = send(self._client, self._client.build_request(method, url,
                                                                         headers=sent),
                                self.deadline, host=host_of(url), what=waited_for,
                                stream=stream)
            except httpx.TransportError as error:
                raise RegistryError(
                    f"cannot reach {self.access.base_url}: {error}",
                    hint="check the registry name and the network; a registry with plain HTTP "
                    "or a self-signed certificate needs --insecure",
                    registry=self.access.registry,
                ) from None
            if response.status_code == 401 and not authenticated:
                challenge = parse_challenge(response.headers.get("www-authenticate", ""))
                response.close()
                if challenge is None:
                    raise self._denied(401)
                self._authorization = self._authenticate(challenge)
                authenticated = True
                continue
            if response.status_code == 429:
                wait = _retry_after(response)
                response.close()
                raise RateLimitError(
                    f"{self.access.registry} is rate-limiting requests (HTTP 429)"
                    + (f"; retry in {wait:.0f} s" if wait is not None else ""),
                    hint="wait and run again; `docker login` raises Docker Hub's limit, and "
                    "servewise's store avoids asking twice for what it has",
                    registry=self.access.registry,
                    retry_after_s=round(wait) if wait is not None else None,
                )
            return response

    def _denied(self, status: int) -> RegistryError:
        login = "" if self.access.credentials else "; log in with `docker login " \
            f"{self.access.registry}` if it is private"
        return RegistryError(
            f"{self._where()}: access denied (HTTP {status})",
            hint=f"check the repository name{login}",
            registry=self.access.registry, repository=self.access.repository, status=status,
        )

    def _authenticate(self, challenge: Challenge) -> str:
        creds = self.access.credentials
        if challenge.scheme == "basic":
            if creds is None or not creds.username:
                raise RegistryError(
                    f"{self.access.registry} asks for a user name and password",
                    hint=f"run `docker login {self.access.registry}`; servewise reads "
                    "~/.docker/config.json", registry=self.access.registry,
                )
            secret = base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode()
            return f"Basic {secret}"
        realm = challenge.get("realm")
        if not realm:
            raise RegistryError(f"{self.access.registry} sent a bearer challenge with no realm",
                                registry=self.access.registry, hint="report it to the registry")
        params = {"scope": challenge.get("scope") or f"repository:{self.access.repository}:pull"}
        service = challenge.get("service")
        if service:
            params["service"] = service
        try:
            if creds is not None and creds.identity_token:
                request = self._client.build_request("POST", realm, data={
                    **params, "grant_type": "refresh_token", "client_id": "servewise",
                    "refresh_token": creds.identity_token,
                })
            else:
                request = self._client.build_request("GET", realm, params=params)
                if creds and creds.username:
                    secret = base64.b64encode(
                        f"{creds.username}:{creds.password}".encode()).decode()
                    request.headers["Authorization"] = f"Basic {secret}"
            answer = send(self._client, request, self.deadline, host=host_of(realm),
                          what="a registry token")
            answer.read()
        except httpx.TransportError as error:
            raise RegistryError(f"cannot reach the token service {realm}: {error}",
                                registry=self.access.registry,
                                hint="check the network") from None
        if answer.status_code in (401, 403):
            raise RegistryError(
                f"the token service of {self.access.registry} refused "
                + ("the saved credentials" if creds else "anonymous access")
                + f" (HTTP {answer.status_code})",
                hint="run `docker login` again" if creds else
                f"the repository may be private: run `docker login {self.access.registry}`",
                registry=self.access.registry, status=answer.status_code,
            )
        if answer.status_code == 429:
            raise RateLimitError(f"the token service of {self.access.registry} is "
                                 "rate-limiting requests (HTTP 429)",
                                 registry=self.access.registry,
                                 retry_after_s=_retry_after(answer), hint="wait and run again")
        try:
            doc = answer.json()
            token = doc.get("token") or doc.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if answer.status_code != 200 or not isinstance(token, str) or not token:
            raise RegistryError(
                f"the token service {realm} answered HTTP {answer.status_code} without a token",
                registry=self.access.registry, hint="try again later",
            )
        return f"Bearer {token}"

    def _fail(self, response: httpx.Response, what: str, reference: str = "") -> SourceError:
        status = response.status_code
        codes = _error_codes(response)
        response.close()
        if status in (401, 403):
            return self._denied(status)
        if status == 404 and what == "manifest" and "NAME_UNKNOWN" not in codes:
            # distribution answers MANIFEST_UNKNOWN for an unknown repository too: ask its tags.
            probe = self.request("GET", f"/v2/{self.access.repository}/tags/list", stream=True)
            if probe.status_code == 404:
                codes = [*codes, *_error_codes(probe)]
            probe.close()
        if status == 404 and "NAME_UNKNOWN" in codes:
            return RegistryError(
                f"{self._where()}: no such repository",
                hint="check the repository name (Docker Hub's official images are library/NAME)",
                registry=self.access.registry, repository=self.access.repository, status=404,
            )
        if status == 404 and what == "manifest":
            return RegistryError(
                f"{self._where()}: no tag or digest {reference!r}",
                hint=f"list the tags with `servewise tags {self._where()}`",
                registry=self.access.registry, repository=self.access.repository,
                reference=reference, status=404,
            )
        return RegistryError(
            f"{self._where()}: {what} {reference} answered HTTP {status}"
            + (f" ({', '.join(codes)})" if codes else ""),
            hint="try again later" if status >= 500 else "check the reference",
            registry=self.access.registry, status=status,
        )

    def _read_limited(self, response: httpx.Response, limit: int, what: str) -> bytes:
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            response.close()
            raise SourceError(
                f"{self._where()}: the {what} is {declared} bytes, more than the {limit} "
                "servewise reads", hint="this is not a normal image document",
                registry=self.access.registry, limit_bytes=limit,
            )
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in guarded(response.iter_bytes(65536), self.deadline,
                                 host=host_of(str(response.url)), what=f"the {what}"):
                size += len(chunk)
                if size > limit:
                    raise SourceError(
                        f"{self._where()}: the {what} exceeds {limit} bytes",
                        hint="this is not a normal image document",
                        registry=self.access.registry, limit_bytes=limit,
                    )
                parts.append(chunk)
        except httpx.HTTPError as error:
            raise RegistryError(f"{self._where()}: reading the {what} failed: {error}",
                                registry=self.access.registry, hint="try again") from None
        finally:
            response.close()
        return b"".join(parts)

    # -- documents -----------------------------------------------------------

    def manifest(self, reference: str, cache: DocumentCache | None = None
                 ) -> tuple[bytes, str]:
        """A manifest or index by tag or digest: ``(body, digest)``, the digest verified."""
        path = f"/v2/{self.access.repository}/manifests/{reference}"
        asked = reference if oci.is_digest(reference) else None
        if cache is not None and asked is None:
            head = self.request("HEAD", path, headers={"Accept": oci.ACCEPT})
            head.close()
            # HEAD does not count as a pull on Docker Hub; errors are left to the GET.
            if head.status_code == 200 and oci.is_digest(
                head.headers.get("docker-content-digest", "")
            ):
                asked = head.headers["docker-content-digest"]
        if cache is not None and asked is not None and f"manifest:{asked}" in cache:
            return cache[f"manifest:{asked}"], asked
        path = f"/v2/{self.access.repository}/manifests/{asked or reference}"
        response = self.request("GET", path, headers={"Accept": oci.ACCEPT}, stream=True)
        if response.status_code != 200:
            raise self._fail(response, "manifest", reference)
        served = response.headers.get("docker-content-digest", "")
        body = self._read_limited(response, oci.MAX_MANIFEST_BYTES, "manifest")
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        for claimed in (asked, served):
            if claimed and claimed.startswith("sha256:") and claimed != digest:
                raise IntegrityError(
                    f"{self._where()}: the manifest for {reference} has digest {digest}, "
                    f"not {claimed}", hint="the registry serves altered content; nothing was used",
                    registry=self.access.registry, expected_digest=claimed,
                )
        if cache is not None:
            cache[f"manifest:{digest}"] = body
        return body, digest

    def blob(self, digest: str, size: int, limit: int, cache: DocumentCache | None = None
             ) -> bytes:
        """A small blob (an image config), read whole and verified."""
        if cache is not None and f"blob:{digest}" in cache:
            return cache[f"blob:{digest}"]
        if size > limit:
            raise SourceError(f"{self._where()}: blob {digest[:19]}… declares {size} bytes, "
                              f"more than the {limit} servewise reads",
                              hint="this is not a normal image config",
                              registry=self.access.registry)
        response = self.request("GET", f"/v2/{self.access.repository}/blobs/{digest}",
                                stream=True)
        if response.status_code != 200:
            raise self._fail(response, "blob", digest)
        data = self._read_limited(response, limit, "config blob")
        got = "sha256:" + hashlib.sha256(data).hexdigest()
        if len(data) != size or (digest.startswith("sha256:") and got != digest):
            raise IntegrityError(
                f"{self._where()}: blob {digest[:19]}… is {len(data)} bytes with digest "
                f"{got[:19]}…; the manifest says {size} bytes, {digest[:19]}…",
                hint="the registry serves altered content; nothing was used",
                registry=self.access.registry, expected_digest=digest,
            )
        if cache is not None:
            cache[f"blob:{digest}"] = data
        return data

    def blob_chunks(self, digest: str, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """A blob's bytes as they arrive (verified by the caller)."""
        response = self.request("GET", f"/v2/{self.access.repository}/blobs/{digest}",
                                stream=True)
        if response.status_code != 200:
            raise self._fail(response, "blob", digest)
        try:
            yield from guarded(response.iter_bytes(chunk_size), self.deadline,
                               host=host_of(str(response.url)),
                               what=f"layer blob {digest[:19]}…")
        except httpx.HTTPError as error:
            raise RegistryError(f"{self._where()}: blob {digest[:19]}… broke off: {error}",
                                registry=self.access.registry, hint="try again") from None
        finally:
            response.close()

    def tags(self) -> list[str]:
        """Every tag of the repository, following pagination."""
        found: list[str] = []
        url: str | None = f"/v2/{self.access.repository}/tags/list?n=1000"
        while url:
            response = self.request("GET", url, stream=True)
            if response.status_code != 200:
                raise self._fail(response, "tag list")
            link = response.headers.get("link", "")
            body = self._read_limited(response, 64 * 2**20, "tag list")
            try:
                doc = json.loads(body)
                page = doc.get("tags") or []
            except (ValueError, AttributeError):
                raise RegistryError(f"{self._where()}: the tag list is not JSON",
                                    registry=self.access.registry, hint="try again") from None
            found.extend(str(tag) for tag in page)
            if len(found) > MAX_TAGS:
                raise SourceError(f"{self._where()} has more than {MAX_TAGS} tags",
                                  hint="servewise lists at most that many",
                                  registry=self.access.registry)
            url = None
            if 'rel="next"' in link and "<" in link:
                url = link.split("<", 1)[1].split(">", 1)[0]
                if url.startswith("/"):
                    url = self.access.base_url + url
        return list(dict.fromkeys(found))


@dataclass(frozen=True)
class RegistryBlob:
    """A layer blob in a registry, fetched by a worker process with its own client."""

    access: RegistryAccess
    digest: str

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The blob's bytes as they arrive."""
        client = RegistryClient(self.access)
        try:
            yield from client.blob_chunks(self.digest, chunk_size)
        finally:
            client.close()


@dataclass(frozen=True)
class ResolvedImage:
    """One image of a repository, resolved to a platform: documents, not layers."""

    reference: ImageReference
    index_digest: str | None
    manifest_digest: str
    manifest: oci.Manifest
    config: oci.ImageConfig

    @property
    def digest(self) -> str:
        """What ``repo@digest`` pins: the index for multi-platform images."""
        return self.index_digest or self.manifest_digest


def _parse(body: bytes, where: str) -> oci.Index | oci.Manifest:
    try:
        return oci.parse_manifest_document(body)
    except FormatError as error:
        raise SourceError(f"{where}: {error.message}", hint=error.hint or
                          "the registry serves a document servewise cannot read",
                          path=where) from None


def resolve(client: RegistryClient, reference: ImageReference, platform: str | None,
            cache: DocumentCache | None = None) -> ResolvedImage:
    """Manifest (through the index for ``platform``) and config of one image."""
    where = str(reference)
    body, digest = client.manifest(reference.reference, cache)
    doc = _parse(body, where)
    index_digest = None
    if isinstance(doc, oci.Index):
        index_digest = digest
        chosen = choose_platform(doc, platform, where)
        body, digest = client.manifest(chosen.digest, cache)
        doc = _parse(body, f"{where} ({chosen.platform})")
        if isinstance(doc, oci.Index):
            raise SourceError(f"{where}: the index for {chosen.platform} is another index",
                              hint="servewise reads one level of image index", path=where)
    try:
        config = oci.parse_config(
            client.blob(doc.config.digest, doc.config.size, oci.MAX_CONFIG_BYTES, cache)
        )
    except FormatError as error:
        raise SourceError(f"{where}: {error.message}", hint="the image config is unreadable",
                          path=where) from None
    return ResolvedImage(reference, index_digest, digest, doc, config)


def image_source(access: RegistryAccess, image: ResolvedImage, ref: str) -> ImageSource:
    """The :class:`ImageSource` for a resolved image; layers fetched by workers."""
    units = layer_units(image.manifest, lambda d: RegistryBlob(access, d.digest),
                        str(image.reference))
    metadata = image_metadata(str(image.reference), image.manifest_digest, image.manifest,
                              image.config, index_digest=image.index_digest)
    metadata["registry"] = image.reference.registry
    metadata["repository"] = image.reference.repository
    metadata["tag"] = image.reference.tag
    return ImageSource(ref, "image", units, metadata)


def parse_image_reference(ref: str, *, allow_bare: bool = False) -> ImageReference:
    """An image reference, or a :class:`SourceError` saying what is wrong with it."""
    try:
        return parse_reference(ref, allow_bare=allow_bare)
    except FormatError as error:
        raise SourceError(
            f"{ref!r} is neither a file nor an image reference: {error.found}",
            hint="give a path that exists, or an image as [registry/]repo[:tag|@digest]",
            path=ref,
        ) from None


def open_image(ref: str, options: Any) -> ImageSource:
    """The resolver's opener for image references."""
    reference = parse_image_reference(ref)
    deadline = getattr(options, "deadline", None) or current_deadline()
    with RegistryClient.connect(reference, insecure=bool(getattr(options, "insecure", False)),
                                deadline=deadline) as client:
        image = resolve(client, reference, getattr(options, "platform", None))
        return image_source(client.current_access, image, ref)


__all__ = ["DocumentCache", "RegistryAccess", "RegistryBlob", "RegistryClient", "ResolvedImage",
           "image_source", "open_image", "parse_image_reference", "resolve"]
