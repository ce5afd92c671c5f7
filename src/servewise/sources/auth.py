"""Registry credentials and challenges: ``WWW-Authenticate`` and ``~/.docker/config.json``.

Credentials are looked up as Docker does: ``$DOCKER_CONFIG/config.json`` (else
``~/.docker/config.json``), first a ``credHelpers`` entry for the registry, then
``credsStore``, then ``auths`` (``auth`` = base64 of ``user:password``, or
``username``/``password``, or an ``identitytoken``). Helpers are run as
``docker-credential-<name> get`` with the server on stdin. Nothing is written.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from servewise.errors import RegistryError
from servewise.formats.imageref import DOCKER_HUB

_PARAM_RE = re.compile(r'\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')
_HUB_KEYS = ("https://index.docker.io/v1/", "index.docker.io", "docker.io",
             "registry-1.docker.io", "https://registry-1.docker.io")
HELPER_TIMEOUT_S = 20


@dataclass(frozen=True)
class Challenge:
    """An authentication challenge from a 401 answer."""

    scheme: str
    """``bearer`` or ``basic`` (lower case)."""
    params: tuple[tuple[str, str], ...]

    def get(self, name: str) -> str | None:
        """One parameter (``realm``, ``service``, ``scope``)."""
        for key, value in self.params:
            if key == name:
                return value
        return None


def parse_challenge(header: str) -> Challenge | None:
    """``Bearer realm="…",service="…",scope="…"`` or ``Basic realm="…"``; ``None`` if neither."""
    scheme, _, rest = header.strip().partition(" ")
    scheme = scheme.lower()
    if scheme not in ("bearer", "basic"):
        return None
    params: list[tuple[str, str]] = []
    for match in _PARAM_RE.finditer(rest):
        value = match.group(2)
        value = re.sub(r"\\(.)", r"\1", value) if value is not None else match.group(3) or ""
        params.append((match.group(1).lower(), value))
    return Challenge(scheme, tuple(params))


@dataclass(frozen=True)
class Credentials:
    """A user name and secret, or an identity (refresh) token."""

    username: str = ""
    password: str = ""
    identity_token: str = ""

    def __repr__(self) -> str:  # never print secrets
        return f"Credentials(username={self.username!r}, secret=<hidden>)"


def config_path() -> Path:
    """Docker's client configuration file."""
    folder = os.environ.get("DOCKER_CONFIG")
    return (Path(folder) if folder else Path.home() / ".docker") / "config.json"


def _keys(registry: str) -> tuple[str, ...]:
    if registry == DOCKER_HUB:
        return _HUB_KEYS
    return (registry, f"https://{registry}", f"http://{registry}", f"https://{registry}/v1/",
            f"https://{registry}/v2/")


def _from_helper(helper: str, registry: str) -> Credentials | None:
    server = "https://index.docker.io/v1/" if registry == DOCKER_HUB else registry
    program = f"docker-credential-{helper}"
    try:
        done = subprocess.run([program, "get"], input=server.encode(), capture_output=True,
                              timeout=HELPER_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise RegistryError(
            f"{config_path()} names the credential helper {helper!r}, but {program} is not "
            "installed", hint=f"install {program}, or remove it from the Docker config",
            registry=registry,
        ) from None
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RegistryError(f"credential helper {program} failed: {error}", registry=registry,
                            hint="run `docker login` again") from None
    if done.returncode != 0:
        return None  # "credentials not found in native keychain": anonymous access
    try:
        data = json.loads(done.stdout)
        username, secret = str(data["Username"]), str(data["Secret"])
    except (ValueError, KeyError, TypeError):
        raise RegistryError(f"credential helper {program} printed no Username/Secret",
                            registry=registry, hint="run `docker login` again") from None
    if username == "<token>":
        return Credentials(identity_token=secret)
    return Credentials(username, secret)


def _from_auths(entry: object, registry: str) -> Credentials | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("identitytoken"):
        return Credentials(identity_token=str(entry["identitytoken"]))
    if entry.get("auth"):
        try:
            user, _, password = base64.b64decode(str(entry["auth"])).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            raise RegistryError(
                f"{config_path()}: the auth entry for {registry} is not base64 of user:password",
                hint="run `docker login` again", registry=registry,
            ) from None
        return Credentials(user, password)
    if entry.get("username"):
        return Credentials(str(entry["username"]), str(entry.get("password", "")))
    return None


def credentials_for(registry: str) -> Credentials | None:
    """What the Docker config holds for ``registry``; ``None`` for anonymous access."""
    path = config_path()
    try:
        config = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise RegistryError(f"cannot read {path}: {error}", registry=registry,
                            hint="fix or move the Docker config file") from None
    if not isinstance(config, dict):
        return None
    keys = _keys(registry)
    helpers = config.get("credHelpers")
    if isinstance(helpers, dict):
        for key in keys:
            if key in helpers:
                return _from_helper(str(helpers[key]), registry)
    auths = config.get("auths")
    entry = None
    if isinstance(auths, dict):
        entry = next((auths[key] for key in keys if key in auths), None)
    found = _from_auths(entry, registry)
    if found is None and config.get("credsStore"):
        found = _from_helper(str(config["credsStore"]), registry)
    return found


__all__ = ["Challenge", "Credentials", "config_path", "credentials_for", "parse_challenge"]
