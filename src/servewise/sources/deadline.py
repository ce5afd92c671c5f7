"""One deadline per command for everything servewise asks of the network.

A :class:`Deadline` is started once, when a command starts, and handed to every source
that speaks HTTP (registries, package indexes, remote wheels, the Hugging Face Hub). It
holds two limits:

``total_s``
    the overall budget of the command (``--timeout``); ``None``: no overall limit.
``wait_s``
    the longest any single wait may last — connecting, or waiting for an answer or the
    next bytes of one (default :data:`DEFAULT_WAIT_S`), never more than what is left of
    the total.

So a server that accepts a connection and never answers ends the command after
``min(wait_s, total_s)`` seconds with a :class:`DeadlineError` naming the host, what was
waited for and what to try; it is never waited for twice. :func:`send` is the one retry
policy: a dropped connection (reset, closed mid-answer) and HTTP 429/502/503/504 are tried
again a few times, honouring ``Retry-After`` when the wait fits the deadline and
:data:`MAX_RETRY_WAIT_S`; a timeout is not retried. While a wait lasts longer than
``tick_s``, the ``on_wait`` callback is told every ``tick_s`` seconds (the command line
prints it on stderr; the library never prints).

A deadline is a small picklable value: worker processes that fetch layers or wheel
entries get the same expiry (``time.monotonic`` is system-wide) without the callback.

Time comes from a :class:`Clock` (:data:`SYSTEM_CLOCK`: ``time.monotonic`` and
``time.sleep``); a test passes its own to :meth:`Deadline.start` and moves time on instead of
sleeping through retry pauses and expiries.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from servewise.errors import DeadlineError

if TYPE_CHECKING:
    from servewise.sources._http import httpx

#: Longest single wait (connect, answer, next bytes) unless a command says otherwise.
DEFAULT_WAIT_S = 60.0
#: Most retries of one request.
RETRIES = 2
#: A ``Retry-After`` longer than this is reported instead of waited for.
MAX_RETRY_WAIT_S = 10.0
#: Seconds between progress calls while one wait lasts.
TICK_S = 5.0
#: Statuses a retry can fix.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


class Clock(Protocol):
    """Where a deadline reads the time and how it pauses."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (as ``time.monotonic``)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Pause for ``seconds`` (as ``time.sleep``)."""
        ...


@dataclass(frozen=True)
class SystemClock:
    """The machine's clock: ``time.monotonic`` and ``time.sleep``."""

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """``time.sleep(seconds)``."""
        time.sleep(seconds)


SYSTEM_CLOCK = SystemClock()
"""The clock every deadline uses unless given another."""


def _seconds(value: float) -> str:
    """``1.5 s`` below ten seconds, ``42 s`` above."""
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


@dataclass(frozen=True)
class Waiting:
    """A wait in progress, as the progress callback sees it."""

    host: str
    what: str
    waited_s: float
    """Seconds this wait has lasted."""
    limit_s: float
    """Seconds this wait may last in all."""

    def describe(self) -> str:
        """One line for stderr: ``waiting for HOST (WHAT): 10 s, gives up after 60 s``."""
        return (f"waiting for {self.host} ({self.what}): {_seconds(self.waited_s)}, "
                f"gives up after {_seconds(self.limit_s)}")


WaitCallback = Callable[[Waiting], None]


@dataclass(frozen=True)
class Deadline:
    """When a command's network work must end, and how long one wait may last."""

    expires_at: float | None = None
    """:attr:`clock` time of the overall deadline; ``None``: no overall limit."""
    total_s: float | None = None
    """The overall budget it was started with (for messages)."""
    wait_s: float = DEFAULT_WAIT_S
    """Longest single wait."""
    on_wait: WaitCallback | None = field(default=None, compare=False)
    """Told every :attr:`tick_s` while a wait lasts (not carried to worker processes)."""
    tick_s: float = TICK_S
    clock: Clock = field(default=SYSTEM_CLOCK, compare=False, repr=False)
    """Where the time comes from (:data:`SYSTEM_CLOCK` unless a test gives its own)."""

    @classmethod
    def start(cls, total_s: float | None = None, *, wait_s: float = DEFAULT_WAIT_S,
              on_wait: WaitCallback | None = None, tick_s: float | None = None,
              clock: Clock = SYSTEM_CLOCK) -> Deadline:
        """A deadline that starts now: ``total_s`` seconds from now (``None``: no overall limit),
        as ``clock`` tells the time."""
        if total_s is not None and not total_s > 0:
            from servewise.errors import UsageError

            raise UsageError(f"--timeout {total_s:g}: a deadline must be more than 0 seconds",
                             found=total_s, hint="e.g. --timeout 30")
        expires = None if total_s is None else clock.monotonic() + total_s
        return cls(expires, total_s, wait_s if total_s is None else min(wait_s, total_s),
                   on_wait, TICK_S if tick_s is None else tick_s, clock)

    def __reduce__(self) -> tuple[Any, ...]:
        # The callback stays in the process that prints; workers get the limits and clock.
        return (Deadline, (self.expires_at, self.total_s, self.wait_s, None, self.tick_s,
                           self.clock))

    def with_callback(self, on_wait: WaitCallback | None) -> Deadline:
        """The same deadline, telling ``on_wait`` about long waits."""
        return replace(self, on_wait=on_wait)

    # -- what is left -----------------------------------------------------------

    def remaining(self) -> float | None:
        """Seconds left of the overall deadline (never below 0); ``None`` without one."""
        if self.expires_at is None:
            return None
        return max(0.0, self.expires_at - self.clock.monotonic())

    def wait_limit(self) -> float:
        """How long the next wait may last: :attr:`wait_s`, or less when the total is near."""
        left = self.remaining()
        return self.wait_s if left is None else min(self.wait_s, left)

    def allows(self, seconds: float) -> bool:
        """Whether ``seconds`` more (a retry's pause) still leave time before the deadline."""
        left = self.remaining()
        return left is None or seconds < left

    def check(self, host: str, what: str) -> None:
        """Raise :class:`DeadlineError` when the overall deadline has passed."""
        if self.remaining() == 0.0:
            raise self.expired(host, what)

    def timeout(self, host: str, what: str) -> httpx.Timeout:
        """The httpx timeouts of the next request: every phase bounded by :meth:`wait_limit`."""
        from servewise.sources._http import httpx

        self.check(host, what)
        return httpx.Timeout(self.wait_limit())

    # -- errors -----------------------------------------------------------------

    def _advice(self) -> str:
        if self.total_s is not None and self.remaining() == 0.0:
            return (f"the whole command may take {self.total_s:g} s (--timeout); raise it for "
                    "a large image or a slow link, or try again later")
        return ("the server accepted the connection but did not answer: check that the "
                "address is a registry or web server and that it is up, then try again; "
                "--timeout SECONDS sets the deadline")

    def expired(self, host: str, what: str) -> DeadlineError:
        """The error for an overall deadline that passed while doing ``what``."""
        return DeadlineError(
            f"{host}: gave up on {what} after the {self.total_s:g} s deadline (--timeout)",
            host=host, waited_for=what, timeout_s=self.total_s, hint=self._advice(),
        )

    def timed_out(self, host: str, what: str, limit_s: float, error: BaseException | None = None
                  ) -> DeadlineError:
        """The error for one wait of ``limit_s`` seconds that got no answer."""
        phase = "to connect" if type(error).__name__ in ("ConnectTimeout", "PoolTimeout") \
            else "for an answer"
        return DeadlineError(
            f"{host}: waited {_seconds(limit_s)} {phase} ({what}) and got none",
            host=host, waited_for=what, waited_s=round(limit_s, 3), timeout_s=self.total_s,
            hint=self._advice(),
        )

    # -- progress ----------------------------------------------------------------

    @contextlib.contextmanager
    def waiting(self, host: str, what: str) -> Iterator[None]:
        """Tell :attr:`on_wait` every :attr:`tick_s` seconds while the body runs."""
        if self.on_wait is None:
            yield
            return
        callback = self.on_wait
        done = threading.Event()
        began = self.clock.monotonic()
        limit = self.wait_limit()

        def tick() -> None:
            # The ticks themselves are real time: they report a wait on a real socket.
            while not done.wait(self.tick_s):
                callback(Waiting(host, what, self.clock.monotonic() - began, limit))

        ticker = threading.Thread(target=tick, name="servewise-wait", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()

    def sleep(self, seconds: float) -> None:
        """Pause before a retry (callers check :meth:`allows` first), on :attr:`clock`."""
        self.clock.sleep(max(0.0, seconds))


# -- the command's deadline, for code far from the command line ------------------------

_CURRENT: ContextVar[Deadline | None] = ContextVar("servewise_deadline", default=None)


def current_deadline() -> Deadline:
    """The deadline set by :func:`deadline_scope`, else a fresh default one."""
    return _CURRENT.get() or Deadline.start()


@contextlib.contextmanager
def deadline_scope(deadline: Deadline) -> Iterator[Deadline]:
    """Make ``deadline`` the one :func:`current_deadline` gives while the body runs."""
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


# -- the one retry policy --------------------------------------------------------------

def retry_after(response: httpx.Response) -> float | None:
    """Seconds a ``Retry-After`` (or rate-limit reset) header asks to wait, when it says."""
    for name in ("retry-after", "ratelimit-reset", "x-ratelimit-reset"):
        value = response.headers.get(name)
        if value:
            try:
                number = float(value)
            except ValueError:
                continue
            return max(0.0, number - time.time() if number > 1e9 else number)
    return None


def _dropped(error: BaseException) -> bool:
    """Whether a transport error is a connection that broke, which a new one may fix."""
    from servewise.sources._http import httpx

    return isinstance(error, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError))


def send(client: httpx.Client, request: httpx.Request, deadline: Deadline, *, host: str,
         what: str, stream: bool = False, retries: int = RETRIES) -> httpx.Response:
    """Send ``request`` within ``deadline``; retry only what a retry can fix.

    Each attempt waits at most :meth:`Deadline.wait_limit`. A timeout raises
    :class:`DeadlineError` at once. A dropped connection, and HTTP 429/502/503/504, are
    retried up to ``retries`` times when the pause (``Retry-After``, else 0.5 s, 1 s…) is
    at most :data:`MAX_RETRY_WAIT_S` and fits before the deadline; otherwise the last
    response is returned (for the caller's own error) or the transport error raised.
    """
    from servewise.sources._http import httpx

    attempt = 0
    while True:
        limit = deadline.wait_limit()
        request.extensions["timeout"] = deadline.timeout(host, what).as_dict()
        try:
            with deadline.waiting(host, what):
                response = client.send(request, stream=stream)
        except httpx.TimeoutException as error:
            raise deadline.timed_out(host, what, limit, error) from None
        except httpx.TransportError as error:
            pause = 0.5 * (attempt + 1)
            if attempt < retries and _dropped(error) and deadline.allows(pause):
                attempt += 1
                deadline.sleep(pause)
                continue
            raise
        if response.status_code in RETRY_STATUSES and attempt < retries:
            asked = retry_after(response)
            pause = asked if asked is not None else 0.5 * (attempt + 1)
            if pause <= MAX_RETRY_WAIT_S and deadline.allows(pause):
                response.close()
                attempt += 1
                deadline.sleep(pause)
                continue
        return response


def guarded(chunks: Iterator[bytes], deadline: Deadline, *, host: str, what: str
            ) -> Iterator[bytes]:
    """``chunks`` of a response body, ended by the deadline and with timeouts explained."""
    from servewise.sources._http import httpx

    limit = deadline.wait_limit()
    try:
        for chunk in chunks:
            yield chunk
            deadline.check(host, what)
    except httpx.TimeoutException as error:
        raise deadline.timed_out(host, what, limit, error) from None


def host_of(url: str) -> str:
    """``host[:port]`` of a URL, for messages."""
    from servewise.sources._http import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return url
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.host}{port}" if parsed.host else url


__all__ = ["DEFAULT_WAIT_S", "MAX_RETRY_WAIT_S", "RETRIES", "SYSTEM_CLOCK", "Clock", "Deadline",
           "SystemClock", "WaitCallback", "Waiting", "current_deadline", "deadline_scope",
           "guarded", "host_of", "retry_after", "send"]
