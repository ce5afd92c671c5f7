"""Speed of `servewise gate` on an image in a local registry, against skopeo + unpack + strings.

Builds (once, cached in ``~/.cache/servewise-bench/image``) an image of the real
``vllm==0.33.0`` wheel's files in three gzip layers balanced by size (at least 600 MB
uncompressed), pushes it to Debian's ``docker-registry`` on 127.0.0.1, then, side by side,
each ``--runs`` times (median reported):

* baseline, the manual path: ``skopeo copy docker://… dir:``, unpack every layer with
  ``tar -xzf``, then ``strings F | grep -oE "^sm[0-9]+_" | sort -u`` on every ``.so``;
* ``servewise gate IMAGE --gpu rtx-pro-6000 --json`` with an empty store (first run), and
  again with the store it filled (second run);
* decompression throughput on one core: ISA-L gzip on the image's layers, and zstd
  (``zstandard``, level 3) on the same tar bytes, MB/s of uncompressed output;
* a remote wheel read: ``servewise inspect http://127.0.0.1:…/vllm-0.33.0-….whl`` against a
  local HTTP server with range support, counting the bytes the server sent, against the
  compressed size of the wheel's ``.so`` members plus 1 MiB.

Usage::

    .venv/bin/python benchmarks/image_speed.py [--wheel PATH] [--runs 3] [--json OUT]

It prints a table and writes every figure as JSON (default
``~/.cache/servewise-bench/image_speed.json``).

Needs ``skopeo`` (Debian package) and ``/usr/bin/docker-registry``. Without ``--wheel`` the
wheel is downloaded once with pip into ``~/.cache/servewise-bench``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import zstandard
from isal import igzip

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _startup import bytecode_ready  # noqa: E402
from gate_speed import fetch_wheel  # noqa: E402

from servewise.sources.blobs import ChunkStream, GzipReader  # noqa: E402
from support.http_servers import Served, serve  # noqa: E402
from support.registry import start_registry  # noqa: E402

SITE = "usr/local/lib/python3.12/dist-packages"
CACHE = Path.home() / ".cache" / "servewise-bench"
SERVEWISE = str(ROOT / ".venv" / "bin" / "servewise")
REPO, TAG = "bench/vllm", "0.33.0"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def build_layers(wheel: Path) -> tuple[list[Path], int]:
    """Three gzip layer blobs (cached) holding the wheel's files; and their tar bytes."""
    folder = CACHE / "image"
    blobs = [folder / f"layer{i}.tar.gz" for i in range(3)]
    meta = folder / "layers.json"
    if meta.exists() and all(b.exists() for b in blobs):
        return blobs, int(json.loads(meta.read_text())["tar_bytes"])
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        infos = sorted((i for i in archive.infolist() if not i.is_dir()),
                       key=lambda i: i.file_size, reverse=True)
        groups: list[list[zipfile.ZipInfo]] = [[], [], []]
        for info in infos:  # greedy: the largest file into the lightest layer
            min(groups, key=lambda g: sum(i.file_size for i in g)).append(info)
        total = 0
        for group, blob in zip(groups, blobs, strict=True):
            out = io.BytesIO()
            with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for info in group:
                    data = archive.read(info)
                    member = tarfile.TarInfo(f"{SITE}/{info.filename}")
                    member.size, member.mode, member.mtime = len(data), 0o644, 1_700_000_000
                    tar.addfile(member, io.BytesIO(data))
            total += len(out.getvalue())
            blob.write_bytes(igzip.compress(out.getvalue(), compresslevel=2))
    meta.write_text(json.dumps({"tar_bytes": total}))
    return blobs, total


def push(registry: Any, blobs: list[Path]) -> str:
    """Push config, layers and manifest; return the image reference."""
    layers = []
    diff_ids = []
    for blob in blobs:
        data = blob.read_bytes()
        registry.push_blob(REPO, data)
        layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                       "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)})
        tar_bytes = igzip.decompress(data)  # type: ignore[no-untyped-call]
        diff_ids.append("sha256:" + hashlib.sha256(tar_bytes).hexdigest())
    config = json.dumps({"architecture": "amd64", "os": "linux", "created":
                         "2026-11-01T00:00:00Z", "rootfs": {"type": "layers",
                                                            "diff_ids": diff_ids}}).encode()
    registry.push_blob(REPO, config)
    manifest = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": {
        "mediaType": "application/vnd.oci.image.config.v1+json",
        "digest": "sha256:" + hashlib.sha256(config).hexdigest(), "size": len(config)},
        "layers": layers}).encode()
    registry.push_manifest(REPO, TAG, manifest, OCI_MANIFEST)
    return f"{registry.host}/{REPO}:{TAG}"


def manual(ref: str) -> tuple[float, dict[str, set[str]]]:
    """skopeo copy to a dir, unpack every layer, strings | grep on every .so."""
    start = time.perf_counter()
    found: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        copied, root = Path(tmp) / "copy", Path(tmp) / "root"
        root.mkdir()
        subprocess.run(["skopeo", "copy", "--src-tls-verify=false", "--quiet",
                        f"docker://{ref}", f"dir:{copied}"], check=True)
        manifest = json.loads((copied / "manifest.json").read_text())
        for layer in manifest["layers"]:
            blob = copied / layer["digest"].split(":", 1)[1]
            subprocess.run(["tar", "-xzf", str(blob), "-C", str(root)], check=True)
        for path in sorted(root.rglob("*.so")):
            pipeline = f"strings '{path}' | grep -oE '^sm[0-9]+_' | sort -u"
            out = subprocess.run(["bash", "-c", pipeline], capture_output=True, text=True).stdout
            found[str(path.relative_to(root))] = set(out.split())
    return time.perf_counter() - start, found


def servewise(argv: list[str], cache: Path) -> tuple[float, dict[str, Any]]:
    """Wall seconds and JSON of one servewise command with its own store."""
    env = {**os.environ, "SERVEWISE_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([SERVEWISE, *argv, "--json"], capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"servewise {argv[0]} failed: {done.stdout[-2000:]!r}")
    return elapsed, json.loads(done.stdout)


def throughput(blobs: list[Path]) -> dict[str, float]:
    """MB/s of uncompressed output on one core: ISA-L gzip (servewise's own reader, from
    memory), and zstd (level 3) on the same tar bytes."""
    gzip_bytes = gzip_s = zstd_bytes = zstd_s = 0.0
    for blob in blobs:
        data = blob.read_bytes()
        start = time.perf_counter()
        pieces = (data[i : i + (1 << 20)] for i in range(0, len(data), 1 << 20))
        reader = GzipReader(ChunkStream(pieces))  # what servewise reads layers with
        while chunk := reader.read(4 << 20):
            gzip_bytes += len(chunk)
        gzip_s += time.perf_counter() - start
        tar_bytes = igzip.decompress(data)  # type: ignore[no-untyped-call]
        packed = zstandard.ZstdCompressor(level=3).compress(tar_bytes)
        start = time.perf_counter()
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(packed)) as zstd_reader:
            while chunk := zstd_reader.read(4 << 20):
                zstd_bytes += len(chunk)
        zstd_s += time.perf_counter() - start
    return {"gzip_isal_mb_per_s": gzip_bytes / gzip_s / 1e6,
            "zstd_mb_per_s": zstd_bytes / zstd_s / 1e6}


def remote_wheel(wheel: Path) -> dict[str, Any]:
    """Bytes a remote inspect transfers, against the .so members' compressed size + 1 MiB."""
    with zipfile.ZipFile(wheel) as archive:
        so_bytes = sum(i.compress_size for i in archive.infolist() if ".so" in i.filename)
    served = Served(files={f"/{wheel.name}": wheel.read_bytes()})
    with serve(served) as base, tempfile.TemporaryDirectory() as tmp:
        seconds, report = servewise(["inspect", f"{base}/{wheel.name}", "--no-cache"], Path(tmp))
    return {"transferred_bytes": served.sent_bytes, "so_compressed_bytes": so_bytes,
            "budget_bytes": so_bytes + 2**20, "wheel_bytes": wheel.stat().st_size,
            "seconds": seconds, "libraries": len(report["libraries"]),
            "within_budget": served.sent_bytes <= so_bytes + 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--wheel", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=CACHE / "image_speed.json")
    args = parser.parse_args()
    bytecode_ready()
    if shutil.which("skopeo") is None:
        raise SystemExit("skopeo is missing: apt-get install skopeo")
    wheel = args.wheel or fetch_wheel()
    blobs, tar_bytes = build_layers(wheel)
    runs: dict[str, list[float]] = {"manual": [], "first": [], "second": []}
    with tempfile.TemporaryDirectory() as tmp, start_registry(Path(tmp) / "registry") as reg:
        ref = push(reg, blobs)
        gate = ["gate", ref, "--gpu", "rtx-pro-6000"]
        for number in range(args.runs):
            seconds, found = manual(ref)
            runs["manual"].append(seconds)
            cache = Path(tmp) / f"store{number}"
            first, report = servewise(gate, cache)
            second, again = servewise(gate, cache)
            runs["first"].append(first)
            runs["second"].append(second)
            assert again["libraries"] == report["libraries"]
            print(f"run {number + 1}: manual {seconds:.2f} s, servewise first {first:.2f} s, "
                  f"second {second:.3f} s", file=sys.stderr)
    median = {k: statistics.median(v) for k, v in runs.items()}
    speeds = throughput(blobs)
    remote = remote_wheel(wheel)
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}",
        "load_average": os.getloadavg(),
        "image": {"layers": len(blobs), "compressed_bytes": sum(b.stat().st_size for b in blobs),
                  "uncompressed_bytes": tar_bytes, "libraries": len(report["libraries"]),
                  "manual_libraries": len(found)},
        "runs": runs, "median_s": median,
        "gate_speedup": median["manual"] / median["first"],
        "second_run_speedup": median["first"] / median["second"],
        **speeds, "remote_wheel": remote,
    }
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    rows = [
        ("image", f"{len(blobs)} gzip layers, {tar_bytes / 1e6:.0f} MB uncompressed, "
                  f"{result['image']['compressed_bytes'] / 1e6:.0f} MB compressed"),
        ("manual: skopeo copy + tar -xzf + strings|grep", f"{median['manual']:.2f} s"),
        ("servewise gate, empty store", f"{median['first']:.2f} s"),
        ("speed-up (goal ≥ 3x)", f"{result['gate_speedup']:.1f}x"),
        ("servewise gate, second run", f"{median['second']:.3f} s"),
        ("second run speed-up (goal ≥ 10x)", f"{result['second_run_speedup']:.1f}x"),
        ("gzip (ISA-L), one core (goal ≥ 500 MB/s)", f"{speeds['gzip_isal_mb_per_s']:.0f} MB/s"),
        ("zstd, one core", f"{speeds['zstd_mb_per_s']:.0f} MB/s"),
        ("remote wheel: transferred / budget",
         f"{remote['transferred_bytes'] / 1e6:.1f} MB / {remote['budget_bytes'] / 1e6:.1f} MB "
         f"(wheel {remote['wheel_bytes'] / 1e6:.0f} MB)"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
