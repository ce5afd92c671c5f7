"""One pass over a library's bytes: fatbin containers, embedded cubins, dispatch evidence.

:class:`StreamScanner` is a push parser. A source feeds it consecutive chunks of
one file (an archive member being inflated, or a file on disk) and it never
needs to seek, so the section table at the end of an ELF file is not needed.
It finds every fatbin container by its magic and validates it (the container
header, then each entry header in turn until the container's declared end), skips
entry payloads without holding them, buffers a raw cubin (ELF machine 190) only
as far as its own size (at most ``cubin_limit`` bytes), and hands all remaining
host bytes to an :class:`~servewise.formats.dispatch_strings.DispatchStringCollector` — except
segments that hold only machine code, which the program headers at the start of
the file point out (no string lives there). Every byte also goes to a
:class:`~servewise.formats.dynamic.DynamicCollector`, which reads the library's
SONAME, needs and exported symbols on the way.

Memory stays bounded: at most one chunk, one entry header, or one cubin is held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from servewise.errors import FormatError
from servewise.formats import cubin as cubin_format
from servewise.formats import fatbin
from servewise.formats._reader import BytesReader
from servewise.formats.dispatch_strings import DispatchStringCollector, DispatchStrings
from servewise.formats.dynamic import DynamicCollector
from servewise.formats.dynamic_info import DynamicInfo
from servewise.formats.elf import parse_elf_header

_ELF_MAGIC = b"\x7fELF"
_MAGICS = (fatbin.CONTAINER_MAGIC_BYTES, _ELF_MAGIC)
_HOLD = 3  # bytes kept back in host mode: a magic may straddle two chunks
_ELF_PREFIX = 64

#: Largest raw cubin buffered to read its notes (the issue's per-member memory cap).
CUBIN_LIMIT = 64 * 2**20


@dataclass(frozen=True)
class FoundCubin:
    """A raw CUDA ELF (cubin) found in the stream, not inside a fatbin."""

    offset: int
    """Where the cubin starts in the scanned file."""
    info: cubin_format.CubinInfo | None
    """What its header and notes say; ``None`` when it was too large or broken to read."""
    arch_hint: str | None = None
    """The arch read from ``e_flags`` alone, when ``info`` could not be read."""


@dataclass(frozen=True)
class StreamFindings:
    """Everything one pass found in one file."""

    size: int
    """Bytes scanned."""
    host_machine: int | None
    """``e_machine`` of the file itself when it starts with an ELF header (62 = x86-64)."""
    containers: tuple[fatbin.FatbinContainer, ...]
    """Fatbin containers, in file order (a truncated last one keeps the entries read)."""
    cubins: tuple[FoundCubin, ...]
    """Raw cubins: the file itself when it is one, or byte arrays embedded in host data."""
    evidence: DispatchStrings
    """JIT-dispatch evidence from the host bytes."""
    warnings: tuple[str, ...] = field(default=())
    """Problems that did not stop the scan (each names the offset)."""
    dynamic: DynamicInfo | None = None
    """SONAME, needs and exported symbols, when the file is a dynamic ELF object."""


class _Mode(Enum):
    HOST = "host"
    ENTRY = "entry"
    SKIP = "skip"
    CUBIN = "cubin"


class StreamScanner:
    """Feed chunks with :meth:`feed`, then call :meth:`finish` once."""

    def __init__(self, *, cubin_limit: int = CUBIN_LIMIT) -> None:
        self._cubin_limit = cubin_limit
        self._buf = bytearray()
        self._pos = 0  # absolute offset of self._buf[0]
        self._mode = _Mode.HOST
        self._skip = 0
        self._container: fatbin.ContainerHeader | None = None
        self._entries: list[fatbin.FatbinEntry] = []
        self._cubin_span = 0
        self._containers: list[fatbin.FatbinContainer] = []
        self._cubins: list[FoundCubin] = []
        self._warnings: list[str] = []
        self._evidence = DispatchStringCollector()
        self._dynamic = DynamicCollector()
        self._host_machine: int | None = None
        self._finished = False
        self._dynamic_info: DynamicInfo | None = None
        # Per magic: absolute offset of the next known occurrence, and how far none exists.
        self._next_magic = [-1] * len(_MAGICS)
        self._clear_until = [0] * len(_MAGICS)

    # -- input ---------------------------------------------------------------

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        """Scan the next chunk of the file."""
        view = memoryview(chunk).cast("B")
        self._dynamic.feed(view)
        if self._mode is _Mode.SKIP and not self._buf:
            taken = min(self._skip, len(view))
            self._skip -= taken
            self._pos += taken
            view = view[taken:]
            if self._skip == 0:
                self._after_skip()
        if len(view):
            self._buf += view
        self._process(final=False)

    def finish(self) -> StreamFindings:
        """End of file: report what was found, with warnings for anything cut short."""
        if not self._finished:
            self._finished = True
            self._process(final=True)
            self._close_open_work()
            self._dynamic_info = self._dynamic.result()
            if self._dynamic.problem:
                self._warnings.append(f"dynamic symbols not read: {self._dynamic.problem}")
        return StreamFindings(
            size=self._pos + len(self._buf),
            host_machine=self._host_machine,
            containers=tuple(self._containers),
            cubins=tuple(self._cubins),
            evidence=self._evidence.result(),
            warnings=tuple(self._warnings),
            dynamic=self._dynamic_info,
        )

    # -- state machine -------------------------------------------------------

    def _process(self, *, final: bool) -> None:
        while True:
            if self._mode is _Mode.HOST:
                progressed = self._host(final)
            elif self._mode is _Mode.ENTRY:
                progressed = self._entry(final)
            elif self._mode is _Mode.SKIP:
                progressed = self._skip_bytes()
            else:
                progressed = self._cubin(final)
            if not progressed:
                return

    def _consume(self, count: int) -> None:
        del self._buf[:count]
        self._pos += count

    def _host(self, final: bool) -> bool:
        buf = self._buf
        hits = [i for i in (self._find(k) for k in range(len(_MAGICS))) if i >= 0]
        if not hits:
            keep = 0 if final else min(_HOLD, len(buf))
            upto = len(buf) - keep
            if upto > 0:
                self._host_evidence(upto)
                self._consume(upto)
            return False
        start = min(hits)
        if start:
            self._host_evidence(start)
            self._consume(start)
        if buf.startswith(fatbin.CONTAINER_MAGIC_BYTES):
            return self._open_container(final)
        return self._open_elf(final)

    def _host_evidence(self, count: int) -> None:
        """Give the next ``count`` buffered host bytes to the evidence collector.

        Bytes in a segment that holds only machine code (known from the program headers)
        are left out: strings, names and hashes never lie there, and code is a large part of
        a library's host bytes.
        """
        start, end = self._pos, self._pos + count
        for low, high in self._dynamic.code_ranges:
            if high <= start or low >= end:
                continue
            if low > start:
                self._evidence.feed(bytes(self._buf[start - self._pos : low - self._pos]))
            self._evidence.cut()
            start = min(high, end)
        if start < end:
            self._evidence.feed(bytes(self._buf[start - self._pos : count]))

    def _find(self, which: int) -> int:
        """Position of magic ``which`` in the buffer, or -1; remembers what earlier searches saw."""
        known = self._next_magic[which]
        if known >= self._pos:
            return known - self._pos
        clear = self._clear_until[which]
        buf = self._buf
        start = max(clear - self._pos, 0)
        found = buf.find(_MAGICS[which], start)
        if found < 0:
            self._clear_until[which] = self._pos + max(len(buf) - _HOLD, 0)
            return -1
        self._next_magic[which] = self._pos + found
        return found

    def _not_here(self, count: int) -> bool:
        """The magic at the buffer start was not what it looked like: treat it as host bytes."""
        self._host_evidence(count)
        self._consume(count)
        return True

    def _open_container(self, final: bool) -> bool:
        if len(self._buf) < fatbin.CONTAINER_HEADER_SIZE:
            if not final:
                return False
            self._warnings.append(
                f"the file ends {len(self._buf)} bytes into the fatbin container header "
                f"at offset {self._pos:#x}"
            )
            return self._not_here(len(self._buf))
        try:
            header = fatbin.parse_container_header(
                bytes(self._buf[: fatbin.CONTAINER_HEADER_SIZE]), base=self._pos
            )
        except FormatError:
            return self._not_here(1)
        self._evidence.cut()
        self._container = header
        self._entries = []
        self._skip = header.header_size
        self._mode = _Mode.SKIP
        return True

    def _open_elf(self, final: bool) -> bool:
        if len(self._buf) < _ELF_PREFIX and not final:
            return False
        prefix = bytes(self._buf[:_ELF_PREFIX])
        try:
            span = cubin_format.cubin_span(prefix)
        except FormatError as error:
            # A CUDA ELF header that is cut short or malformed: note it, keep scanning.
            self._warnings.append(f"cubin at offset {self._pos:#x} unreadable: {error.message}")
            return self._not_here(len(_ELF_MAGIC))
        if span is not None and span < _ELF_PREFIX:
            # Smaller than its own header (e_ehsize 0, no tables): not a cubin to skip over.
            self._warnings.append(
                f"cubin at offset {self._pos:#x} unreadable: it declares a span of {span} bytes"
            )
            return self._not_here(len(_ELF_MAGIC))
        if span is None:
            if self._pos == 0 and len(prefix) >= 20:
                self._host_machine = int.from_bytes(prefix[18:20], "little")
            return self._not_here(len(_ELF_MAGIC))
        self._evidence.cut()
        if span > self._cubin_limit:
            self._warnings.append(
                f"cubin at offset {self._pos:#x} spans {span} bytes, more than the "
                f"{self._cubin_limit}-byte buffer: its arch suffix comes from e_flags only"
            )
            self._cubins.append(FoundCubin(self._pos, None, _eflags_arch(prefix)))
            self._skip = span
            self._mode = _Mode.SKIP
            return True
        self._cubin_span = span
        self._mode = _Mode.CUBIN
        return True

    def _cubin(self, final: bool) -> bool:
        span = self._cubin_span
        if len(self._buf) < span:
            if not final:
                return False
            self._warnings.append(
                f"cubin at offset {self._pos:#x} is cut short: {len(self._buf)} of {span} bytes"
            )
            self._cubins.append(FoundCubin(self._pos, None, _eflags_arch(bytes(self._buf[:64]))))
            self._consume(len(self._buf))
            self._mode = _Mode.HOST
            return False
        data = bytes(self._buf[:span])
        try:
            self._cubins.append(FoundCubin(self._pos, cubin_format.parse_cubin(BytesReader(data))))
        except FormatError as error:
            self._warnings.append(f"cubin at offset {self._pos:#x} unreadable: {error.message}")
            self._cubins.append(FoundCubin(self._pos, None, _eflags_arch(data[:64])))
        self._consume(span)
        self._mode = _Mode.HOST
        return True

    def _entry(self, final: bool) -> bool:
        container = self._container
        assert container is not None
        if self._pos >= container.end:
            self._close_container()
            return True
        need = min(fatbin.ENTRY_HEADER_MIN, container.end - self._pos)
        if len(self._buf) < need:
            return False if not final else self._abandon_container("the file ends")
        try:
            size = fatbin.entry_header_size(bytes(self._buf[:need]))
            if len(self._buf) < size and not final and size <= fatbin.ENTRY_HEADER_MAX:
                return False
            entry = fatbin.parse_entry_header(
                bytes(self._buf[:size]), base=self._pos, limit=container.end
            )
        except FormatError as error:
            return self._abandon_container(error.message)
        self._entries.append(entry)
        self._consume(entry.header_size)
        self._skip = entry.padded_size
        self._mode = _Mode.SKIP
        return True

    def _skip_bytes(self) -> bool:
        taken = min(self._skip, len(self._buf))
        if taken:
            self._consume(taken)
            self._skip -= taken
        if self._skip:
            return False
        self._after_skip()
        return True

    def _after_skip(self) -> None:
        self._mode = _Mode.ENTRY if self._container is not None else _Mode.HOST

    def _close_container(self) -> None:
        assert self._container is not None
        self._containers.append(fatbin.FatbinContainer(self._container, tuple(self._entries)))
        self._container = None
        self._entries = []
        self._mode = _Mode.HOST

    def _abandon_container(self, why: str) -> bool:
        container = self._container
        assert container is not None
        self._warnings.append(
            f"fatbin container at offset {container.offset:#x} broken at offset "
            f"{self._pos:#x} after {len(self._entries)} entries: {why}"
        )
        self._close_container()
        return True

    def _close_open_work(self) -> None:
        if self._container is not None:
            self._warnings.append(
                f"fatbin container at offset {self._container.offset:#x} declares "
                f"{self._container.end - self._container.offset} bytes but the file ends "
                f"at offset {self._pos + len(self._buf):#x}"
            )
            self._close_container()
        elif self._mode is _Mode.SKIP and self._skip:
            self._warnings.append(
                f"the file ends {self._skip} bytes before the end of the cubin it holds"
            )
        self._mode = _Mode.HOST


def _eflags_arch(prefix: bytes) -> str | None:
    """``sm_NN`` from a cubin's ``e_flags`` (suffix unknown), for cubins not fully read."""
    try:
        number = cubin_format.eflags_sm(parse_elf_header(BytesReader(prefix)))
    except FormatError:
        return None
    return f"sm_{number}" if number else None

