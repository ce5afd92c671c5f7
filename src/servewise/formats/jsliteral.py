"""JavaScript modules that hold data: ``export const config = {...}`` read without running them.

SGLang's cookbook keeps its serving recipes as plain object and array literals in ``.jsx``
modules. :func:`read_module` reads such a module's top-level ``const``/``let``/``var``
declarations (exported or not) into plain Python data: objects become ``dict`` (keys in
source order), arrays ``list``, strings ``str``, numbers ``int`` or ``float``, ``true``/
``false`` ``bool``, ``null``/``undefined`` ``None``.

It reads what a JSON-minded person writes in JavaScript: unquoted keys (and number keys,
which JavaScript turns into strings), single-, double- and backtick-quoted strings with their
escapes, ``//`` and ``/* */`` comments, trailing commas, hexadecimal/octal/binary numbers,
``1_000`` separators, signs, ``NaN`` and ``Infinity``. A name that refers to a constant
declared earlier in the same module is replaced by its value, and ``...name`` spreads such a
constant into an object or array.

It is not a JavaScript engine: anything else (a call, an arrow function, an operator, a
template with ``${}``, a name it cannot resolve, a spread of one) is an
:class:`UnknownShape` — kept in place of the value (in an array or as an object's value),
listed with its field path in :attr:`JsModule.unknown` — and the reading goes on. Text that
is not valid at all (an unterminated string, a missing ``:``, unbalanced brackets) raises
:class:`~servewise.errors.FormatError` with the offset, what was expected and what was found.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from servewise.errors import FormatError

__all__ = ["JsModule", "UnknownShape", "line_column", "read_module", "read_value"]

_WHAT = "JavaScript literal"
_IDENT_START = "_$"
_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_OPERATORS = ".([?+-*/%&|<>=!^`"
"""What may follow a value to make it a bigger expression (an operator, a call, a member)."""
_KEYWORD_VALUES: dict[str, Any] = {"true": True, "false": False, "null": None,
                                   "undefined": None, "NaN": math.nan, "Infinity": math.inf}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


@dataclass(frozen=True)
class UnknownShape:
    """A part of the module the reader does not evaluate (it is not a literal)."""

    path: str
    """Where: ``config.cells[3].flags`` (``export`` names first), ``(module)`` at top level."""
    kind: str
    """What it is: ``call``, ``identifier``, ``spread``, ``template with ${}``, ``expression``,
    ``computed key``, ``method``, ``statement``."""
    offset: int
    """Character offset in the module's text."""
    line: int
    text: str
    """The source text, cut to 80 characters."""

    def __str__(self) -> str:
        return f"{self.path}: {self.kind} at line {self.line}: {self.text}"


@dataclass(frozen=True)
class JsModule:
    """The top-level declarations of a module and what in them was not a literal."""

    values: Mapping[str, Any]
    """Every declared name → its value (exported or not), in source order."""
    exports: tuple[str, ...]
    """The names the module exports (``export const NAME``; ``default`` for
    ``export default``)."""
    unknown: tuple[UnknownShape, ...] = field(default=())

    def export(self, name: str) -> Any:
        """The value of an exported name (None when the module does not export it)."""
        return self.values.get(name) if name in self.exports else None

    def unknown_under(self, path: str) -> list[UnknownShape]:
        """The unknown shapes at ``path`` or inside it."""
        return [item for item in self.unknown
                if item.path == path or item.path.startswith((path + ".", path + "["))]


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _is_ident_start(ch: str) -> bool:
    return ch.isalpha() or ch in _IDENT_START


def _is_ident_part(ch: str) -> bool:
    return ch.isalnum() or ch in _IDENT_START or ch in "\u200c\u200d"


def _join(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


class _Parser:
    """A recursive-descent reader over the module's text."""

    def __init__(self, text: str, source: str | None) -> None:
        self.text = text
        self.pos = 0
        self.source = source
        self.consts: dict[str, Any] = {}
        self.unknown: list[UnknownShape] = []


    def fail(self, expected: str, offset: int | None = None) -> FormatError:
        at = self.pos if offset is None else offset
        line, column = line_column(self.text, at)
        found = repr(self.text[at:at + 20]) if at < len(self.text) else "the end of the input"
        return FormatError(_WHAT, offset=at, expected=expected,
                           found=f"{found} (line {line}, column {column})", source=self.source,
                           hint="data modules must hold plain literals")

    def note(self, path: str, kind: str, start: int, end: int) -> UnknownShape:
        snippet = " ".join(self.text[start:end].split())
        shape = UnknownShape(path or "(module)", kind, start, line_column(self.text, start)[0],
                             snippet if len(snippet) <= 80 else snippet[:79] + "…")
        self.unknown.append(shape)
        return shape

    def peek(self, ahead: int = 0) -> str:
        at = self.pos + ahead
        return self.text[at] if at < len(self.text) else ""

    def startswith(self, word: str) -> bool:
        return self.text.startswith(word, self.pos)


    def skip_space(self) -> None:
        text, size = self.text, len(self.text)
        while self.pos < size:
            ch = text[self.pos]
            if ch.isspace() or ch == "\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = size if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("'*/' closing the comment")
                self.pos = end + 2
            else:
                return

    def word(self) -> str:
        start = self.pos
        if self.pos < len(self.text) and _is_ident_start(self.text[self.pos]):
            self.pos += 1
            while self.pos < len(self.text) and _is_ident_part(self.text[self.pos]):
                self.pos += 1
        return self.text[start:self.pos]

    def expect(self, char: str) -> None:
        self.skip_space()
        if self.peek() != char:
            raise self.fail(repr(char))
        self.pos += 1


    def string(self) -> str | None:
        """A quoted string at ``pos``; None for a template with ``${}`` (left unread)."""
        quote, start = self.peek(), self.pos
        self.pos += 1
        out: list[str] = []
        text, size = self.text, len(self.text)
        while True:
            if self.pos >= size:
                raise self.fail(f"{quote} closing the string that starts at offset {start}")
            ch = text[self.pos]
            if ch == quote:
                self.pos += 1
                return "".join(out)
            if ch == "\n" and quote != "`":
                raise self.fail(f"{quote} before the end of the line (string at offset {start})")
            if quote == "`" and text.startswith("${", self.pos):
                self.pos = start
                return None
            if ch == "\\":
                out.append(self.escape())
                continue
            out.append(ch)
            self.pos += 1

    def escape(self) -> str:
        self.pos += 1
        ch = self.peek()
        if not ch:
            raise self.fail("an escaped character")
        self.pos += 1
        if ch in _ESCAPES and not (ch == "0" and self.peek().isdigit()):
            return _ESCAPES[ch]
        if ch == "\r" and self.peek() == "\n":
            self.pos += 1
            return ""
        if ch in "\n\u2028\u2029\r":
            return ""
        if ch == "x":
            return self.hex_digits(2)
        if ch == "u":
            if self.peek() == "{":
                end = self.text.find("}", self.pos)
                if end < 0:
                    raise self.fail("'}' closing the \\u{…} escape")
                digits = self.text[self.pos + 1:end]
                self.pos = end + 1
                return self.code_point(digits, end)
            return self.hex_digits(4)
        return ch

    def hex_digits(self, count: int) -> str:
        digits = self.text[self.pos:self.pos + count]
        self.pos += count
        return self.code_point(digits, self.pos - count, exact=count)

    def code_point(self, digits: str, at: int, exact: int | None = None) -> str:
        valid = bool(digits) and all(c in "0123456789abcdefABCDEF" for c in digits) and (
            exact is None or len(digits) == exact)
        if not valid or int(digits, 16) > 0x10FFFF:
            raise self.fail("hexadecimal digits of an escape", at)
        return chr(int(digits, 16))

    def number(self) -> int | float:
        start = self.pos
        sign = 1
        if self.peek() in "+-":
            sign = -1 if self.peek() == "-" else 1
            self.pos += 1
            self.skip_space()
        word_start = self.pos
        word = self.word()
        if word in ("Infinity", "NaN"):
            return sign * (math.inf if word == "Infinity" else math.nan)
        self.pos = word_start
        text = self.text
        while self.pos < len(text) and (text[self.pos].isalnum() or text[self.pos] in "._"
                                         or (text[self.pos] in "+-"
                                             and text[self.pos - 1] in "eE"
                                             and not text[word_start:self.pos].lower()
                                             .startswith("0x"))):
            self.pos += 1
        raw = text[word_start:self.pos].replace("_", "")
        try:
            lowered = raw.lower()
            if lowered[:2] in ("0x", "0o", "0b"):
                return sign * int(raw, {"0x": 16, "0o": 8, "0b": 2}[lowered[:2]])
            if raw.isdigit():
                return sign * int(raw)
            value = float(raw)
        except (ValueError, IndexError, KeyError):
            raise self.fail("a number", start) from None
        if not math.isfinite(value) or raw.startswith(("+", "-")):
            raise self.fail("a number", start)
        return sign * value


    def value(self, path: str) -> Any:
        """One value; a construct that is not a literal is skipped and noted."""
        self.skip_space()
        start = self.pos
        found = self.primary(path)
        self.skip_space()
        if self.peek() and self.peek() in _OPERATORS:
            self.skip_expression()
            return self.note(path, "expression", start, self.pos)
        return found

    def primary(self, path: str) -> Any:
        ch = self.peek()
        start = self.pos
        if not ch:
            raise self.fail("a value")
        if ch == "{":
            return self.object(path)
        if ch == "[":
            return self.array(path)
        if ch in "'\"`":
            text = self.string()
            if text is None:
                self.skip_template()
                return self.note(path, "template with ${}", start, self.pos)
            return text
        if ch.isdigit() or ch in "+-." or self.startswith("Infinity") or self.startswith("NaN"):
            if ch in "+-" and not (self.peek(1).isdigit() or self.peek(1) in ". \tI"):
                raise self.fail("a value")
            if ch == "." and not self.peek(1).isdigit():
                raise self.fail("a value")
            return self.number()
        if _is_ident_start(ch):
            word = self.word()
            if word in _KEYWORD_VALUES:
                return _KEYWORD_VALUES[word]
            self.skip_space()
            if self.peek() in "(.[=" or word in ("new", "function", "async", "class"):
                self.skip_expression()
                kind = "call" if "(" in self.text[start:self.pos] else "expression"
                return self.note(path, kind, start, self.pos)
            if word in self.consts:
                return self.consts[word]
            return self.note(path, "identifier", start, self.pos)
        if ch == "(":
            self.skip_expression()
            kind = "function" if "=>" in self.text[start:self.pos] else "expression"
            return self.note(path, kind, start, self.pos)
        raise self.fail("a value (object, array, string, number, true, false or null)")

    def object(self, path: str) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while True:
            self.skip_space()
            ch = self.peek()
            if ch == "}":
                self.pos += 1
                return out
            start = self.pos
            if self.startswith("..."):
                self.pos += 3
                spread = self.value(path)
                if isinstance(spread, dict):
                    out.update(spread)
                elif not isinstance(spread, UnknownShape):
                    self.note(path, "spread", start, self.pos)
                else:
                    self.unknown.remove(spread)
                    self.note(path, "spread", start, self.pos)
            else:
                key = self.key(path)
                if key is None:
                    continue
                self.skip_space()
                if self.peek() == "(":
                    self.skip_expression()
                    self.note(_join(path, key), "method", start, self.pos)
                elif self.peek() in ",}":
                    out[key] = self.consts[key] if key in self.consts else \
                        self.note(_join(path, key), "identifier", start, self.pos)
                else:
                    self.expect(":")
                    out[key] = self.value(_join(path, key))
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise self.fail("',' or '}' in the object")

    def key(self, path: str) -> str | None:
        ch = self.peek()
        start = self.pos
        if ch in "'\"":
            text = self.string()
            assert text is not None
            return text
        if ch == "`":
            raise self.fail("a property name")
        if ch == "[":
            self.skip_balanced()
            self.skip_space()
            if self.peek() == ":":
                self.pos += 1
                self.skip_expression()
            self.note(path, "computed key", start, self.pos)
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
            return None
        if ch.isdigit() or (ch == "." and self.peek(1).isdigit()):
            number = self.number()
            return str(int(number)) if float(number).is_integer() else repr(number)
        if _is_ident_start(ch):
            return self.word()
        raise self.fail("a property name or '}'")

    def array(self, path: str) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while True:
            self.skip_space()
            ch = self.peek()
            if ch == "]":
                self.pos += 1
                return out
            if ch == ",":  # a hole: [1, , 2]
                self.pos += 1
                out.append(None)
                continue
            where = f"{path}[{len(out)}]"
            start = self.pos
            if self.startswith("..."):
                self.pos += 3
                spread = self.value(where)
                if isinstance(spread, list):
                    out.extend(spread)
                else:
                    if isinstance(spread, UnknownShape):
                        self.unknown.remove(spread)
                    out.append(self.note(where, "spread", start, self.pos))
            else:
                out.append(self.value(where))
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise self.fail("',' or ']' in the array")


    def skip_balanced(self) -> None:
        """From an opening bracket to its match, over strings, templates and comments."""
        stack = [_CLOSERS[self.peek()]]
        opened = self.pos
        self.pos += 1
        while stack:
            self.skip_space()
            ch = self.peek()
            if not ch:
                raise self.fail(f"{stack[-1]!r} closing the bracket at offset {opened}")
            if ch in "'\"":
                self.string()
            elif ch == "`":
                self.skip_template()
            elif ch in _CLOSERS:
                stack.append(_CLOSERS[ch])
                self.pos += 1
            elif ch in ")]}":
                if ch != stack[-1]:
                    raise self.fail(repr(stack[-1]))
                stack.pop()
                self.pos += 1
            else:
                self.pos += 1

    def skip_template(self) -> None:
        """Over a backtick template, ``${…}`` parts included."""
        start = self.pos
        self.pos += 1
        while True:
            ch = self.peek()
            if not ch:
                raise self.fail(f"` closing the template that starts at offset {start}")
            if ch == "\\":
                self.pos += 2
            elif ch == "`":
                self.pos += 1
                return
            elif self.startswith("${"):
                self.pos += 1
                self.skip_balanced()
            else:
                self.pos += 1

    def skip_expression(self) -> None:
        """To the ``,``, ``;`` or closing bracket that ends the expression (not past it)."""
        while True:
            self.skip_space()
            ch = self.peek()
            if not ch or ch in ",;)]}":
                return
            if ch in "'\"":
                self.string()
            elif ch == "`":
                self.skip_template()
            elif ch in _CLOSERS:
                self.skip_balanced()
            else:
                self.pos += 1


    def module(self) -> JsModule:
        exports: list[str] = []
        while True:
            self.skip_space()
            if self.pos >= len(self.text):
                return JsModule(dict(self.consts), tuple(exports), tuple(self.unknown))
            start = self.pos
            word = self.word()
            exported = word == "export"
            if exported:
                self.skip_space()
                word = self.word()
            if exported and word == "default":
                self.consts["default"] = self.value("default")
                exports.append("default")
            elif word in ("const", "let", "var"):
                for name in self.declarations():
                    if exported:
                        exports.append(name)
            elif word == "import":
                self.skip_import()
                self.note("(module)", "import", start, self.pos)
            elif word == "" and self.peek() == ";":
                pass
            elif word == "" and not (exported and self.peek() == "{"):
                raise self.fail("a declaration (export const NAME = …)")
            else:
                self.skip_statement()
                self.note("(module)", "statement", start, self.pos)
            self.skip_space()
            if self.peek() == ";":
                self.pos += 1

    def declarations(self) -> list[str]:
        names = []
        while True:
            self.skip_space()
            name = self.word()
            if not name:
                raise self.fail("a name to declare")
            self.expect("=")
            self.consts[name] = self.value(name)
            names.append(name)
            self.skip_space()
            if self.peek() != ",":
                return names
            self.pos += 1

    def skip_import(self) -> None:
        """Over an ``import … from "x"`` (or ``import "x"``): to its module's name."""
        while True:
            self.skip_space()
            ch = self.peek()
            if not ch or ch == ";":
                return
            if ch in "'\"":
                self.string()
                return
            if ch == "{":
                self.skip_balanced()
            else:
                self.pos += 1

    def skip_statement(self) -> None:
        """Over a statement the reader does not read (a function, an if): to its ``;`` or the
        end of its first braced block."""
        while True:
            self.skip_space()
            ch = self.peek()
            if not ch or ch == ";":
                return
            if ch in "'\"":
                self.string()
            elif ch == "`":
                self.skip_template()
            elif ch in _CLOSERS:
                braced = ch == "{"
                self.skip_balanced()
                if braced:
                    return
            elif ch in ")]}":
                raise self.fail("a statement")
            else:
                self.pos += 1


def _decode(data: str | bytes, source: str | None) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(_WHAT, offset=exc.start, expected="UTF-8 text",
                          found=f"byte {data[exc.start]:#04x}", source=source) from None


def read_module(data: str | bytes, *, source: str | None = None) -> JsModule:
    """The top-level declarations of a JavaScript module (see the module text).

    ``source`` names the input in error messages. Raises FormatError on text that is not
    a sequence of declarations of literals (and skippable statements)."""
    return _Parser(_decode(data, source), source).module()


def read_value(
    data: str | bytes, *, source: str | None = None,
) -> tuple[Any, tuple[UnknownShape, ...]]:
    """One literal (``{…}``, ``[…]``, a string, a number…) and the shapes in it that were not
    literals; anything after it but whitespace and comments is a FormatError."""
    parser = _Parser(_decode(data, source), source)
    value = parser.value("")
    parser.skip_space()
    if parser.pos < len(parser.text):
        raise parser.fail("the end of the input after the value")
    return value, tuple(parser.unknown)
