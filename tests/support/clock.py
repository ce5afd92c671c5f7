"""A clock for tests: time moves only when the test (or a deadline's pause) moves it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FakeClock:
    """A :class:`servewise.sources.deadline.Clock` that never sleeps.

    :meth:`sleep` moves the time on at once and remembers the pause, so a test of a retry
    policy or an expiry runs in no time and can say which pauses were asked for.
    """

    now: float = 1000.0
    slept: list[float] = field(default_factory=list)

    def monotonic(self) -> float:
        """The fake time."""
        return self.now

    def sleep(self, seconds: float) -> None:
        """Move the time on by ``seconds`` and note the pause."""
        self.slept.append(seconds)
        self.now += seconds

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        self.now += seconds


__all__ = ["FakeClock"]
