"""One redaction for everything servewise prints, logs or stores: pure functions.

A secret is replaced by :data:`MASK` wherever it can appear:

* a URL's user information (``https://user:pw@host`` becomes ``https://user:***@host``; a
  bare ``https://TOKEN@host`` becomes ``https://***@host``) and credential query parameters
  (``?token=…``, ``?sig=…``, ``X-Amz-Signature=…``): package indexes (``PIP_INDEX_URL``,
  ``--index-url``), wheel URLs and ``bench`` URLs alike;
* the value after a secret flag of a command line (``--api-key X``, ``--hf-token=X``,
  ``--token``, ``--password``, ``--secret``), in an argv list or in text;
* the value of a secret environment variable (``HF_TOKEN``, ``OPENAI_API_KEY``,
  ``AWS_SECRET_ACCESS_KEY``, any name with ``TOKEN``, ``SECRET``, ``PASSWORD``,
  ``API_KEY``...), in a mapping or as ``NAME=value`` in text;
* ``Authorization: Bearer …`` and the token shapes of well-known services (``hf_…``,
  ``sk-…``, ``ghp_…``, ``github_pat_…``) wherever they appear.

:func:`redact_text` is for free text (messages, log lines), :func:`redact_argv` and
:func:`redact_env` for commands and environments, :func:`redact_data` for JSON-ready
documents (store rows, ``--json``). :func:`terminal_safe` removes what a terminal would
obey rather than show (escape sequences, other control characters).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from servewise.formats.logline import strip_ansi

__all__ = [
    "MASK", "is_secret_flag", "is_secret_name", "redact_argv", "redact_data", "redact_env",
    "redact_text", "redact_url", "terminal_safe",
]

MASK = "***"
"""What a secret is replaced with."""

# A flag whose value is a secret: --api-key, --hf-token, --token, --password, --secret,
# --access-token, --auth-token (dashes or underscores). Not --max-num-batched-tokens.
_SECRET_FLAG = re.compile(
    r"^--?(?:[a-z0-9]+[-_])*(?:api[-_]?key|token|password|passwd|secret|secret[-_]key|"
    r"access[-_]key|private[-_]key|auth)$", re.IGNORECASE)
# An environment variable whose value is a secret: HF_TOKEN, OPENAI_API_KEY, DB_PASSWORD.
# A field called `key` alone names a key (a Kubernetes secretKeyRef's `key: token`), not a
# secret, so it is not one.
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:TOKEN|API_?KEY|SECRET|SECRET_KEY|PASSWORD|PASSWD|PASS|CREDENTIALS?|"
    r"ACCESS_KEY|PRIVATE_KEY|AUTH|AUTHORIZATION|SESSION_KEY)(?:_|$)|^APIKEY$",
    re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://)"
                           r"(?P<user>[^\s/@:?#\"']*)(?::(?P<password>[^\s/@?#\"']*))?@")
_QUERY_SECRET = re.compile(
    r"(?P<key>[?&;](?:[a-z0-9_-]*token|api[_-]?key|apikey|key|password|passwd|secret|"
    r"sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|"
    r"x-goog-signature|x-goog-credential)=)(?P<value>[^&;#\s\"']+)", re.IGNORECASE)
_FLAG_IN_TEXT = re.compile(
    r"(?<![\w-])(?P<flag>--?(?:[a-zA-Z0-9]+[-_])*(?:api[-_]?key|token|password|passwd|secret|"
    r"secret[-_]key|access[-_]key|private[-_]key|auth))(?P<sep>=|\s+|\"?\s*[,:]\s*\"?)"
    r"(?P<value>'[^']*'|\"[^\"]*\"|[^\s\"',\]}]+)", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"(?P<name>\b[A-Za-z_][A-Za-z0-9_]{0,127})(?P<sep>=|\"?\s*:\s*\"?)"
                         r"(?P<value>'[^']*'|\"[^\"]*\"|[^\s\"',}\]]+)")
_BEARER = re.compile(r"(?P<word>\bBearer\s+|(?i:authorization)[\"']?\s*[:=]\s*[\"']?Basic\s+)"
                     r"(?P<value>[A-Za-z0-9._~+/=-]{4,})")
_KNOWN_TOKENS = re.compile(r"\b(?P<prefix>hf_|sk-(?:proj-)?|ghp_|gho_|ghs_|github_pat_|"
                           r"glpat-|xox[abp]-)[A-Za-z0-9_-]{16,}")
# C0 and C1 control characters a terminal acts on (tab and newline are text).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def is_secret_flag(flag: str) -> bool:
    """Whether the value of command-line flag ``flag`` (``--api-key``) is a secret."""
    return bool(_SECRET_FLAG.match(flag.split("=", 1)[0]))


def is_secret_name(name: str) -> bool:
    """Whether an environment variable or JSON key called ``name`` holds a secret."""
    return bool(_SECRET_NAME.search(name))


def _userinfo(match: re.Match[str]) -> str:
    if match.group("password") is not None:
        return f"{match.group('scheme')}{match.group('user')}:{MASK}@"
    if not match.group("user"):
        return match.group(0)
    return f"{match.group('scheme')}{MASK}@"


def redact_url(url: str) -> str:
    """``url`` without its credentials (user information, secret query parameters)."""
    if "@" in url:
        url = _URL_USERINFO.sub(_userinfo, url)
    if "=" in url:
        url = _QUERY_SECRET.sub(lambda m: m.group("key") + MASK, url)
    return url


def _assignment(match: re.Match[str]) -> str:
    if not is_secret_name(match.group("name")):
        return match.group(0)
    value = match.group("value")
    if "://" in value:  # a package index URL: only its credentials go
        return match.group(0)
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group('name')}{match.group('sep')}{quote}{MASK}{quote}"


def _flag_value(match: re.Match[str]) -> str:
    value = match.group("value")
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group('flag')}{match.group('sep')}{quote}{MASK}{quote}"


def redact_text(text: str) -> str:
    """Free text (a message, a log line, a shell command) with every secret masked."""
    if "://" in text:
        text = redact_url(text)
    if "-" in text:
        text = _FLAG_IN_TEXT.sub(_flag_value, text)
    if "Bearer" in text or "Basic" in text:
        text = _BEARER.sub(lambda m: m.group("word") + MASK, text)
    if "=" in text or ":" in text:
        text = _ASSIGNMENT.sub(_assignment, text)
    if "_" in text or "-" in text:  # every known token shape holds one of them
        text = _KNOWN_TOKENS.sub(lambda m: m.group("prefix") + MASK, text)
    return text


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command's words with secret flag values, secret ``NAME=value`` words and URL
    credentials masked; the words stay where they were."""
    words: list[str] = []
    hide_next = False
    for word in argv:
        if hide_next:
            words.append(MASK)
            hide_next = False
            continue
        if word.startswith("-") and is_secret_flag(word):
            if "=" in word:
                words.append(word.split("=", 1)[0] + "=" + MASK)
            else:
                words.append(word)
                hide_next = True
            continue
        words.append(redact_text(word))
    return words


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """An environment with secret values masked and credentials taken out of URL values."""
    return {name: MASK if is_secret_name(name) and "://" not in str(value)
            else redact_text(str(value)) for name, value in env.items()}


_PLAIN = (int, float, bool, type(None))


def redact_data(value: Any) -> Any:
    """A JSON-ready document with every secret masked (a new object; the input is kept).

    Mapping keys that name a secret (``api_key``, ``HF_TOKEN``) mask their string value;
    lists of strings are read as command lines (``["--api-key", "X"]``); every other string
    goes through :func:`redact_text`.
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        result: dict[Any, Any] = {}
        for key, item in value.items():
            if (isinstance(key, str) and isinstance(item, str) and is_secret_name(key)
                    and "://" not in item):
                result[key] = MASK if item else item
            else:
                result[key] = redact_data(item)
        return result
    if isinstance(value, (list, tuple)):
        if not value or all(isinstance(item, _PLAIN) for item in value):
            return list(value)
        if all(isinstance(item, str) for item in value):
            return redact_argv(value)
        return [redact_data(item) for item in value]
    return value


def terminal_safe(text: str) -> str:
    """``text`` as a terminal should show it: escape sequences (colours, title changes,
    screen clears) and other control characters removed; tabs and newlines kept."""
    if text.isprintable():  # the usual line: nothing to remove (fast on long lines)
        return text
    text = strip_ansi(text)
    return _CONTROL.sub("", text)
