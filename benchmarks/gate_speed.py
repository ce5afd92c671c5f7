"""Speed of `servewise inspect` on the real vllm==0.33.0 wheel, against the seed's manual method.

Side by side in one run, each repeated ``--runs`` times (median reported):

* baseline: unzip every ``.so`` of the wheel, then ``strings F | grep -oE "^sm[0-9]+_" | sort -u``
  on each (the seed's 60-second check, done for every library);
* ``servewise inspect WHEEL --json --no-cache``: the full listing (SASS, PTX, JIT-dispatch per
  library), with the peak memory of its whole process tree;
* ``servewise inspect WHEEL --json`` a second time, served from the store.

It also checks that servewise's arch sets equal cuobjdump's (``--list-elf``/``--list-ptx``,
normalised) for every library. Usage::

    .venv/bin/python benchmarks/gate_speed.py [--wheel PATH] [--runs 5]

Without ``--wheel`` the wheel is downloaded once with pip into ``~/.cache/servewise-bench``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _startup import bytecode_ready  # noqa: E402

from support.cuobjdump import find_cuobjdump, list_archs, normalise_for_cuobjdump  # noqa: E402

WHEEL_NAME = "vllm==0.33.0"


def fetch_wheel() -> Path:
    """The vllm 0.33.0 wheel, downloaded once."""
    cache = Path.home() / ".cache" / "servewise-bench"
    found = sorted(cache.glob("vllm-0.33.0-*.whl"))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(cache),
                    WHEEL_NAME], check=True)
    return sorted(cache.glob("vllm-0.33.0-*.whl"))[0]


def _tree_rss_kib(root_pid: int) -> int:
    """Resident memory of a process and all its descendants, in KiB."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            with open(f"/proc/{entry}/statm") as handle:
                pages = int(handle.read().split()[1])
            rss[int(entry)] = pages * (os.sysconf("SC_PAGE_SIZE") // 1024)
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, bytes]:
    """Wall seconds, peak tree memory (KiB) and stdout of one command."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{argv[0]} exited {process.returncode}")
    return elapsed, peak, out


def manual_method(wheel: Path) -> tuple[float, dict[str, set[str]]]:
    """The seed's method on every library: unzip, strings, grep, sort -u."""
    start = time.perf_counter()
    found: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["unzip", "-q", "-o", str(wheel), "*.so", "-d", tmp], check=True)
        for path in sorted(Path(tmp).rglob("*.so")):
            pipeline = (f"strings '{path}' | grep -oE '^sm[0-9]+_' | sort -u")
            out = subprocess.run(["bash", "-c", pipeline], capture_output=True, text=True).stdout
            found[str(path.relative_to(tmp))] = set(out.split())
    return time.perf_counter() - start, found


def cuobjdump_sets(wheel: Path) -> dict[str, tuple[set[str], set[str]]]:
    """cuobjdump's (ELF, PTX) arch sets for every library of the wheel."""
    result: dict[str, tuple[set[str], set[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith(".so"):
                archive.extract(name, tmp)
                result[name] = list_archs(Path(tmp) / name)
                os.unlink(Path(tmp) / name)
    return result


def main() -> None:
    """Run the comparison and print a Markdown summary plus JSON figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--servewise", default=str(ROOT / ".venv" / "bin" / "servewise"))
    args = parser.parse_args()
    bytecode_ready()
    wheel = args.wheel or fetch_wheel()
    cache_dir = tempfile.mkdtemp(prefix="servewise-bench-")
    env = {**os.environ, "SERVEWISE_CACHE_DIR": cache_dir}

    manual_times, fresh_times, fresh_peaks, cached_times = [], [], [], []
    listing = None
    for _ in range(args.runs):
        seconds, _found = manual_method(wheel)
        manual_times.append(seconds)
        seconds, peak, out = timed([args.servewise, "inspect", str(wheel), "--json",
                                    "--no-cache"], env)
        fresh_times.append(seconds)
        fresh_peaks.append(peak)
        listing = json.loads(out)
    timed([args.servewise, "inspect", str(wheel), "--json"], env)  # fill the store
    for _ in range(args.runs):
        seconds, _peak, out = timed([args.servewise, "inspect", str(wheel), "--json"], env)
        cached_times.append(seconds)
        assert json.loads(out)["libraries"] == [
            {**lib, "cached": True} for lib in listing["libraries"]  # type: ignore[index]
        ], "cached listing differs"
    shutil.rmtree(cache_dir, ignore_errors=True)

    agree = True
    if find_cuobjdump() is not None and listing is not None:
        reference = cuobjdump_sets(wheel)
        for lib in listing["libraries"]:
            elf, ptx = reference.get(lib["path"], (set(), set()))
            ours_elf = {normalise_for_cuobjdump(a) for a in lib["sass"]}
            ours_ptx = {normalise_for_cuobjdump(a) for a in lib["ptx"]}
            if (ours_elf, ours_ptx) != (elf, ptx):
                agree = False
                print(f"MISMATCH {lib['path']}: ours {ours_elf} {ours_ptx} cuobjdump {elf} {ptx}")
    manual = statistics.median(manual_times)
    fresh = statistics.median(fresh_times)
    cached = statistics.median(cached_times)
    figures = {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d"),
        "wheel": wheel.name,
        "wheel_bytes": wheel.stat().st_size,
        "runs": args.runs,
        "manual_method_s": round(manual, 3),
        "servewise_no_cache_s": round(fresh, 3),
        "ratio_servewise_to_manual": round(fresh / manual, 3),
        "servewise_peak_tree_rss_mib": round(max(fresh_peaks) / 1024, 1),
        "servewise_cached_s": round(cached, 3),
        "archs_equal_cuobjdump": agree if find_cuobjdump() else None,
        "all_runs": {"manual": manual_times, "no_cache": fresh_times, "cached": cached_times},
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
