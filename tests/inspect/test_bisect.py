"""bisect and tags on the seed's story: nightly tags in the real registry, one losing sm120_.

Sixteen nightly-like tags share a base layer; each has its own engine layer built from
the sample wheels (good DeepGEMM up to one date, the fork without sm120 after it) plus
a per-tag build file, so every tag's top layer is a distinct blob.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

from servewise.errors import UsageError
from servewise.inspect.bisect import (
    BuildProbe,
    Candidate,
    Predicate,
    between,
    bisect,
    compare,
    max_probes,
)
from servewise.inspect.scan import scan_build
from servewise.inspect.series import series_for
from servewise.inspect.tags import list_tags
from servewise.knowledge.gpus import load_gpu_catalog
from servewise.sources import SourceOptions
from servewise.store import Store
from support.images import SITE, Entry, Image, build_tar, push_image, wheel_entries
from support.paths import BAD_NIGHTLY, CUDA, GOOD_NIGHTLY
from support.registry import Registry

pytestmark = pytest.mark.registry

TAGS = 16
FIRST_BAD = 11  # the fork arrives with the 12th nightly
REPO = "vllm/vllm-openai"


def nightly_tag(day: int) -> str:
    """``nightly-<sha>``: names that do not sort by date, like the real ones."""
    return "nightly-" + hashlib.sha1(f"day{day}".encode()).hexdigest()[:12]


@pytest.fixture(scope="module")
def nightlies(registry: Registry) -> list[str]:
    base = build_tar([Entry("etc/os-release", b"ID=servewise-test\n"),
                      Entry("usr/bin/python3", b"#!/bin/sh\n")])
    good = wheel_entries(GOOD_NIGHTLY)
    bad = wheel_entries(BAD_NIGHTLY)
    tags = []
    for day in range(TAGS):
        tag = nightly_tag(day)
        entries = [*(good if day < FIRST_BAD else bad),
                   Entry(f"{SITE}/vllm/_build.py", f"BUILD = {tag!r}\n".encode())]
        created = f"2026-07-{day + 10:02d}T03:00:00Z"
        push_image(registry, REPO, tag, Image([base, build_tar(entries)], ["gzip", "zstd"],
                                              created=created))
        tags.append(tag)
    # An alias of the last nightly, and an unrelated tag outside --match.
    last = Image([base, build_tar([*bad, Entry(f"{SITE}/vllm/_build.py",
                                               f"BUILD = {tags[-1]!r}\n".encode())])],
                 ["gzip", "zstd"], created=f"2026-07-{TAGS + 9:02d}T03:00:00Z")
    push_image(registry, REPO, "nightly", last)
    push_image(registry, REPO, "v0.1.0", Image([base], created="2026-06-01T00:00:00Z"))
    return tags


def test_tags_are_sorted_by_created_date(registry: Registry, nightlies: list[str],
                                         tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        listed = list_tags(f"{registry.host}/{REPO}", match="^nightly-", store=store)
        again = list_tags(f"{registry.host}/{REPO}", match="^nightly-", store=store)
    assert [t.tag for t in listed.tags] == nightlies
    assert [t.created for t in listed.tags] == sorted(t.created or "" for t in listed.tags)
    assert again.tags == listed.tags
    everything = list_tags(f"{registry.host}/{REPO}")
    assert everything.tags[0].tag == "v0.1.0"  # the oldest
    assert {t.tag for t in everything.tags} == {*nightlies, "nightly", "v0.1.0"}


def test_bisect_finds_the_tag_that_lost_sm120(registry: Registry, nightlies: list[str],
                                              tmp_path: Path) -> None:
    gpu = load_gpu_catalog().find("rtx-pro-6000")
    with Store(tmp_path / "s.db") as store:
        series = series_for([f"{registry.host}/{REPO}"], match="^nightly",
                            options=SourceOptions(), store=store)
        # "nightly" is the same image as the last nightly-<sha>: one build, two names.
        assert len(series.candidates) == TAGS
        last = series.candidates[-1]
        assert {last.label, *last.aliases} == {"nightly", nightlies[-1]}
        result = bisect(series.candidates, Predicate(gpu=gpu, model="deepseek-v4"),
                        store=store)
    assert result.found and result.direction == "lost"
    assert result.before is not None and result.after is not None
    assert result.before.candidate.label == nightlies[FIRST_BAD - 1]
    assert result.after.candidate.label == nightlies[FIRST_BAD]
    # Layer blobs were read for at most ceil(log2 n) + 2 tags; the base layer once.
    assert len(result.probes) <= math.ceil(math.log2(TAGS)) + 2 == max_probes(TAGS)
    assert result.builds_read == len(result.probes)
    units_read = sum(p.report.units.read for p in result.probes)
    units_cached = sum(p.report.units.cached for p in result.probes)
    assert units_read == len(result.probes) + 1
    assert units_cached == len(result.probes) - 1
    (change, *_) = result.changes
    assert change.library == "deep_gemm"
    assert "sm_120" in change.lost["jit_dispatch"]
    assert (change.verdict_before, change.verdict_after) == ("jit-dispatch", "missing")
    data = change.to_dict()
    assert data["before"]["package_version"] == "0.26.1rc1.dev77+ga6b593d2"
    assert data["after"]["package_version"] == "0.26.1rc1.dev181+gf5a76426"
    as_json = result.to_dict()
    assert as_json["last_good"]["label"] == nightlies[FIRST_BAD - 1]
    assert as_json["first_bad"]["label"] == nightlies[FIRST_BAD]


def test_bisect_again_reads_nothing(registry: Registry, nightlies: list[str],
                                    tmp_path: Path) -> None:
    gpu = load_gpu_catalog().find("rtx-pro-6000")
    with Store(tmp_path / "s.db") as store:
        series = series_for([f"{registry.host}/{REPO}"], match="^nightly-",
                            options=SourceOptions(), store=store)
        bisect(series.candidates, Predicate(gpu=gpu, require=("deep_gemm",)), store=store)
        second = bisect(series.candidates, Predicate(gpu=gpu, require=("deep_gemm",)),
                        store=store)
    assert second.found and second.builds_read == 0


def test_jit_arch_predicate_and_good_bad_range(registry: Registry, nightlies: list[str]
                                               ) -> None:
    series = series_for([f"{registry.host}/{REPO}"], match=None, options=SourceOptions(),
                        store=None)
    part = between(series.candidates, nightlies[2], nightlies[14])
    assert [c.label for c in part] == nightlies[2:15]
    result = bisect(part, Predicate(jit_arch="sm120", require=("deep_gemm",)))
    assert result.after is not None and result.after.candidate.label == nightlies[FIRST_BAD]
    assert result.predicate == "deep_gemm dispatches to sm_120"
    # Given newest first: bisect sees it by the engine versions and turns the series round,
    # so the newer build is not called the older one.
    backwards = bisect(list(reversed(part)), Predicate(jit_arch="sm_120"))
    assert backwards.direction == "lost" and backwards.order == "by engine version"
    assert backwards.after is not None
    assert backwards.after.candidate.label == nightlies[FIRST_BAD]
    assert "given newest first" in backwards.notes[0]


def test_no_boundary(registry: Registry, nightlies: list[str]) -> None:
    series = series_for([f"{registry.host}/{REPO}"], match="^nightly-", options=SourceOptions(),
                        store=None)
    h200 = load_gpu_catalog().find("h200")
    result = bisect(between(series.candidates, nightlies[0], nightlies[5]),
                    Predicate(gpu=h200, require=("deep_gemm",)))
    assert not result.found and result.exit_code == 1 and len(result.probes) == 2


def test_bisect_over_local_files(tmp_path: Path) -> None:
    files = [GOOD_NIGHTLY, GOOD_NIGHTLY, BAD_NIGHTLY, BAD_NIGHTLY]
    refs = []
    for number, wheel in enumerate(files):
        copy = tmp_path / f"{number}-{wheel.name}"
        copy.write_bytes(wheel.read_bytes())
        refs.append(str(copy))
    series = series_for(refs, match=None, options=SourceOptions(), store=None)
    result = bisect(series.candidates, Predicate(jit_arch="sm_120"))
    assert result.before is not None and result.before.candidate.ref == refs[1]
    assert result.after is not None and result.after.candidate.ref == refs[2]


def test_usage_errors(registry: Registry, nightlies: list[str]) -> None:
    with pytest.raises(UsageError, match="--gpu NAME"):
        Predicate()
    with pytest.raises(UsageError):
        Predicate(jit_arch="sm_banana")
    with pytest.raises(UsageError, match="one build"):
        series_for([f"{registry.host}/{REPO}:{nightlies[0]}"], match=None,
                   options=SourceOptions(), store=None)
    with pytest.raises(UsageError, match="at least two"):
        bisect([Candidate("x", "x")], Predicate(jit_arch="sm_120"))
    series = series_for([f"{registry.host}/{REPO}"], match="^nightly-", options=SourceOptions(),
                        store=None)
    with pytest.raises(UsageError, match="not in the series"):
        between(series.candidates, "nightly-000000000000", None)
    with pytest.raises(UsageError, match="regular expression"):
        series_for([f"{registry.host}/{REPO}"], match="(", options=SourceOptions(), store=None)


def test_files_sharing_a_library_id_are_compared_file_by_file(tmp_path: Path) -> None:
    """sgl-kernel ships one id for many files: each is paired with its own successor."""
    probes = []
    for index, (name, sm100) in enumerate([("a", "libsw_sm120a.so"), ("b", "libsw_sm100a.so")]):
        for folder, fixture in (("sm90", "libsw_sm90a.so"), ("sm100", sm100)):
            (tmp_path / name / "sgl_kernel" / folder).mkdir(parents=True)
            (tmp_path / name / "sgl_kernel" / folder / "x.so").write_bytes(
                (CUDA / fixture).read_bytes())
        report = scan_build(str(tmp_path / name), store=None)
        probes.append(BuildProbe(index, Candidate(name, str(tmp_path / name)), True, "", report))
    (change,) = compare(*probes)
    assert change.library == "sgl_kernel/sm100/x.so"
    assert change.lost["sass"] == ("sm_120a",) and change.gained["sass"] == ("sm_100a",)


def test_a_build_without_an_engine_says_why_it_is_bad(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    report = scan_build(str(tmp_path / "empty"), store=None)
    good, why, result = Predicate(gpu=load_gpu_catalog().find("h200")).judge(report)
    assert not good and result is not None
    assert result.no_verdict_reason is not None and why == result.no_verdict_reason


def _copies(tmp_path: Path, names: list[str], wheels: list[Path]) -> list[str]:
    refs = []
    for name, wheel in zip(names, wheels, strict=True):
        copy = tmp_path / name
        copy.write_bytes(wheel.read_bytes())
        refs.append(str(copy))
    return refs


def test_files_given_newest_first_are_judged_oldest_first(tmp_path: Path) -> None:
    """Names that say no version: the two ends' engine versions put the series round."""
    refs = _copies(tmp_path, ["new.whl", "newer-still.whl", "old.whl"],
                   [BAD_NIGHTLY, BAD_NIGHTLY, GOOD_NIGHTLY])
    series = series_for(refs, match=None, options=SourceOptions(), store=None)
    assert series.order == "as given" and [c.ref for c in series.candidates] == refs
    result = bisect(series.candidates, Predicate(jit_arch="sm_120"), order=series.order)
    assert result.order == "by engine version"
    assert result.direction == "lost"
    assert result.before is not None and result.before.candidate.ref == refs[2]
    assert result.after is not None and result.after.candidate.ref == refs[1]
    assert "0.26.1rc1.dev181" in result.notes[0] and "0.26.1rc1.dev77" in result.notes[0]
    assert [p["ref"] for p in result.to_dict()["probes"]] == [refs[2], refs[1], refs[0]]


def test_files_whose_names_give_versions_are_ordered_by_them(tmp_path: Path) -> None:
    refs = _copies(tmp_path, [BAD_NIGHTLY.name, GOOD_NIGHTLY.name], [BAD_NIGHTLY, GOOD_NIGHTLY])
    series = series_for(refs, match=None, options=SourceOptions(), store=None)
    assert series.order == "by version"
    assert [c.ref for c in series.candidates] == [refs[1], refs[0]]
    assert "not as given" in series.notes[0]
    result = bisect(series.candidates, Predicate(jit_arch="sm_120"), order=series.order)
    assert result.direction == "lost" and not result.notes
