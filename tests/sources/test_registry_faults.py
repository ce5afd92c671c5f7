"""Registry faults the real registry cannot produce, from a small in-process fake registry:
rate limits, lies about sizes and digests, bearer and basic realms, Docker config credentials.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from servewise.errors import IntegrityError, RateLimitError, RegistryError, SourceError
from servewise.inspect.scan import scan_build
from servewise.sources.auth import Credentials, credentials_for, parse_challenge
from support.http_servers import Served, serve
from support.images import Entry, Image, build_tar, digest_of, wheel_entries
from support.paths import GOOD_NIGHTLY

REPO = "fake/img"


@dataclass
class Fake:
    """The fake registry's behaviour."""

    auth: str = ""
    """``bearer``, ``basic`` or empty."""
    fault: str = ""
    user: tuple[str, str] = ("ann", "s3cret")
    tokens: list[str] = field(default_factory=list)
    docs: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    base: str = ""


def _image() -> Image:
    return Image([build_tar([Entry("etc/os-release", b"x")]),
                  build_tar(wheel_entries(GOOD_NIGHTLY))])


def _handler(fake: Fake) -> Callable[[BaseHTTPRequestHandler, Served], bool]:
    def handle(h: BaseHTTPRequestHandler, served: Served) -> bool:
        send = h.send_body  # type: ignore[attr-defined]
        path = h.path.split("?", 1)[0]
        given = h.headers.get("Authorization", "")
        if path == "/token":
            if fake.auth == "bearer-private":
                expected = "Basic " + base64.b64encode(":".join(fake.user).encode()).decode()
                if given != expected:
                    send(401, b'{"details":"bad creds"}', {"Content-Type": "application/json"})
                    return True
            token = f"tok-{len(fake.tokens)}"
            fake.tokens.append(token)
            send(200, json.dumps({"token": token, "expires_in": 300}).encode(),
                 {"Content-Type": "application/json"})
            return True
        if fake.auth.startswith("bearer") and given not in {f"Bearer {t}" for t in fake.tokens}:
            realm = (f'Bearer realm="{fake.base}/token",service="fake",'
                     f'scope="repository:{REPO}:pull"')
            send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', {"WWW-Authenticate": realm})
            return True
        if fake.auth == "basic":
            expected = "Basic " + base64.b64encode(":".join(fake.user).encode()).decode()
            if given != expected:
                send(401, b"", {"WWW-Authenticate": 'Basic realm="fake"'})
                return True
        if fake.fault == "429":
            send(429, b'{"errors":[{"code":"TOOMANYREQUESTS"}]}', {"Retry-After": "17"})
            return True
        if fake.fault == "403":
            send(403, b'{"errors":[{"code":"DENIED"}]}', {})
            return True
        if path not in fake.docs:
            send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}', {})
            return True
        body, kind = fake.docs[path]
        headers = {"Content-Type": kind}
        if "/manifests/" in path:
            headers["Docker-Content-Digest"] = digest_of(body)
            if fake.fault == "lying-manifest-digest":
                headers["Docker-Content-Digest"] = digest_of(b"something else")
            if fake.fault == "huge-manifest":
                body = b"{" + b" " * (5 * 2**20) + b"}"
        elif kind == "layer":
            if fake.fault == "short-blob":
                body = body[: len(body) - 100]
            elif fake.fault == "long-blob":
                body = body + b"\0" * 100
            elif fake.fault == "altered-blob":
                body = body[:-1] + bytes([body[-1] ^ 1])
        send(200, body, headers)
        return True

    return handle


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Fake, str]]:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker"))
    state = Fake()
    image = _image()
    blobs = image.blobs()
    body, media = image.manifest(blobs)
    state.docs[f"/v2/{REPO}/manifests/t"] = (body, media)
    state.docs[f"/v2/{REPO}/manifests/{digest_of(body)}"] = (body, media)
    state.docs[f"/v2/{REPO}/blobs/{digest_of(image.config())}"] = (image.config(), "config")
    for blob, _ in blobs:
        state.docs[f"/v2/{REPO}/blobs/{digest_of(blob)}"] = (blob, "layer")
    served = Served(handler=_handler(state))
    with serve(served) as base:
        state.base = base
        yield state, base.removeprefix("http://")


def write_config(tmp_path: Path, content: dict[str, object]) -> None:
    folder = tmp_path / "docker"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(content))


def test_anonymous_bearer_token(fake: tuple[Fake, str]) -> None:
    state, host = fake
    state.auth = "bearer"
    report = scan_build(f"{host}/{REPO}:t")
    assert len(report.libraries) == 5 and state.tokens


def test_bearer_with_docker_config_credentials(fake: tuple[Fake, str], tmp_path: Path) -> None:
    state, host = fake
    state.auth = "bearer-private"
    with pytest.raises(RegistryError, match="refused anonymous access") as caught:
        scan_build(f"{host}/{REPO}:t")
    assert "docker login" in (caught.value.hint or "")
    auth = base64.b64encode(b"ann:s3cret").decode()
    write_config(tmp_path, {"auths": {host: {"auth": auth}}})
    assert len(scan_build(f"{host}/{REPO}:t").libraries) == 5
    write_config(tmp_path, {"auths": {host: {"auth": base64.b64encode(b"ann:wrong").decode()}}})
    with pytest.raises(RegistryError, match="refused the saved credentials"):
        scan_build(f"{host}/{REPO}:t")


def test_basic_realm(fake: tuple[Fake, str], tmp_path: Path) -> None:
    state, host = fake
    state.auth = "basic"
    with pytest.raises(RegistryError, match="asks for a user name and password"):
        scan_build(f"{host}/{REPO}:t")
    write_config(tmp_path, {"auths": {f"https://{host}": {"username": "ann",
                                                          "password": "s3cret"}}})
    assert len(scan_build(f"{host}/{REPO}:t").libraries) == 5


def test_credential_helper(
    fake: tuple[Fake, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, host = fake
    state.auth = "basic"
    helper = tmp_path / "bin" / "docker-credential-servewisetest"
    helper.parent.mkdir()
    helper.write_text("#!/bin/sh\nread server\n"
                      "echo '{\"Username\": \"ann\", \"Secret\": \"s3cret\"}'\n")
    helper.chmod(helper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{helper.parent}{os.pathsep}{os.environ['PATH']}")
    write_config(tmp_path, {"credHelpers": {host: "servewisetest"}})
    assert credentials_for(host) == Credentials("ann", "s3cret")
    assert len(scan_build(f"{host}/{REPO}:t").libraries) == 5
    write_config(tmp_path, {"credsStore": "not-installed-anywhere"})
    with pytest.raises(RegistryError, match="not installed"):
        credentials_for(host)


def test_rate_limit_says_when_to_retry(fake: tuple[Fake, str]) -> None:
    state, host = fake
    state.fault = "429"
    with pytest.raises(RateLimitError) as caught:
        scan_build(f"{host}/{REPO}:t")
    assert caught.value.fields["retry_after_s"] == 17 and "retry in 17 s" in caught.value.message


def test_forbidden(fake: tuple[Fake, str]) -> None:
    state, host = fake
    state.fault = "403"
    with pytest.raises(RegistryError, match="access denied"):
        scan_build(f"{host}/{REPO}:t")


@pytest.mark.parametrize(("fault", "error", "text"), [
    ("lying-manifest-digest", IntegrityError, "has digest"),
    ("short-blob", IntegrityError, "ends after"),
    ("long-blob", IntegrityError, "more than the"),
    ("altered-blob", IntegrityError, "content digest"),
    ("huge-manifest", SourceError, "servewise reads"),
])
def test_a_registry_that_lies(fake: tuple[Fake, str], tmp_path: Path, fault: str,
                              error: type[Exception], text: str) -> None:
    from servewise.store import Store

    state, host = fake
    state.fault = fault
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(error, match=text):
            scan_build(f"{host}/{REPO}:t", store=store)
        # Nothing from a lying blob was cached: a healthy registry is read afresh.
        state.fault = ""
        healthy = scan_build(f"{host}/{REPO}:t", store=store)
    assert len(healthy.libraries) == 5
    assert healthy.units.read >= 1


def test_challenge_parsing() -> None:
    found = parse_challenge('Bearer realm="https://auth.docker.io/token",'
                            'service="registry.docker.io",scope="repository:a/b:pull,push"')
    assert found is not None and found.scheme == "bearer"
    assert found.get("realm") == "https://auth.docker.io/token"
    assert found.get("scope") == "repository:a/b:pull,push"
    assert parse_challenge('Basic realm="x \\"y\\""') is not None
    assert parse_challenge("Negotiate abc") is None
