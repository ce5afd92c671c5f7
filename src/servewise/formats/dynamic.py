"""What a shared object says about itself, read in one forward pass: SONAME, needs, exports.

:class:`DynamicCollector` is fed every byte of one file in order (the same
chunks the stream scanner gets) and never seeks. From the ELF header and the
program headers at the start it learns where the dynamic section lies; it keeps
the start of the file (the first loadable segment, where every linker puts
``.dynsym`` and ``.dynstr``; at most :data:`HEAD_LIMIT` bytes), catches the
dynamic section and the section header table as they stream past, and at the
end decodes:

* ``DT_SONAME`` and ``DT_NEEDED`` (``libnccl.so.2``, ``libcudart.so.13``);
* the exported dynamic symbols: their number, the Python extension modules they
  define (``PyInit_<name>``), and their *namespaces* — the outer C++ namespace of
  a mangled name (``_ZN7mscclpp…`` → ``mscclpp``) or the lower-case prefix of a C
  name (``ncclCommInitRank`` → ``nccl``). Tables of more than :data:`MAX_SAMPLED`
  symbols are sampled (counts are then estimates).

These identify a library by content, whatever its file is called. Files that are
not dynamic ELF objects (cubins, relocatable objects, non-ELF) yield ``None``.
Everything is bounded: nothing but the head, the dynamic section (at most
:data:`MAX_DYNAMIC` bytes) and the section table (at most :data:`MAX_SECTION_TABLE`)
is held.
"""

from __future__ import annotations

import random
import re
import struct
from collections import Counter
from collections.abc import Iterable

from servewise.errors import FormatError
from servewise.formats._reader import BytesReader
from servewise.formats.dynamic_info import DynamicInfo
from servewise.formats.elf import EM_CUDA, ElfHeader, decode_elf_header

#: Most bytes of a file's start kept to read its dynamic symbols and strings.
HEAD_LIMIT = 32 * 2**20
#: Largest dynamic section read.
MAX_DYNAMIC = 64 * 2**10
#: Largest section header table read.
MAX_SECTION_TABLE = 4 * 2**20
#: Namespaces kept per library, the most frequent first.
MAX_NAMESPACES = 32
#: Symbols examined for namespaces; a larger table is sampled (a fixed pseudo-random sample).
MAX_SAMPLED = 16384
#: ``DT_NEEDED`` entries kept.
MAX_NEEDED = 64

PT_LOAD = 1
PT_DYNAMIC = 2
PF_X = 1
SHT_DYNSYM = 11
DT_NULL, DT_NEEDED, DT_HASH, DT_STRTAB, DT_SYMTAB = 0, 1, 4, 5, 6
DT_STRSZ, DT_SYMENT, DT_SONAME = 10, 11, 14
STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 1, 2, 10
STT_SECTION, STT_FILE = 3, 4
STV_DEFAULT, STV_PROTECTED = 0, 3

_PHDR = {64: ("IIQQQQQQ", 56), 32: ("IIIIIIII", 32)}
_DYN = {64: "qQ", 32: "iI"}
_SYM = {64: ("IBBHQQ", 24), 32: ("IIIBBH", 16)}
_SHDR = {64: ("IIQQQQIIQQ", 64), 32: ("IIIIIIIIII", 40)}
#: After ``_Z``: an optional special-name prefix (guard variable, vtable, type info, TLS),
#: an optional local-entity ``Z``, then a nested name ``N`` with its qualifiers, then
#: ``St``/``Sa``… (std) or the length of the outer namespace's name.
_MANGLED_NESTED = re.compile(rb"(?:GV|T[VISTHW])?Z?N[rVK]*[RO]?(?:(St|S[absiod])|([1-9]\d*))")
_C_PREFIX = re.compile(rb"[a-z][a-z0-9]{1,23}?(?=[A-Z_\0])")
_EXPORTED_BINDINGS = frozenset({STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE})


def symbol_namespace(name: str) -> str | None:
    """The namespace an exported symbol name belongs to, or ``None``.

    Itanium-mangled names give their outer namespace (``_ZN9deep_gemm3fooEv`` →
    ``deep_gemm``; ``std`` for ``_ZNSt…``; guard variables, vtables and type
    info of a namespaced entity count for its namespace; global functions give
    none). C names give their lower-case prefix (``ncclAllReduce`` → ``nccl``,
    ``nvshmem_init`` → ``nvshmem``); names starting with ``_`` give none.
    """
    data = name.encode("utf-8", "replace") + b"\0"
    found = _namespace_at(data, 0)
    return found.decode("utf-8", "replace") if found else None


def _namespace_at(strtab: bytes, at: int) -> bytes | None:
    """:func:`symbol_namespace` of the NUL-terminated name at ``strtab[at:]``, as bytes."""
    if strtab.startswith(b"_Z", at):
        match = _MANGLED_NESTED.match(strtab, at + 2)
        if match is None:
            return None
        if match.group(1):
            return b"std"
        length = int(match.group(2))
        ident = strtab[match.end() : match.end() + length]
        return ident if len(ident) == length and b"\0" not in ident else None
    match = _C_PREFIX.match(strtab, at)
    return match.group(0) if match else None


class _Range:
    """Bytes ``[start, end)`` of the file, caught as they stream past."""

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end
        self.data = bytearray()

    @property
    def done(self) -> bool:
        return len(self.data) >= self.end - self.start

    def take(self, offset: int, view: memoryview) -> None:
        """Copy what of ``view`` (starting at file offset ``offset``) falls in the range."""
        want = self.start + len(self.data)
        if self.done or offset + len(view) <= want or offset > want:
            return
        self.data += view[want - offset : min(self.end, offset + len(view)) - offset]


class DynamicCollector:
    """Feed a file's bytes in order with :meth:`feed`; :meth:`result` at the end."""

    def __init__(self, *, head_limit: int = HEAD_LIMIT) -> None:
        self._head_limit = head_limit
        self._head = bytearray()
        self._pos = 0
        self._active = True
        self._header: ElfHeader | None = None
        self._loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
        self._code: tuple[tuple[int, int], ...] = ()
        self._dynamic: _Range | None = None
        self._sections: _Range | None = None
        self._problem: str | None = None

    @property
    def code_ranges(self) -> tuple[tuple[int, int], ...]:
        """File ranges of loadable segments that hold only machine code.

        An executable ``PT_LOAD`` that does not start the file: linkers that separate code
        (GNU ld's default ``-z separate-code``, lld) put only ``.init``/``.plt``/``.text``/
        ``.fini`` there, never strings. A first segment that is executable (``-z
        noseparate-code``) also holds the headers and read-only data, so it is not one.
        """
        return self._code

    @property
    def problem(self) -> str | None:
        """Why the dynamic symbols could not be read, when the file looked like it had them."""
        return self._problem

    def feed(self, view: memoryview) -> None:
        """The next bytes of the file."""
        if not self._active:
            self._pos += len(view)
            return
        start = self._pos
        if start < self._head_limit:
            self._head += view[: self._head_limit - start]
        self._advance()
        if self._active:
            for capture in (self._dynamic, self._sections):
                if capture is not None:
                    capture.take(start, view)
        self._pos += len(view)

    def _stop(self, problem: str | None = None) -> None:
        self._active = False
        self._head = bytearray()
        self._problem = problem

    def _advance(self) -> None:
        if self._header is None:
            if len(self._head) < 64 and self._pos < self._head_limit:
                return
            try:
                header = decode_elf_header(BytesReader(bytes(self._head[:64])))
            except FormatError:
                self._stop()
                return
            if header.machine == EM_CUDA or header.phnum == 0:
                self._stop()
                return
            self._header = header
        if not self._loads and self._dynamic is None:
            self._read_program_headers(self._header)

    def _read_program_headers(self, header: ElfHeader) -> None:
        fmt, _size = _PHDR[header.elf_class]
        end = header.phoff + header.phnum * header.phentsize
        if end > self._head_limit:
            self._stop("program headers lie beyond the first bytes")
            return
        if len(self._head) < end:
            return
        fields = struct.Struct(header.endian + fmt)
        dynamic: tuple[int, int] | None = None
        code: list[tuple[int, int]] = []
        for index in range(header.phnum):
            values = fields.unpack_from(self._head, header.phoff + index * header.phentsize)
            if header.elf_class == 64:
                p_type, flags, offset, vaddr, _paddr, filesz = values[:6]
            else:
                p_type, offset, vaddr, _paddr, filesz, _memsz, flags = values[:7]
            if p_type == PT_LOAD:
                self._loads.append((vaddr, offset, filesz))
                if flags & PF_X and offset > 0 and filesz:
                    code.append((offset, offset + filesz))
            elif p_type == PT_DYNAMIC:
                dynamic = (offset, filesz)
        self._code = tuple(sorted(code))
        if dynamic is None or not self._loads:
            self._stop()
            return
        # .dynsym and .dynstr sit in the first loadable segment: keep no more than it.
        first = min(self._loads, key=lambda load: load[1])
        self._head_limit = min(self._head_limit, first[1] + first[2])
        del self._head[self._head_limit :]
        self._dynamic = self._catch(dynamic[0], dynamic[0] + min(dynamic[1], MAX_DYNAMIC))
        table = header.shnum * header.shentsize
        if header.shoff and 0 < table <= MAX_SECTION_TABLE:
            self._sections = self._catch(header.shoff, header.shoff + table)

    def _catch(self, start: int, end: int) -> _Range:
        """A range to catch; what the current chunk has not reached comes from the head."""
        capture = _Range(start, end)
        if start < self._pos:  # before the chunk being fed: only the head can have it
            capture.take(0, memoryview(self._head)[: self._pos])
        return capture

    # -- decoding -------------------------------------------------------------

    def result(self) -> DynamicInfo | None:
        """The library's dynamic identity, or ``None`` when it is not a dynamic ELF object."""
        header = self._header
        if header is None or self._dynamic is None:
            return None
        if not self._dynamic.done:
            self._problem = self._problem or "the file ends before its dynamic section does"
            return None
        tags = self._tags(header, bytes(self._dynamic.data))
        strtab = self._mapped(tags.get(DT_STRTAB, [None])[0], tags.get(DT_STRSZ, [0])[0])
        if strtab is None:
            self._problem = "the dynamic string table is not in the first loadable segment"
            return None
        soname = _string(strtab, tags[DT_SONAME][0]) if DT_SONAME in tags else None
        needed = tuple(
            name for name in (_string(strtab, o) for o in tags.get(DT_NEEDED, [])[:MAX_NEEDED])
            if name
        )
        symbols = self._symbols(header, tags)
        if symbols is None:
            return DynamicInfo(soname, needed, _python_modules(strtab), 0, {}, complete=False)
        exported, namespaces, sampled = _exports(header, symbols, strtab)
        modules = _python_modules(strtab)
        return DynamicInfo(soname, needed, modules, exported + len(modules), namespaces,
                           sampled=sampled)

    def _tags(self, header: ElfHeader, data: bytes) -> dict[int, list[int]]:
        fields = struct.Struct(header.endian + _DYN[header.elf_class])
        tags: dict[int, list[int]] = {}
        for tag, value in fields.iter_unpack(data[: len(data) - len(data) % fields.size]):
            if tag == DT_NULL:
                break
            tags.setdefault(tag, []).append(value)
        return tags

    def _offset(self, vaddr: int | None) -> int | None:
        """The file offset of a virtual address, through the loadable segments."""
        if vaddr is None:
            return None
        for start, offset, filesz in self._loads:
            if start <= vaddr < start + filesz:
                return offset + vaddr - start
        return None

    def _mapped(self, vaddr: int | None, size: int) -> bytes | None:
        """``size`` bytes at ``vaddr`` when the head holds them."""
        offset = self._offset(vaddr)
        if offset is None or size <= 0 or offset + size > len(self._head):
            return None
        return bytes(self._head[offset : offset + size])

    def _symbols(self, header: ElfHeader, tags: dict[int, list[int]]) -> bytes | None:
        """The ``.dynsym`` bytes: sized by the section table, else by ``DT_HASH``'s chain count."""
        offset = self._offset(tags.get(DT_SYMTAB, [None])[0])
        if offset is None:
            return None
        size = self._dynsym_size(header, offset)
        if size is None and DT_HASH in tags:
            table = self._mapped(tags[DT_HASH][0], 8)
            if table is not None:
                size = struct.unpack_from(header.endian + "I", table, 4)[0] * _SYM[
                    header.elf_class
                ][1]
        if size is None or offset + size > len(self._head):
            self._problem = "the dynamic symbol table could not be sized or is not in the head"
            return None
        return bytes(self._head[offset : offset + size])

    def _dynsym_size(self, header: ElfHeader, offset: int) -> int | None:
        if self._sections is None or not self._sections.done:
            return None
        fmt, size = _SHDR[header.elf_class]
        fields = struct.Struct(header.endian + fmt)
        data = self._sections.data
        for index in range(len(data) // max(header.shentsize, size)):
            values = fields.unpack_from(data, index * header.shentsize)
            if values[1] == SHT_DYNSYM and values[4] == offset:
                return int(values[5])
        return None


def _string(strtab: bytes, offset: int) -> str | None:
    if offset >= len(strtab):
        return None
    end = strtab.find(b"\0", offset)
    return strtab[offset : end if end >= 0 else len(strtab)].decode("utf-8", "replace")


def _python_modules(strtab: bytes) -> tuple[str, ...]:
    """``X`` for every ``PyInit_X`` string (only extension modules define one)."""
    found: set[str] = set()
    at = strtab.find(b"\0PyInit_")
    while at >= 0:
        name = _string(strtab, at + 8)
        if name:
            found.add(name)
        at = strtab.find(b"\0PyInit_", at + 8)
    return tuple(sorted(found))


def _exports(header: ElfHeader, symbols: bytes, strtab: bytes) -> tuple[int, dict[str, int], bool]:
    """Exported symbol count and namespaces; estimated from a sample of a large table."""
    fmt, size = _SYM[header.elf_class]
    fields = struct.Struct(header.endian + fmt)
    wide = header.elf_class == 64
    total = len(symbols) // size
    indices: Iterable[int] = range(total)
    if total > MAX_SAMPLED:  # a fixed pseudo-random sample: no stride can alias a pattern
        indices = sorted(random.Random(total).sample(range(total), MAX_SAMPLED))
    scale = total / MAX_SAMPLED if total > MAX_SAMPLED else 1
    exported = 0
    counts: Counter[bytes] = Counter()
    for index in indices:
        values = fields.unpack_from(symbols, index * size)
        if wide:
            name_at, info, other, shndx = values[:4]
        else:
            name_at, _value, _size, info, other, shndx = values
        if (
            shndx == 0
            or name_at >= len(strtab)
            or info >> 4 not in _EXPORTED_BINDINGS
            or info & 0xF in (STT_SECTION, STT_FILE)
            or other & 3 not in (STV_DEFAULT, STV_PROTECTED)
            or strtab[name_at] == 0
            or strtab.startswith(b"PyInit_", name_at)
        ):
            continue
        exported += 1
        namespace = _namespace_at(strtab, name_at)
        if namespace:
            counts[namespace] += 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:MAX_NAMESPACES]
    names = {key.decode("utf-8", "replace"): round(value * scale) for key, value in ranked}
    return round(exported * scale), names, scale > 1
