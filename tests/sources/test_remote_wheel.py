"""Remote wheels against local HTTP servers, with and without range support; PyPI-style indexes."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from servewise.errors import RegistryError, SourceError, UsageError
from servewise.inspect.bisect import Predicate, bisect
from servewise.inspect.scan import scan_build
from servewise.inspect.series import series_for
from servewise.sources import SourceOptions, open_source
from servewise.sources.remote_wheel import RemoteWheelSource, StreamedWheelSource, walk_zip_stream
from servewise.store import Store
from support.http_servers import Served, index_handler, index_pages, serve
from support.paths import BAD_NIGHTLY, GOOD_NIGHTLY

GOOD = GOOD_NIGHTLY.read_bytes()
BAD = BAD_NIGHTLY.read_bytes()


def libraries(report: object) -> list[tuple[object, ...]]:
    return [(lib.path, lib.scan.sass, lib.scan.ptx, lib.dispatch, lib.provenance)
            for lib in report.libraries]  # type: ignore[attr-defined]


def so_compressed_bytes(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(i.compress_size for i in archive.infolist() if ".so" in i.filename)


def test_range_reads_match_the_local_wheel_and_fetch_little(tmp_path: Path) -> None:
    # Pad the wheel with a large non-library member so "little" means something.
    padded = tmp_path / GOOD_NIGHTLY.name
    with zipfile.ZipFile(io.BytesIO(GOOD)) as src, zipfile.ZipFile(padded, "w") as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
        out.writestr("vllm/model_weights.bin", bytes(range(256)) * 16384, zipfile.ZIP_STORED)
    data = padded.read_bytes()
    served = Served(files={f"/{padded.name}": data})
    with serve(served) as base:
        source = open_source(f"{base}/{padded.name}")
        assert isinstance(source, RemoteWheelSource)
        remote = scan_build(f"{base}/{padded.name}")
    local = scan_build(str(padded))
    assert libraries(remote) == libraries(local)
    assert remote.metadata["range_requests"] is True
    assert remote.metadata["package"] == "vllm"
    assert all(method == "GET" and rng for method, _, rng in served.requests)
    budget = so_compressed_bytes(data) + 2**20
    assert served.sent_bytes <= budget < len(data) + 2**20
    assert served.sent_bytes < len(data) // 2  # the 4 MiB member was never fetched


def test_a_server_without_ranges_is_streamed_once(tmp_path: Path) -> None:
    served = Served(files={f"/{GOOD_NIGHTLY.name}": GOOD}, ranges=False)
    with serve(served) as base:
        source = open_source(f"{base}/{GOOD_NIGHTLY.name}")
        assert isinstance(source, StreamedWheelSource)
        served.requests.clear()
        report = scan_build(f"{base}/{GOOD_NIGHTLY.name}")
    assert libraries(report) == libraries(scan_build(str(GOOD_NIGHTLY)))
    assert any("ignores range requests" in note for note in report.notes)
    assert report.metadata["range_requests"] is False
    assert len([r for r in served.requests if r[0] == "GET"]) == 2  # the probe, the stream


def test_stream_walk_reads_data_descriptors() -> None:
    class Unseekable(io.RawIOBase):
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, b: object) -> int:
            chunk = bytes(b)  # type: ignore[call-overload]
            self.data += chunk
            return len(chunk)

    sink = Unseekable()
    with zipfile.ZipFile(io.BytesIO(GOOD)) as src, zipfile.ZipFile(sink, "w") as out:
        for info in src.infolist():
            entry = zipfile.ZipInfo(info.filename, info.date_time)
            entry.compress_type = zipfile.ZIP_DEFLATED
            with out.open(entry, "w") as member:
                member.write(src.read(info))
    streamed = bytes(sink.data)
    assert zipfile.ZipFile(io.BytesIO(streamed)).infolist()[0].flag_bits & 0x8
    from servewise.inspect.scan import scan_chunks
    from servewise.sources.blobs import ChunkStream

    chunks = (streamed[i : i + 1000] for i in range(0, len(streamed), 1000))
    result = walk_zip_stream(ChunkStream(chunks), scan_chunks, "x.whl")
    scanned = {p for p, s in result["scans"].items() if s is not None}
    assert "vllm/third_party/deep_gemm/_C.abi3.so" in scanned
    sizes = dict(map(tuple, result["files"]))
    assert sizes["vllm/_C.abi3.so"] == zipfile.ZipFile(GOOD_NIGHTLY).getinfo("vllm/_C.abi3.so"
                                                                             ).file_size


def test_second_read_comes_from_the_store(tmp_path: Path) -> None:
    served = Served(files={f"/{GOOD_NIGHTLY.name}": GOOD})
    with serve(served) as base, Store(tmp_path / "s.db") as store:
        scan_build(f"{base}/{GOOD_NIGHTLY.name}", store=store)
        before = served.sent_bytes
        again = scan_build(f"{base}/{GOOD_NIGHTLY.name}", store=store)
    assert all(lib.cached for lib in again.libraries)
    # Only the directory and the small metadata files were fetched again.
    assert served.sent_bytes - before < 80_000 < so_compressed_bytes(GOOD) + 80_000


@pytest.mark.parametrize(("path", "body", "why"), [
    ("/page.whl", b"<html>login</html>", "no zip end record"),
    ("/notes.txt", b"hello", "does not name a .whl file"),
])
def test_urls_that_are_not_wheels(path: str, body: bytes, why: str) -> None:
    with serve(Served(files={path: body})) as base, pytest.raises(SourceError) as caught:
        scan_build(base + path)
    assert why in caught.value.message and caught.value.hint


def test_missing_url() -> None:
    with serve(Served()) as base, pytest.raises(RegistryError, match="HTTP 404"):
        scan_build(f"{base}/gone.whl")


def _wheel_name(version: str, plat: str = "manylinux_2_28_x86_64") -> str:
    return f"vllm-{version}-cp38-abi3-{plat}.whl"


@pytest.mark.parametrize("style", ["json", "html"])
def test_pypi_ref_through_an_index(style: str) -> None:
    wheels = {_wheel_name("0.26.1"): GOOD, _wheel_name("0.26.1", "manylinux_2_28_aarch64"): BAD,
              "vllm-0.26.1.tar.gz": b"sdist"}
    served = Served(handler=index_handler)
    with serve(served) as base:
        served.files = index_pages("vllm", wheels, base)
        options = SourceOptions(index_url=f"{base}/{style}/")
        amd = scan_build("pypi:vllm==0.26.1", options=options)
        arm = scan_build("pypi:vllm==0.26.1", options=SourceOptions(
            index_url=f"{base}/{style}/", platform="linux/arm64"))
        with pytest.raises(SourceError) as caught:
            scan_build("pypi:vllm==0.26.1", options=SourceOptions(
                index_url=f"{base}/{style}/", platform="linux/s390x"))
        with pytest.raises(RegistryError, match="not on"):
            scan_build("pypi:vllm==9.9", options=options)
        with pytest.raises(RegistryError, match="no project"):
            scan_build("pypi:nothing-here==1.0", options=options)
    assert amd.metadata["filename"] == _wheel_name("0.26.1")
    assert amd.metadata["sha256"]
    deep_gemm = "vllm/third_party/deep_gemm/_C.abi3.so"
    assert "sm_120" in amd.library(deep_gemm).dispatch
    assert "sm_120" not in arm.library(deep_gemm).dispatch
    assert "manylinux_2_28_aarch64" in caught.value.message


def test_bisect_over_index_versions() -> None:
    versions = ["0.25.0", "0.25.1", "0.26.0rc1", "0.26.0", "0.26.1", "0.27.0"]
    wheels = {_wheel_name(v): (GOOD if i < 3 else BAD) for i, v in enumerate(versions)}
    served = Served(handler=index_handler)
    with serve(served) as base:
        served.files = index_pages("vllm", wheels, base, upload_times={
            _wheel_name(v): f"2026-07-{10 + i:02d}T00:00:00Z" for i, v in enumerate(versions)
        })
        options = SourceOptions(index_url=f"{base}/json/")
        series = series_for(["pypi:vllm"], match=None, options=options, store=None)
        assert [c.label for c in series.candidates] == versions  # version order, rc before final
        result = bisect(series.candidates, Predicate(jit_arch="sm_120"))
        only_final = series_for(["pypi:vllm"], match=r"^\d+\.\d+\.\d+$", options=options,
                                store=None)
    assert result.before is not None and result.before.candidate.label == "0.26.0rc1"
    assert result.after is not None and result.after.candidate.label == "0.26.0"
    assert result.after.candidate.created == "2026-07-13T00:00:00Z"
    assert "0.26.0rc1" not in [c.label for c in only_final.candidates]


def test_pypi_ref_needs_a_version() -> None:
    with pytest.raises(UsageError, match="names no version"):
        open_source("pypi:vllm")
