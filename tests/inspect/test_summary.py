"""A layered build whose layers are all in the store is answered from one stored report."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from servewise.inspect.scan import scan_build
from servewise.inspect.summary import summary_key
from servewise.store import Store
from support.images import Entry, Image, build_tar, wheel_entries, write_oci_layout
from support.paths import BAD_NIGHTLY, GOOD_NIGHTLY

SITE = "usr/local/lib/python3.12/dist-packages"


def layout(root: Path, wheel: Path) -> str:
    base = build_tar([Entry("etc/os-release", b"ID=test\n")])
    image = Image([base, build_tar(wheel_entries(wheel, SITE))])
    return str(write_oci_layout(root, {"t": image}))


def comparable(report: object) -> dict[str, object]:
    data = report.to_dict()  # type: ignore[attr-defined]
    for library in data["libraries"]:
        library.pop("cached")
    data.pop("units"), data.pop("scanned_bytes")
    return data  # type: ignore[no-any-return]


def test_second_scan_is_the_stored_report(tmp_path: Path) -> None:
    ref = layout(tmp_path / "img", GOOD_NIGHTLY)
    with Store(tmp_path / "s.db") as store:
        first = scan_build(ref, store=store)
        second = scan_build(ref, store=store)
    fresh = scan_build(ref)
    assert comparable(second) == comparable(first) == comparable(fresh)
    assert all(library.cached for library in second.libraries)
    assert second.units.read == 0 and second.units.cached == 2
    with sqlite3.connect(tmp_path / "s.db") as db:
        keys = [key for (key,) in db.execute("SELECT key FROM scan_cache")]
    assert sum(key.startswith("build:") for key in keys) == 1


def test_other_layers_or_another_table_name_another_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = ["sha256:" + "a" * 64, "sha256:" + "b" * 64]
    key = summary_key("oci-layout", keys, 5)
    assert key is not None and key.startswith("build:")
    assert summary_key("oci-layout", keys[::-1], 5) != key  # layer order matters
    assert summary_key("oci-layout", keys, 6) != key  # another scanner
    assert summary_key("folder", keys, 5) is None  # folders: RECORD files are not units
    user = tmp_path / "data"
    user.mkdir()
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(user))
    assert summary_key("oci-layout", keys, 5) == key
    (user / "libraries.toml").write_text("version = 1\n")
    assert summary_key("oci-layout", keys, 5) != key  # the user's table changes identities


def test_a_damaged_stored_report_is_rebuilt(tmp_path: Path) -> None:
    ref = layout(tmp_path / "img", BAD_NIGHTLY)
    path = tmp_path / "s.db"
    with Store(path) as store:
        first = scan_build(ref, store=store)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE scan_cache SET data = '{\"libraries\": 3}' WHERE key LIKE 'build:%'")
    with Store(path) as store:
        again = scan_build(ref, store=store)
    assert comparable(again) == comparable(first)
