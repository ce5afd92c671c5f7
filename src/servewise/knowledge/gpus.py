"""The GPU catalog: compute capability, memory and the names users and drivers use.

The catalog ships as ``knowledge/data/gpus.toml``; a ``gpus.toml`` in the user
data folder (``$SERVEWISE_DATA_DIR``, default ``~/.config/servewise/``) adds
GPUs or overrides shipped ones by ``id``::

    catalog = load_gpu_catalog()
    gpu = catalog.find("RTX PRO 6000")     # also "rtx_pro_6000", "NVIDIA RTX PRO 6000 ..."
    gpu.cc                                  # ComputeCapability(12, 0)
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servewise.archs import Arch, ComputeCapability
from servewise.errors import UsageError
from servewise.knowledge._load import (
    DataFileError,
    EntryReader,
    RawEntry,
    check_unique,
    load_table,
    shipped_entries,
)

FILENAME = "gpus.toml"
TABLE = "gpu"

FIELDS = frozenset(
    {
        "id",
        "name",
        "aliases",
        "device_names",
        "compute_capability",
        "legacy_compute_capability",
        "memory_vendor",
        "memory_bytes",
        "memory_gib",
        "memory_type",
        "driver_memory_gib",
        "driver_memory_source",
        "nvidia_smi_mib",
        "nvidia_smi_source",
        "family",
        "vendor",
        "gfx_arch",
        "form_factor",
        "source",
        "notes",
    }
)
"""Fields a ``[[gpu]]`` entry may set."""

FAMILIES = frozenset(
    {"turing", "ampere", "ada", "hopper", "blackwell", "rubin", "volta", "pascal",
     "cdna3", "cdna4"}
)
"""Accepted ``family`` values."""

SMI_RESERVE_BYTES = 470 * 2**20
"""What the engine's total (``torch.cuda.mem_get_info``) lacks against ``nvidia-smi``'s.

Pairs from public output of the same GPU model: H100 SXM 81,559 MiB vs vLLM's 79.19 GiB
(-468 MiB), RTX 3090 24,576 vs 23.58 GiB (-430), RTX 5090 32,607 vs 31.4 GiB (-453),
A100 40GB 40,960 vs 39.50 GiB (-512), RTX 4090 24,564 vs 23.65 GiB (-346), A10 23,028 vs
22.18 GiB (-316), B200 183,359 vs 178.35 GiB (-729); sources in ``gpus.toml``."""
SMI_RESERVE_SPREAD = 260 * 2**20
"""How far one GPU's reserve strays from :data:`SMI_RESERVE_BYTES` in those pairs."""

_VENDOR_PREFIX = re.compile(r"^(?:nvidia[\s_-]+)?(?:geforce[\s_-]+|tesla[\s_-]+)?")
_SEPARATORS = re.compile(r"[\s_-]+")


def normalize_name(text: str) -> str:
    """A lookup key: lower case, vendor words dropped, spaces/underscores/dashes as ``-``.

    ``"NVIDIA GeForce RTX 5090"`` → ``"rtx-5090"``; ``"rtx_pro 6000"`` → ``"rtx-pro-6000"``.
    """
    key = _SEPARATORS.sub("-", text.strip().lower())
    key = _VENDOR_PREFIX.sub("", key.replace("-", " ")).strip()
    return _SEPARATORS.sub("-", key).strip("-")


def compact_name(text: str) -> str:
    """A looser key: :func:`normalize_name` with every separator removed (``"rtx5090"``)."""
    return normalize_name(text).replace("-", "")


@dataclass(frozen=True)
class Gpu:
    """One GPU model of the catalog."""

    id: str
    name: str
    aliases: tuple[str, ...]
    cc: ComputeCapability | None
    """The CUDA compute capability; None for a GPU that is not NVIDIA's (see ``vendor``)."""
    memory_bytes: int
    memory_vendor: str
    memory_type: str
    family: str
    form_factor: str
    sources: tuple[str, ...]
    notes: str = ""
    device_names: tuple[str, ...] = ()
    legacy_cc: ComputeCapability | None = None
    driver_memory_bytes: int | None = None
    """Total memory as the engine sees it (torch's total, vLLM's ``total_gpu_memory``),
    where a public engine log or PyTorch message gives it."""
    driver_memory_source: str = ""
    nvidia_smi_bytes: int | None = None
    """Total memory as ``nvidia-smi`` prints it (MiB), where public output gives it."""
    nvidia_smi_source: str = ""
    vendor: str = "nvidia"
    """``nvidia`` or ``amd``: the kernel gate judges CUDA builds, so NVIDIA GPUs only."""
    gfx_arch: str | None = None
    """An AMD GPU's LLVM target (``gfx942``)."""

    @property
    def is_cuda(self) -> bool:
        """Whether CUDA code runs on it (an NVIDIA GPU with a compute capability)."""
        return self.cc is not None

    @property
    def source(self) -> str:
        """The first (main) source of this entry."""
        return self.sources[0]

    @property
    def memory_gib(self) -> float:
        """Memory in GiB (2**30 bytes) as stored; see ``memory_vendor`` for the vendor's words."""
        return self.memory_bytes / 2**30

    @property
    def engine_memory(self) -> tuple[int, str]:
        """Total memory as the engines see it and where the figure comes from.

        ``driver``: an engine log gives it, or ``nvidia-smi``'s total less the memory the
        driver keeps back (:data:`SMI_RESERVE_BYTES`). ``vendor``: only the vendor's "GB"
        is known, read as 10**9 bytes (a lower bound: see :attr:`memory_range`).
        """
        if self.driver_memory_bytes:
            return self.driver_memory_bytes, "driver"
        if self.nvidia_smi_bytes:
            return self.nvidia_smi_bytes - SMI_RESERVE_BYTES, "driver"
        return self.memory_bytes, "vendor"

    @property
    def memory_range(self) -> tuple[int, int]:
        """The lowest and highest total the engine may see, given what pins the figure.

        An engine log pins it to its rounding (0.01 GiB); an ``nvidia-smi`` total leaves the
        driver's reserve open (:data:`SMI_RESERVE_SPREAD`); a vendor "N GB" alone leaves
        anything from N·10⁹ bytes to N GiB (ECC and firmware reservations vary by board).
        """
        size, _ = self.engine_memory
        if self.driver_memory_bytes:
            return size - 2**30 // 200, size + 2**30 // 200
        if self.nvidia_smi_bytes:
            return size - SMI_RESERVE_SPREAD, size + SMI_RESERVE_SPREAD
        nominal = self.memory_bytes
        if self.memory_bytes % 10**9 == 0:
            nominal = self.memory_bytes // 10**9 * 2**30
        return self.memory_bytes, max(nominal, self.memory_bytes)

    @property
    def memory_pinned_by(self) -> str:
        """What fixes the total: ``engine log``, ``nvidia-smi`` or ``vendor datasheet only``."""
        if self.driver_memory_bytes:
            return "engine log"
        if self.nvidia_smi_bytes:
            return "nvidia-smi"
        return "vendor datasheet only"

    @property
    def memory_gb(self) -> float:
        """Memory in GB (10**9 bytes) as stored."""
        return self.memory_bytes / 10**9

    @property
    def arch(self) -> Arch:
        """The plain SASS architecture of this GPU (``sm_120`` for CC 12.0); a GPU without
        CUDA raises UsageError (the kernel gate judges CUDA builds only)."""
        if self.cc is None:
            raise UsageError(f"{self.name} is an {self.vendor.upper()} GPU ({self.gfx_arch}): "
                             "servewise's kernel gate judges CUDA builds only",
                             hint="plan and check work for it; read a ROCm build's kernels "
                                  "with the vendor's tools (roc-obj-ls)", gpu=self.id)
        return Arch(self.cc.number)

    def to_dict(self) -> dict[str, Any]:
        """The GPU as JSON-ready data (memory in bytes and the vendor's words)."""
        return {
            "id": self.id,
            "name": self.name,
            "aliases": list(self.aliases),
            "device_names": list(self.device_names),
            "compute_capability": str(self.cc) if self.cc else None,
            "sm": self.arch.sass_name if self.cc else None,
            "vendor": self.vendor,
            "gfx_arch": self.gfx_arch,
            "legacy_compute_capability": str(self.legacy_cc) if self.legacy_cc else None,
            "memory_bytes": self.memory_bytes,
            "memory_vendor": self.memory_vendor,
            "memory_type": self.memory_type,
            "driver_memory_bytes": self.driver_memory_bytes,
            "driver_memory_source": self.driver_memory_source or None,
            "nvidia_smi_bytes": self.nvidia_smi_bytes,
            "nvidia_smi_source": self.nvidia_smi_source or None,
            "family": self.family,
            "form_factor": self.form_factor,
            "notes": self.notes,
            "sources": list(self.sources),
        }

    @property
    def names(self) -> tuple[str, ...]:
        """Every name this GPU is found by: id, display name, aliases, driver names."""
        return (self.id, self.name, *self.aliases, *self.device_names)


class GpuCatalog:
    """The GPUs servewise knows, looked up by id, alias, display or driver name."""

    def __init__(self, gpus: Iterable[Gpu]) -> None:
        self._gpus = tuple(gpus)
        self._by_key: dict[str, Gpu] = {}
        self._by_compact: dict[str, Gpu] = {}
        for gpu in self._gpus:
            for name in gpu.names:
                keyed = (
                    (self._by_key, normalize_name(name)),
                    (self._by_compact, compact_name(name)),
                )
                for index, key in keyed:
                    other = index.setdefault(key, gpu)
                    if other is not gpu:
                        raise UsageError(
                            f"GPU name {name!r} is used by both {other.id!r} and {gpu.id!r}",
                            hint="give each GPU its own aliases in gpus.toml",
                            name=name,
                        )

    def all(self) -> tuple[Gpu, ...]:
        """Every GPU, in catalog order."""
        return self._gpus

    def __len__(self) -> int:
        return len(self._gpus)

    def __iter__(self) -> Iterator[Gpu]:
        return iter(self._gpus)

    def get(self, name: str) -> Gpu | None:
        """The GPU called ``name`` (see :meth:`find`), or None."""
        gpu = self._by_key.get(normalize_name(name))
        if gpu is None:
            gpu = self._by_compact.get(compact_name(name))
        return gpu

    def find(self, name: str) -> Gpu:
        """The GPU called ``name``: its id, an alias, its display name or driver name.

        Case does not matter, nor do spaces, underscores and dashes, nor a
        leading "NVIDIA"/"GeForce"/"Tesla". An unknown name raises
        :class:`UsageError` naming close matches.
        """
        gpu = self.get(name)
        if gpu is not None:
            return gpu
        keys = {normalize_name(n): gpu.id for gpu in self._gpus for n in (gpu.id, *gpu.aliases)}
        close = difflib.get_close_matches(normalize_name(name), list(keys), n=5, cutoff=0.6)
        suggestions = list(dict.fromkeys(close))
        message = f"unknown GPU {name!r}"
        if suggestions:
            message += "; did you mean " + ", ".join(suggestions) + "?"
        raise UsageError(
            message,
            hint="`servewise gpus` lists the known GPUs; for another, describe it: "
            f"--gpu {name}:COUNT --gpu-memory SIZE --compute-capability X.Y (plan and check, "
            "docs/plan.md), or add it to gpus.toml in $SERVEWISE_DATA_DIR (default "
            "~/.config/servewise/)",
            found=name,
            close_matches=suggestions,
        )


def _parse_cc(reader: EntryReader, field: str) -> ComputeCapability:
    text = reader.string(field)
    if re.fullmatch(r"\d{1,2}\.\d", text) is None:
        raise reader.error(field, "must be MAJOR.MINOR", expected='"12.0"', found=text)
    return ComputeCapability.parse(text)


def gpu_from_entry(entry: RawEntry) -> Gpu:
    """Validate one ``[[gpu]]`` entry and build its :class:`Gpu`."""
    reader = EntryReader(entry, FIELDS)
    if reader.has("memory_bytes") == reader.has("memory_gib"):
        raise reader.error(
            "memory_bytes",
            "set exactly one of memory_bytes (vendor figure in GB, as bytes) or memory_gib",
        )
    if reader.has("memory_bytes"):
        memory_bytes = reader.positive_int("memory_bytes")
    else:
        memory_bytes = round(reader.positive_number("memory_gib") * 2**30)
    family = reader.string("family").lower()
    if family not in FAMILIES:
        raise reader.error(
            "family", "unknown family", expected=", ".join(sorted(FAMILIES)), found=family
        )
    legacy = (
        _parse_cc(reader, "legacy_compute_capability")
        if reader.has("legacy_compute_capability")
        else None
    )
    driver = None
    driver_source = ""
    if reader.has("driver_memory_gib"):
        driver = round(reader.positive_number("driver_memory_gib") * 2**30)
        driver_source = reader.string("driver_memory_source")
    smi = None
    smi_source = ""
    if reader.has("nvidia_smi_mib"):
        smi = reader.positive_int("nvidia_smi_mib") * 2**20
        smi_source = reader.string("nvidia_smi_source")
    vendor = reader.optional_string("vendor") or "nvidia"
    if vendor not in ("nvidia", "amd"):
        raise reader.error("vendor", "unknown vendor", expected="nvidia or amd", found=vendor)
    gfx = reader.optional_string("gfx_arch") or None
    if vendor == "amd" and (gfx is None or reader.has("compute_capability")):
        raise reader.error("gfx_arch", "an AMD GPU has a gfx_arch and no compute_capability",
                           expected='gfx_arch = "gfx942"')
    ident = reader.string("id")
    if normalize_name(ident) != ident:
        raise reader.error(
            "id", "must be a lower-case slug", expected=normalize_name(ident), found=ident
        )
    return Gpu(
        id=ident,
        name=reader.string("name"),
        aliases=reader.strings("aliases", required=False),
        cc=_parse_cc(reader, "compute_capability") if vendor == "nvidia" else None,
        memory_bytes=memory_bytes,
        memory_vendor=reader.string("memory_vendor"),
        memory_type=reader.string("memory_type"),
        family=family,
        form_factor=reader.string("form_factor"),
        sources=reader.sources(),
        notes=reader.optional_string("notes"),
        device_names=reader.strings("device_names", required=False),
        legacy_cc=legacy,
        driver_memory_bytes=driver,
        driver_memory_source=driver_source,
        nvidia_smi_bytes=smi,
        nvidia_smi_source=smi_source,
        vendor=vendor,
        gfx_arch=gfx,
    )


def _build(entries: list[RawEntry]) -> GpuCatalog:
    check_unique(entries)
    gpus = [gpu_from_entry(entry) for entry in entries]
    try:
        return GpuCatalog(gpus)
    except UsageError as exc:
        files = sorted({entry.file for entry in entries})
        raise DataFileError(
            exc.message, file=" + ".join(files), field="aliases", found=exc.fields.get("name")
        ) from exc


@functools.cache
def _shipped_catalog() -> GpuCatalog:
    return _build(list(shipped_entries(FILENAME, TABLE)))


def load_gpu_catalog(user_dir: Path | None = None) -> GpuCatalog:
    """The shipped GPU catalog plus ``gpus.toml`` from the user data folder.

    ``user_dir`` defaults to ``$SERVEWISE_DATA_DIR`` or ``~/.config/servewise``.
    The shipped part is read once; a bad entry raises :class:`DataFileError`
    naming the file, the entry and the field.
    """
    return load_table(FILENAME, TABLE, user_dir, _shipped_catalog, _build)


# --- What ``--gpu NAME[:COUNT]`` names: the one GPU type every operation takes -------------

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(tib|tb|gib|gb|mib|mb|b)?\s*$", re.IGNORECASE)
_UNITS = {"tib": 2**40, "tb": 10**12, "gib": 2**30, "gb": 10**9, "mib": 2**20, "mb": 10**6,
          "b": 1, None: 2**30}
_COUNT_HINT = (
    "give NAME or NAME:COUNT, e.g. h200:8 or rtx-pro-6000:2 (COUNT GPUs per node, at least 1)"
)


#: The most GPUs one node may have (an NVL72 rack, the largest NVLink domain, counts as one).
MAX_GPUS_PER_NODE = 72
#: The most memory one device may be given (--gpu-memory, a KV cache size): 64 TiB.
MAX_DEVICE_BYTES = 2**46
#: The least: 1 MiB (0 would divide by zero, and no engine starts on less).
MIN_DEVICE_BYTES = 2**20
_SIZE_HINT = "give a size such as 95.59GiB, 97887MiB, 96GB, 1.5TiB or a number of bytes with B"


def parse_size(text: str, what: str = "memory") -> int:
    """``96GB`` → 96·10⁹ bytes, ``97887MiB``, ``95.59GiB`` and ``1.5TiB`` → bytes; a bare
    number is GiB.

    A size under 1 MiB or over 64 TiB is a :class:`UsageError` saying what is expected.
    """
    match = _SIZE.match(text[:100])
    if match is None:
        raise UsageError(f"cannot read {what} {text[:100]!r}", hint=_SIZE_HINT,
                         found=text[:100])
    unit = match.group(2).lower() if match.group(2) else None
    size = int(float(match.group(1)) * _UNITS[unit])
    if not MIN_DEVICE_BYTES <= size <= MAX_DEVICE_BYTES:
        raise UsageError(f"{what} {text!r} is {size} bytes: expected from 1 MiB to 64 TiB",
                         hint=_SIZE_HINT, found=text, expected="1MiB to 64TiB")
    return size


@dataclass(frozen=True)
class GpuSpec:
    """The GPUs a command is about: which one, how many per node, and the memory engines see.

    ``gpu`` is the catalog entry (None for vLLM's CPU backend or a GPU the user describes
    with its memory). ``memory_bytes`` is the total one device reports to the engine:
    the driver's figure where the catalog has it (``memory_source`` ``driver``), else the
    vendor's (``vendor``), or what the user gave (``user``).
    """

    name: str
    count: int
    memory_bytes: int
    memory_source: str
    platform: str = "cuda"
    """``cuda`` or ``cpu`` (vLLM's CPU backend)."""
    compute_capability: ComputeCapability | None = None
    gpu: Gpu | None = None
    amx: bool = False
    """CPU backend: whether the CPU has AMX tiles (vLLM's CPU MLA block-size rule)."""
    memory_low_bytes: int | None = None
    """The lowest total the engine may see (None: ``memory_bytes`` is exact)."""
    memory_high_bytes: int | None = None
    """The highest total the engine may see (None: ``memory_bytes`` is exact)."""
    memory_pinned_by: str = "user"
    """What fixes ``memory_bytes``: ``engine log``, ``nvidia-smi``, ``vendor datasheet only``
    or ``user``."""

    @property
    def memory_range(self) -> tuple[int, int]:
        """The lowest and highest total memory the engine may see on one device."""
        return (self.memory_low_bytes or self.memory_bytes,
                self.memory_high_bytes or self.memory_bytes)

    @property
    def is_cpu(self) -> bool:
        """Whether this is vLLM's CPU backend."""
        return self.platform == "cpu"

    @property
    def gpu_id(self) -> str | None:
        """The catalog id, when the GPU is in the catalog."""
        return self.gpu.id if self.gpu else None

    def with_count(self, count: int) -> GpuSpec:
        """The same GPU, ``count`` of them per node."""
        return dataclasses.replace(self, count=_check_count(count, self.name))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        cc = self.compute_capability
        return {
            "name": self.name,
            "gpu_id": self.gpu_id,
            "count": self.count,
            "platform": self.platform,
            "memory_bytes": self.memory_bytes,
            "memory_source": self.memory_source,
            "memory_pinned_by": self.memory_pinned_by,
            "memory_range_bytes": list(self.memory_range),
            "compute_capability": str(cc) if cc else None,
        }


def _check_count(count: int, text: str) -> int:
    if count < 1:
        raise UsageError(f"--gpu {text!r} asks for {count} GPUs; the count must be at least 1",
                         hint=_COUNT_HINT, found=text)
    if count > MAX_GPUS_PER_NODE:
        raise UsageError(f"--gpu {text!r} asks for {count} GPUs on one node; a node has at "
                         f"most {MAX_GPUS_PER_NODE}",
                         hint="COUNT is GPUs per node (8 on an HGX/DGX node); for more nodes "
                         "give --nodes where the command takes it", found=text,
                         expected=f"1 to {MAX_GPUS_PER_NODE}")
    return count


def split_gpu_count(text: str) -> tuple[str, int]:
    """``"h200:8"`` → ``("h200", 8)``; ``"h200"`` → ``("h200", 1)``."""
    name, sep, count = text.strip().rpartition(":")
    if not sep:
        return text.strip(), 1
    if not name.strip() or not re.fullmatch(r"-?\d{1,9}", count.strip()):
        raise UsageError(f"cannot read --gpu {text!r}", hint=_COUNT_HINT, found=text)
    return name.strip(), _check_count(int(count), text)


def resolve_gpu(
    name: str,
    *,
    count: int = 1,
    memory: str | None = None,
    capability: str | None = None,
    catalog: GpuCatalog | None = None,
) -> GpuSpec:
    """The :class:`GpuSpec` for a GPU ``name`` (catalog name, or ``cpu``).

    ``memory`` overrides the size (and lets a name the catalog does not know through);
    ``capability`` (``12.0``) overrides or supplies the compute capability.
    """
    _check_count(count, f"{name}:{count}")
    cc: ComputeCapability | None = None
    if capability:
        if re.fullmatch(r"\d{1,2}\.\d", capability.strip()) is None:
            raise UsageError(f"cannot read compute capability {capability!r}",
                             hint="give MAJOR.MINOR, e.g. 12.0", found=capability)
        cc = ComputeCapability.parse(capability.strip())
    if name.strip().lower() == "cpu":
        if memory is None:
            raise UsageError("the CPU backend needs its KV cache size",
                             hint="give --kv-cache-memory (VLLM_CPU_KVCACHE_SPACE or "
                             "--kv-cache-memory-bytes) or --gpu-memory")
        return GpuSpec("cpu", count, parse_size(memory), "user", platform="cpu", amx=_has_amx())
    table = catalog or load_gpu_catalog()
    gpu = table.get(name)
    if gpu is None:
        if memory is None:
            table.find(name)  # raises, naming close matches
        assert memory is not None
        return GpuSpec(name, count, parse_size(memory), "user", compute_capability=cc)
    if memory is not None:
        return GpuSpec(gpu.name, count, parse_size(memory), "user",
                       compute_capability=cc or gpu.cc, gpu=gpu)
    size, source = gpu.engine_memory
    low, high = gpu.memory_range
    return GpuSpec(gpu.name, count, size, source, compute_capability=cc or gpu.cc, gpu=gpu,
                   memory_low_bytes=low, memory_high_bytes=high,
                   memory_pinned_by=gpu.memory_pinned_by)


def parse_gpu_spec(
    text: str,
    *,
    memory: str | None = None,
    capability: str | None = None,
    catalog: GpuCatalog | None = None,
) -> GpuSpec:
    """Read ``--gpu NAME[:COUNT]`` into a :class:`GpuSpec` (see :func:`resolve_gpu`)."""
    name, count = split_gpu_count(text)
    return resolve_gpu(name, count=count, memory=memory, capability=capability,
                       catalog=catalog)


def _has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            return " amx_tile" in handle.read()
    except OSError:
        return False
