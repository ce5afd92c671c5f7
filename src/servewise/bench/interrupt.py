"""Run a benchmark's event loop so that a Ctrl-C is never lost.

:func:`asyncio.run` turns the first Ctrl-C into a cancellation of the main task and raises
:class:`KeyboardInterrupt` only if that task then ends cancelled. On the way a cancellation
can be absorbed: Python 3.11's :func:`asyncio.wait_for` returns the inner result when the
inner task finished in the same loop turn as the cancel (CPython gh-86296, fixed by the
rewrite in 3.12, gh-96764), and a ``contextlib.suppress(CancelledError)`` around an awaited
helper's shutdown swallows one that lands there. The benchmark then goes on as if nothing
had been asked, and a sweep that was told to stop runs every cell it had left.

:func:`run_interruptibly` cancels the main task the same way but remembers the interrupt:
once the loop is done, a remembered Ctrl-C is raised as :class:`KeyboardInterrupt`,
whatever the task returned. A second Ctrl-C raises at once, as with :func:`asyncio.run`.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

__all__ = ["run_interruptibly"]

T = TypeVar("T")


def run_interruptibly(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new event loop; after a Ctrl-C, raise :class:`KeyboardInterrupt`.

    The handler is installed only where :func:`asyncio.run` would install its own: in the
    main thread, while Ctrl-C has Python's default handler (a caller that ignores or
    handles SIGINT keeps its choice).
    """
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        tasks: list[asyncio.Task[Any]] = []
        interrupts: list[int] = []

        async def tracked() -> T:
            task = asyncio.current_task()
            assert task is not None
            tasks.append(task)
            return await main

        def on_sigint(signum: int, frame: FrameType | None) -> None:
            interrupts.append(signum)
            if len(interrupts) > 1 or not tasks or tasks[0].done():
                raise KeyboardInterrupt
            tasks[0].cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake a loop asleep in select()

        ours = (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
        if ours:
            signal.signal(signal.SIGINT, on_sigint)
        try:
            result = runner.run(tracked())
        except asyncio.CancelledError:
            if interrupts:
                raise KeyboardInterrupt from None
            raise
        finally:
            if ours and signal.getsignal(signal.SIGINT) is on_sigint:
                signal.signal(signal.SIGINT, signal.default_int_handler)
        if interrupts:
            raise KeyboardInterrupt
        return result
