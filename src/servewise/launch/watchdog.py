"""The watchdog: ``python -m servewise.launch.watchdog PARENT GRACE``, the group id on stdin.

It is started before the engine and reads the engine's process group id from its standard
input (end of input without one: nothing to watch). Then it waits while its parent
(servewise) lives and the group has members.
When the parent is gone first (killed, crashed), it stops the group: SIGTERM, ``GRACE``
seconds, SIGKILL. When the group is gone first, it just exits. Standard library only, so it
starts fast.
"""

from __future__ import annotations

import os
import sys
import time

POLL_SECONDS = 0.25


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie parent is as good as gone
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
        return stat[stat.rfind(")") + 2:].split()[0] != "Z"
    except OSError:
        return False


def main(argv: list[str]) -> int:
    """Watch ``argv = [parent, grace]``; stop the group read from stdin when the parent dies."""
    parent, grace = int(argv[0]), float(argv[1])
    line = sys.stdin.readline().strip()
    if not line.isdigit():
        return 0  # the engine did not start
    pgid = int(line)
    from servewise.launch.process import group_alive, stop_group

    while True:
        if not group_alive(pgid):
            return 0
        if not _alive(parent):
            stop_group(pgid, grace=grace)
            return 0
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
