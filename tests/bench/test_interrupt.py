"""run_interruptibly: a Ctrl-C ends the run even when the coroutine swallows its cancel."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from servewise.bench.interrupt import run_interruptibly


async def _swallowing(steps: list[str]) -> str:
    """Ctrl-C itself, then absorb the cancellation it brings, as a suppress(...) would."""
    os.kill(os.getpid(), signal.SIGINT)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(5)
    steps.append("went on")
    return "finished"


def test_a_swallowed_cancel_still_ends_in_keyboard_interrupt() -> None:
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(_swallowing(steps))
    assert steps == ["went on"]  # the coroutine did absorb it: the interrupt was remembered
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_asyncio_run_loses_the_same_interrupt() -> None:
    """The reason for the module: with asyncio.run the same coroutine returns normally."""
    assert asyncio.run(_swallowing([])) == "finished"


def test_a_plain_cancel_ends_in_keyboard_interrupt_at_once() -> None:
    async def waits() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(5)
        raise AssertionError("not cancelled")

    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(waits())


def test_without_interrupt_the_result_comes_back() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_interruptibly(answer()) == 42


def test_a_caller_that_ignores_ctrl_c_keeps_its_choice() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        async def ignored() -> str:
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0.05)
            return "ran through"

        assert run_interruptibly(ignored()) == "ran through"
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
