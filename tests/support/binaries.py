"""Hand-built binaries for tests: ELF files, cubins with notes, fatbin containers and entries."""

from __future__ import annotations

import struct

from servewise.formats import cubin, elf, fatbin


def build_elf(
    sections: list[tuple[str, int, bytes]],
    *,
    bits: int = 64,
    little: bool = True,
    machine: int = elf.EM_CUDA,
    flags: int = 0,
    osabi: int = 65,
    abi_version: int = 8,
    version: int = 1,
    extended: bool = False,
) -> bytes:
    """An ELF with ``sections`` (name, type, data), a ``.shstrtab`` and the table at the end."""
    end = "<" if little else ">"
    ehsize = 64 if bits == 64 else 52
    shdr = end + ("IIQQQQIIQQ" if bits == 64 else "IIIIIIIIII")
    shentsize = struct.calcsize(shdr)
    all_sections = [*sections, (".shstrtab", 3, b"")]
    names = b"\0"
    name_offsets = []
    for name, _, _ in all_sections:
        name_offsets.append(len(names))
        names += name.encode() + b"\0"
    all_sections[-1] = (".shstrtab", 3, names)
    body = b""
    placed = []
    for _, sh_type, data in all_sections:
        offset = ehsize + len(body)
        placed.append(offset)
        if sh_type != elf.SHT_NOBITS:
            body += data + b"\0" * (-len(data) % 8)
    shoff = ehsize + len(body)
    shnum = len(all_sections) + 1
    shstrndx = shnum - 1
    zero = struct.pack(
        shdr, 0, 0, 0, 0, 0, shnum if extended else 0, shstrndx if extended else 0, 0, 0, 0
    )
    table = zero
    rows = zip(all_sections, name_offsets, placed, strict=True)
    for (_, sh_type, data), name_off, offset in rows:
        table += struct.pack(shdr, name_off, sh_type, 0, 0, offset, len(data), 0, 0, 1, 0)
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1 if little else 2, 1, osabi, abi_version])
    ident += b"\0" * 7
    rest = end + ("HHIQQQIHHHHHH" if bits == 64 else "HHIIIIIHHHHHH")
    header = ident + struct.pack(
        rest,
        2,
        machine,
        version,
        0,
        0,
        shoff,
        flags,
        ehsize,
        0,
        0,
        shentsize,
        0 if extended else shnum,
        elf.SHN_XINDEX if extended else shstrndx,
    )
    assert len(header) == ehsize
    return header + body + table


def note(name: bytes, note_type: int, desc: bytes) -> bytes:
    """One ELF note record, name and descriptor padded to 4."""
    name += b"\0"
    return (
        struct.pack("<III", len(name), len(desc), note_type)
        + name
        + b"\0" * (-len(name) % 4)
        + desc
        + b"\0" * (-len(desc) % 4)
    )


def tkinfo(options: str) -> bytes:
    """A version-2 tkinfo note naming ptxas ``options``."""
    strings = b"\0ptxas\0Cuda compilation tools, release 13.0\0Build x\0"
    opts_at = len(strings)
    strings += options.encode() + b"\0"
    desc = struct.pack("<6I", 2, 0, 1, 7, strings.index(b"Build"), opts_at) + strings
    return note(b"NVIDIA Corp", cubin.NT_TKINFO, desc)


def cuinfo(virtual: int, toolkit: int = 130) -> bytes:
    """A cuinfo note: version 2, virtual SM, toolkit version."""
    return note(b"NVIDIA Corp", cubin.NT_CUINFO, struct.pack("<HHHH", 2, virtual, toolkit, 0))


def compat(a_flag: int) -> bytes:
    """A ``.nv.compat`` section like nvcc 13's, attribute 0x09 = ``a_flag``."""
    return (
        bytes([2, 9, a_flag, 0, 2, 2, 1, 0, 3, 7, 1, 1])
        + bytes([4, 0x0B, 8, 0])
        + b"\x09"
        + b"\0" * 7
    )


def make_cubin(
    flags: int,
    *,
    abi: int = 8,
    osabi: int = 65,
    version: int = 1,
    options: str | None = None,
    virtual: int | None = None,
    a_flag: int | None = None,
    extra: list[tuple[str, int, bytes]] | None = None,
) -> bytes:
    """A synthetic cubin with the chosen notes."""
    sections: list[tuple[str, int, bytes]] = [(".text.k", 1, b"\0" * 32)]
    if options is not None:
        sections.append((cubin.NOTE_TKINFO, 7, tkinfo(options)))
    if virtual is not None:
        sections.append((cubin.NOTE_CUINFO, 7, cuinfo(virtual)))
    if a_flag is not None:
        sections.append((cubin.NV_COMPAT, 0x70000086, compat(a_flag)))
    sections.extend(extra or [])
    return build_elf(sections, flags=flags, abi_version=abi, osabi=osabi, version=version)


def entry(
    payload: bytes = b"\x7fELF" + b"\0" * 12,
    *,
    kind: int = fatbin.KIND_ELF,
    arch: int = 90,
    flags: int = 0x11,
    header_size: int = 64,
    stored: int | None = None,
    uncompressed: int = 0,
    version: int = fatbin.ENTRY_VERSION,
    padded: int | None = None,
    isa: tuple[int, int] = (1, 8),
) -> bytes:
    """An entry: header (``header_size`` bytes, extension filled like nvcc's) and padded payload."""
    body = payload + b"\0" * (-len(payload) % 8)
    padded_size = len(body) if padded is None else padded
    stored_size = (len(payload) if flags & 0xA000 else 0) if stored is None else stored
    head = struct.pack(
        "<HHIQIIHHIIIQQQ",
        kind,
        version,
        header_size,
        padded_size,
        stored_size,
        64 if header_size > 64 else 0,
        isa[1],
        isa[0],
        arch,
        0,
        0,
        flags,
        0,
        uncompressed,
    )
    if header_size > 64:
        extra = struct.pack("<II", 0x48, header_size - 72) + bytes(range(header_size - 72))
        head += extra[: header_size - 64]
    return head + body


def container(*entries: bytes, fat_size: int | None = None, version: int = 1) -> bytes:
    """A container holding ``entries``."""
    body = b"".join(entries)
    size = len(body) if fat_size is None else fat_size
    return struct.pack("<IHHQ", fatbin.CONTAINER_MAGIC, version, 16, size) + body


def build_dynamic_elf(
    symbols: list[tuple[str, bool]],
    *,
    soname: str | None = None,
    needed: tuple[str, ...] = (),
    bits: int = 64,
    little: bool = True,
    section_table: bool = True,
    hash_table: bool = True,
    tail: bytes = b"",
    code: bytes = b"",
    first_executable: bool = False,
) -> bytes:
    """A shared object with a dynamic section, the way linkers lay one out.

    ``symbols`` are (name, defined): defined ones are exported global functions,
    the others undefined imports. The first loadable segment holds the ELF header,
    the program headers, ``.hash`` (``DT_HASH``, when ``hash_table``), ``.dynsym``
    and ``.dynstr``; ``tail`` bytes follow (read-only data, a fatbin …), then
    ``code`` in an executable segment of its own (as ``ld -z separate-code`` and lld
    lay out ``.text``), then the dynamic section in a writable segment, then the
    section table (when ``section_table``). ``first_executable`` makes the first
    segment executable, as ``ld -z noseparate-code`` does. Virtual addresses are
    file offsets plus 0x1000 past the first segment, like ``ld``'s.
    """
    end = "<" if little else ">"
    wide = bits == 64
    ehsize, phentsize, shentsize = (64, 56, 64) if wide else (52, 32, 40)
    symsize = 24 if wide else 16
    dynstr = b"\0"
    offsets: dict[str, int] = {}
    for name in [*(n for n, _ in symbols), *needed, *([soname] if soname else [])]:
        if name not in offsets:
            offsets[name] = len(dynstr)
            dynstr += name.encode() + b"\0"
    nsyms = len(symbols) + 1
    phnum = 4 if code else 3
    hash_at = ehsize + phnum * phentsize
    hash_bytes = struct.pack(end + "II", 1, nsyms) + struct.pack(end + "I", 0) * (1 + nsyms)
    if not hash_table:
        hash_bytes = b""
    dynsym_at = hash_at + len(hash_bytes)
    dynsym_at += -dynsym_at % 8
    dynstr_at = dynsym_at + nsyms * symsize
    tail_at = dynstr_at + len(dynstr)
    code_at = tail_at + len(tail)
    dyn_at = code_at + len(code)
    dyn_at += -dyn_at % 8
    entries: list[tuple[int, int]] = [(1, offsets[n]) for n in needed]
    if soname:
        entries.append((14, offsets[soname]))
    if hash_table:
        entries.append((4, hash_at))
    entries += [(5, dynstr_at), (6, dynsym_at), (10, len(dynstr)), (11, symsize), (0, 0)]
    dyn_fmt = end + ("qQ" if wide else "iI")
    dynamic = b"".join(struct.pack(dyn_fmt, tag, value) for tag, value in entries)
    shoff = dyn_at + len(dynamic)
    syms = b"\0" * symsize
    for name, defined in symbols:
        info = (1 << 4) | 2  # STB_GLOBAL, STT_FUNC
        shndx = 7 if defined else 0
        if wide:
            syms += struct.pack(end + "IBBHQQ", offsets[name], info, 0, shndx, 0x1000, 16)
        else:
            syms += struct.pack(end + "IIIBBH", offsets[name], 0x1000, 16, info, 0, shndx)
    # Sections: null, .dynsym, .dynstr, .dynamic (enough for a reader sizing .dynsym).
    shdr = end + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
    sections = [
        struct.pack(shdr, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        struct.pack(shdr, 0, 11, 2, dynsym_at, dynsym_at, len(syms), 2, 1, 8, symsize),
        struct.pack(shdr, 0, 3, 2, dynstr_at, dynstr_at, len(dynstr), 0, 0, 1, 0),
        struct.pack(shdr, 0, 6, 3, dyn_at + 0x1000, dyn_at, len(dynamic), 2, 0, 8, 16),
    ]
    table = b"".join(sections) if section_table else b""
    ident = b"\x7fELF" + bytes([2 if wide else 1, 1 if little else 2, 1, 0, 0]) + b"\0" * 7
    header = ident + struct.pack(
        end + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH"),
        3, 62 if wide else 3, 1, 0, ehsize, shoff if section_table else 0, 0, ehsize,
        phentsize, phnum, shentsize, len(sections) if section_table else 0, 0,
    )
    phdr = end + ("IIQQQQQQ" if wide else "IIIIIIII")

    def program(p_type: int, flags: int, offset: int, vaddr: int, size: int) -> bytes:
        if wide:
            return struct.pack(phdr, p_type, flags, offset, vaddr, vaddr, size, size, 0x1000)
        return struct.pack(phdr, p_type, offset, vaddr, vaddr, size, size, flags, 0x1000)

    programs = (
        # PT_LOAD R (R+X with first_executable): headers, hash, dynsym, dynstr, tail
        program(1, 5 if first_executable else 4, 0, 0, code_at)
        + (program(1, 5, code_at, code_at + 0x1000, len(code)) if code else b"")  # R+X
        + program(1, 6, dyn_at, dyn_at + 0x1000, len(dynamic))  # PT_LOAD RW
        + program(2, 6, dyn_at, dyn_at + 0x1000, len(dynamic))  # PT_DYNAMIC
    )
    body = header + programs
    body += b"\0" * (hash_at - len(body)) + hash_bytes
    body += b"\0" * (dynsym_at - len(body)) + syms + dynstr + tail + code
    body += b"\0" * (dyn_at - len(body)) + dynamic
    return body + table
