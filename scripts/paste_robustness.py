"""Does diagnose keep its answer when a log is pasted another way?

Takes the rule-writing part of the diagnose corpus (never the measure-only part), keeps the
excerpts whose category diagnose gets right, and pastes each again in common shapes: Windows
line ends, a markdown block indented by four spaces, a quote, line numbers from ``cat -n``,
tabs for indentation, ``docker logs -t`` timestamps, docker compose's service prefix, an
issue's ``<details>`` block, ANSI colour codes around each line, lines wrapped at word breaks
at 120 and 80 columns (an editor's copy; ``fmt``: the space at the break dropped), and lines
cut mid-word at 120 and 100 columns (a terminal's copy). For each shape it prints how many
answers changed, and the first few ids. Usage::

    .venv/bin/python scripts/paste_robustness.py [SHAPE ...]
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from servewise.diagnose import diagnose_text  # noqa: E402
from support.diagnose_corpus import load_corpus  # noqa: E402


def _wrap(width: int, *, keep_space: bool = True) -> Callable[[str], str]:
    def wrap(text: str) -> str:
        out: list[str] = []
        for line in text.split("\n"):
            out.extend(textwrap.wrap(line, width, drop_whitespace=not keep_space,
                                     replace_whitespace=False) or [""])
        return "\n".join(out)
    return wrap


SHAPES: dict[str, Callable[[str], str]] = {
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "indented block": lambda text: "\n".join(f"    {line}" for line in text.split("\n")),
    "quote": lambda text: "\n".join(f"> {line}" for line in text.split("\n")),
    "cat -n": lambda text: "\n".join(f"{n:6d}\t{line}"
                                     for n, line in enumerate(text.split("\n"), 1)),
    "tabs": lambda text: text.replace("    ", "\t"),
    "docker logs -t": lambda text: "\n".join(f"2025-06-01T10:00:{n % 60:02d}.123456789Z {line}"
                                             for n, line in enumerate(text.split("\n"))),
    "compose": lambda text: "\n".join(f"vllm-server-1  | {line}" for line in text.split("\n")),
    "details block": lambda text: (
        f"<details><summary>log</summary>\n\n```\n{text}\n```\n</details>"),
    "ansi colours": lambda text: "\n".join(f"\x1b[0;36m{line}\x1b[0m" for line in text.split("\n")),
    "wrap 120": _wrap(120),
    "wrap 80": _wrap(80),
    "fmt 80": _wrap(80, keep_space=False),
    "terminal 120": lambda text: "\n".join(
        line[i:i + 120] for line in text.split("\n") for i in range(0, max(len(line), 1), 120)),
    "terminal 100": lambda text: "\n".join(
        line[i:i + 100] for line in text.split("\n") for i in range(0, max(len(line), 1), 100)),
}


def _category(text: str) -> str | None:
    root = diagnose_text(text).root_cause
    return root.category if root is not None else None


def main() -> None:
    """Print, per shape, how many right answers changed."""
    right = [e for e in load_corpus() if e.part == "write" and _category(e.text) == e.category]
    print(f"{len(right)} rule-writing excerpts answered right as pasted")
    for name in sys.argv[1:] or list(SHAPES):
        shape = SHAPES[name]
        changed = [e.id for e in right if _category(shape(e.text)) != e.category]
        print(f"{name}: {len(changed)} changed {changed[:6]}")


if __name__ == "__main__":
    main()
