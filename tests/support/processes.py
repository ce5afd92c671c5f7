"""Processes as /proc shows them: children of a process, and whether one still runs."""

from __future__ import annotations

from pathlib import Path


def _stat_fields(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command name (which may hold spaces)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def children_of(pid: int) -> set[int]:
    """Processes whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int(_stat_fields(entry.name)[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        return _stat_fields(pid)[0] != "Z"
    except (OSError, IndexError):
        return False
