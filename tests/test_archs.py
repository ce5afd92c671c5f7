"""servewise.archs: parsing every spelling, and where SASS and PTX run (research/gate.md §2)."""

from __future__ import annotations

import pytest

from servewise.archs import Arch, ComputeCapability, ptx_runs_on, sass_runs_on
from servewise.errors import UsageError

PARSE = [
    ("sm_90", Arch(90, "")),
    ("sm_90a", Arch(90, "a")),
    ("SM_90A", Arch(90, "a")),
    ("sm90a", Arch(90, "a")),
    ("sm_100f", Arch(100, "f")),
    ("sm_103f", Arch(103, "f")),
    ("sm_120", Arch(120, "")),
    ("sm_121a", Arch(121, "a")),
    ("compute_80", Arch(80, "")),
    ("compute_90a", Arch(90, "a")),
    ("compute_120f", Arch(120, "f")),
    ("compute120", Arch(120, "")),
    ("90", Arch(90, "")),
    ("120", Arch(120, "")),
    ("100a", Arch(100, "a")),
    ("12.0", Arch(120, "")),
    ("12.1", Arch(121, "")),
    ("9.0a", Arch(90, "a")),
    ("10.0f", Arch(100, "f")),
    ("8.6", Arch(86, "")),
    ("  sm_75 ", Arch(75, "")),
    ("sm_110", Arch(110, "")),
    ("sm_101", Arch(101, "")),
]


@pytest.mark.parametrize("text,arch", PARSE, ids=[p[0] for p in PARSE])
def test_parse(text: str, arch: Arch) -> None:
    assert Arch.parse(text) == arch


@pytest.mark.parametrize(
    "arch,major,minor,sass,ptx",
    [
        (Arch(80), 8, 0, "sm_80", "compute_80"),
        (Arch(90, "a"), 9, 0, "sm_90a", "compute_90a"),
        (Arch(100, "f"), 10, 0, "sm_100f", "compute_100f"),
        (Arch(103, "a"), 10, 3, "sm_103a", "compute_103a"),
        (Arch(121), 12, 1, "sm_121", "compute_121"),
    ],
)
def test_arch_properties(arch: Arch, major: int, minor: int, sass: str, ptx: str) -> None:
    assert (arch.major, arch.minor, arch.sass_name, arch.ptx_name) == (major, minor, sass, ptx)
    assert Arch.parse(sass) == arch
    assert Arch.parse(ptx) == arch


@pytest.mark.parametrize(
    "text",
    ["", "sm_", "sm_9", "sm_9000", "sm_90b", "sm_90af", "compute_", "gfx942", "ampere",
     "12.", ".0", "12.00", "sm-90", "sm_90 a", "9,0", "h100", "compute_90x"],
)
def test_bad_arch_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as info:
        Arch.parse(text)
    assert info.value.hint
    assert info.value.fields["found"] == text
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    "text,cc",
    [("12.0", (12, 0)), ("12.1", (12, 1)), ("9.0", (9, 0)), ("10.3", (10, 3)),
     ("11.0", (11, 0)), ("8.6", (8, 6)), ("sm_120", (12, 0)), ("120", (12, 0)), ("sm_89", (8, 9))],
)
def test_compute_capability_parse(text: str, cc: tuple[int, int]) -> None:
    parsed = ComputeCapability.parse(text)
    assert (parsed.major, parsed.minor) == cc
    assert str(parsed) == f"{cc[0]}.{cc[1]}"
    assert parsed.number == cc[0] * 10 + cc[1]


@pytest.mark.parametrize("text", ["", "twelve", "12.", "sm_"])
def test_bad_compute_capability(text: str) -> None:
    with pytest.raises(UsageError):
        ComputeCapability.parse(text)


def test_ordering() -> None:
    assert ComputeCapability(9, 0) < ComputeCapability(10, 0) < ComputeCapability(12, 1)
    assert Arch(90) < Arch(90, "a") < Arch(100)


ALL_DEVICES = ["7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1",
               "13.0"]

# arch → the devices (of ALL_DEVICES) where its SASS loads
SASS = {
    "sm_75": {"7.5"},
    "sm_80": {"8.0", "8.6", "8.7", "8.9"},
    "sm_86": {"8.6", "8.7", "8.9"},
    "sm_89": {"8.9"},
    "sm_90": {"9.0"},
    "sm_90a": {"9.0"},
    "sm_100": {"10.0", "10.3"},
    "sm_100a": {"10.0"},
    "sm_100f": {"10.0", "10.3"},
    "sm_103": {"10.3"},
    "sm_103a": {"10.3"},
    "sm_103f": {"10.3"},
    "sm_110": {"11.0"},
    "sm_110a": {"11.0"},
    "sm_110f": {"11.0"},
    "sm_120": {"12.0", "12.1"},
    "sm_120a": {"12.0"},
    "sm_120f": {"12.0", "12.1"},
    "sm_121": {"12.1"},
    "sm_121a": {"12.1"},
    "sm_121f": {"12.1"},
}

# arch → the devices where its PTX can be JIT-compiled
PTX = {
    "compute_75": set(ALL_DEVICES),
    "compute_80": set(ALL_DEVICES) - {"7.5"},
    "compute_89": {"8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1", "13.0"},
    "compute_90": {"9.0", "10.0", "10.3", "11.0", "12.0", "12.1", "13.0"},
    "compute_90a": {"9.0"},
    "compute_100": {"10.0", "10.3", "11.0", "12.0", "12.1", "13.0"},
    "compute_100a": {"10.0"},
    "compute_100f": {"10.0", "10.3"},
    "compute_103f": {"10.3"},
    "compute_120": {"12.0", "12.1", "13.0"},
    "compute_120a": {"12.0"},
    "compute_120f": {"12.0", "12.1"},
    "compute_121a": {"12.1"},
}


def _cases(table: dict[str, set[str]]) -> list[tuple[str, str, bool]]:
    return [(arch, dev, dev in runs) for arch, runs in table.items() for dev in ALL_DEVICES]


@pytest.mark.parametrize("arch,device,expected", _cases(SASS))
def test_sass_runs_on(arch: str, device: str, expected: bool) -> None:
    assert sass_runs_on(Arch.parse(arch), ComputeCapability.parse(device)) is expected


@pytest.mark.parametrize("arch,device,expected", _cases(PTX))
def test_ptx_runs_on(arch: str, device: str, expected: bool) -> None:
    assert ptx_runs_on(Arch.parse(arch), ComputeCapability.parse(device)) is expected


@pytest.mark.parametrize(
    "arch,device,expected",
    [
        # the named cases of research/gate.md §2 and the seed
        ("sm_80", "8.6", True),
        ("sm_80", "8.9", True),
        ("sm_80", "9.0", False),
        ("sm_90", "9.0", True),
        ("sm_90", "10.0", False),
        ("sm_90a", "9.0", True),
        ("sm_90a", "10.0", False),
        ("sm_100f", "10.0", True),
        ("sm_100f", "10.3", True),
        ("sm_100f", "12.0", False),
        ("sm_100a", "10.0", True),
        ("sm_100a", "10.3", False),
        ("sm_100", "12.0", False),  # B200 kernels never run on the RTX PRO 6000
        ("sm_120", "12.0", True),
        ("sm_120", "12.1", True),
        ("sm_120a", "12.0", True),
        ("sm_120a", "12.1", False),
        ("sm_120f", "12.0", True),
        ("sm_120f", "12.1", True),
        ("sm_103f", "10.0", False),
        ("sm_120", "10.0", False),  # no backward compatibility either
        ("sm_101", "11.0", False),  # legacy Thor numbering is another major
        ("sm_110f", "11.0", True),
    ],
)
def test_named_sass_cases(arch: str, device: str, expected: bool) -> None:
    assert sass_runs_on(Arch.parse(arch), ComputeCapability.parse(device)) is expected


@pytest.mark.parametrize(
    "arch,device,expected",
    [
        ("compute_80", "8.6", True),
        ("compute_80", "9.0", True),
        ("compute_80", "12.0", True),
        ("compute_80", "7.5", False),
        ("compute_90a", "9.0", True),
        ("compute_90a", "10.0", False),
        ("compute_90a", "12.0", False),
        ("compute_120f", "12.1", True),
        ("compute_120f", "13.0", False),
        ("compute_120f", "10.0", False),
        ("compute_120", "13.0", True),
        ("compute_100f", "12.0", False),
        ("compute_100", "12.0", True),
    ],
)
def test_named_ptx_cases(arch: str, device: str, expected: bool) -> None:
    assert ptx_runs_on(Arch.parse(arch), ComputeCapability.parse(device)) is expected


def test_sass_never_crosses_majors() -> None:
    numbers = (75, 80, 86, 89, 90, 100, 103, 110, 120, 121)
    archs = [Arch(n, s) for n in numbers for s in ("", "a", "f")]
    devices = [ComputeCapability.parse(d) for d in ALL_DEVICES]
    for arch in archs:
        for device in devices:
            if sass_runs_on(arch, device):
                assert arch.major == device.major and arch.minor <= device.minor
                if arch.suffix == "a":
                    assert arch.number == device.number
            # PTX reaches at least where SASS of the same arch runs
            if sass_runs_on(arch, device):
                assert ptx_runs_on(arch, device)


def test_bare_small_number_is_ambiguous_but_old_sm_names_parse() -> None:
    with pytest.raises(UsageError):
        Arch.parse("12")
    assert Arch.parse("sm_13") == Arch(13)
    assert ComputeCapability.parse("12.0") == ComputeCapability(12, 0)
