"""YAML with limits: an alias bomb, a huge or a deeply nested document is refused, not built.

PyYAML's safe loader shares the node an alias names, so a "billion laughs" document of a
few hundred bytes loads quickly, and then costs gigabytes the moment anything walks it
(validation, ``repr``, a JSON or pickle copy). :func:`load_yaml_limited` therefore first
reads the parser's events (cheap: nothing is built), counting the nodes the document has
once every alias is expanded and the deepest nesting, and refuses a document past
:data:`MAX_NODES`, :data:`MAX_DEPTH` or :data:`MAX_CHARS` with a :class:`FormatError`
saying what was found and what is allowed; only then is the document loaded.
"""

from __future__ import annotations

from typing import Any

import yaml

from servewise.errors import FormatError

__all__ = ["MAX_CHARS", "MAX_DEPTH", "MAX_NODES", "YamlLimitError", "check_yaml_shape",
           "load_yaml_limited"]

MAX_CHARS = 16 * 2**20
"""The longest YAML text read (the largest shipped recipe file is under 40 kB)."""
MAX_NODES = 1_000_000
"""The most nodes a document may have with its aliases expanded."""
MAX_DEPTH = 100
"""The deepest nesting of lists and mappings."""

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlLimitError(FormatError):
    """A YAML document beyond a limit (alias expansion, nesting, size)."""


def _refuse(what: str, expected: str, found: str, source: str | None) -> YamlLimitError:
    return YamlLimitError("YAML document", offset=0, expected=expected, found=found,
                          source=source, hint=f"{what}: this is not a recipe file servewise "
                          "writes or ships; remove it, or fix the file")


def check_yaml_shape(text: str, *, source: str | None = None, max_nodes: int = MAX_NODES,
                     max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`YamlLimitError` when ``text`` is past a limit; ``yaml.YAMLError`` when
    it is not YAML at all."""
    if len(text) > MAX_CHARS:
        raise _refuse("the file is too large", f"at most {MAX_CHARS} characters",
                      f"{len(text)} characters", source)
    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = []
    count = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            count += sizes.get(event.anchor or "", 1)
        elif isinstance(event, yaml.ScalarEvent):
            count += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            stack.append((event.anchor, count))
            count += 1
            if len(stack) > max_depth:
                raise _refuse("the document nests too deeply", f"at most {max_depth} levels",
                              f"more than {max_depth}", source)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, start = stack.pop()
            if anchor:
                sizes[anchor] = count - start
        if count > max_nodes:
            raise _refuse("aliases expand the document too far (an alias bomb?)",
                          f"at most {max_nodes} nodes with aliases expanded",
                          f"more than {max_nodes}", source)


def load_yaml_limited(text: str, *, source: str | None = None) -> Any:
    """``text`` loaded with the safe loader once :func:`check_yaml_shape` accepts it."""
    check_yaml_shape(text, source=source)
    return yaml.load(text, Loader=_LOADER)
