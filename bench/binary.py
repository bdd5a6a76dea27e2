"""The single executable: its size and its start (from launching it to the first 200 of
GET /api/v2/). `make build` makes dist/catalogue (the launcher with the catalogue's one-folder
build appended) and dist/catalogue-folder/ (that build); this group is skipped without them.
`--binary PATH` measures another build of the executable alongside (an older version).

Measured, median of five: the first start of a build (it unpacks itself into an empty cache
folder once), warm starts on a new data folder (which creates the database and the admin
account) and on an existing one, and the one-folder program started directly.

Targets: first start under 3 s, warm start under 1 s.
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.__main__ import free_port

DIST = Path(__file__).resolve().parent.parent / "dist"
EXE = ".exe" if sys.platform == "win32" else ""
BINARY = DIST / f"catalogue{EXE}"
FOLDER = DIST / "catalogue-folder" / f"catalogue{EXE}"


def _start(program: Path, data: Path, tmp: Path, cache: Path) -> float:
    """Seconds from launch to the first 200; the process is stopped (SIGTERM) afterwards."""
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp), "CI": "1", "CATALOGUE_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    proc = subprocess.Popen([str(program), "serve", "--data-dir", str(data), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/v2/", timeout=2).status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                if proc.poll() is not None:
                    raise SystemExit(f"{program} stopped with {proc.returncode}") from None
                time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _measure(binary: Path, tmp: Path, runs: int) -> dict[str, list[float]]:
    rows: dict[str, list[float]] = {}
    cache = tmp / "cache"
    for i in range(runs):
        shutil.rmtree(cache, ignore_errors=True)
        rows.setdefault("first start of the build (unpacks once)", []).append(
            _start(binary, tmp / f"first{i}", tmp, cache))
    for i in range(runs):
        rows.setdefault("warm start, new data folder", []).append(_start(binary, tmp / f"data{i}", tmp, cache))
        rows.setdefault("warm start, existing data folder", []).append(_start(binary, tmp / f"data{i}", tmp, cache))
    return rows


def binary_benchmarks(runs: int = 5, others: list[Path] | None = None) -> None:
    if not BINARY.is_file():
        print("\nno dist/catalogue: `make build` first to measure the single executable", flush=True)
        return
    print(f"\n{'start to the first 200 (' + str(runs) + ' runs)':<62} {'p50 s':>8} {'min s':>8} {'max s':>8}")
    for binary in [BINARY, *(others or [])]:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            rows = _measure(binary, tmp, runs)
            if binary == BINARY and FOLDER.is_file():
                for i in range(runs):
                    rows.setdefault("one-folder program, existing data folder", []).append(
                        _start(FOLDER, tmp / f"data{i}", tmp, tmp / "cache"))
        label = "dist/catalogue" if binary == BINARY else str(binary)
        for name, times in rows.items():
            print(f"{label + ': ' + name:<62} {statistics.median(times):>8.2f} {min(times):>8.2f} {max(times):>8.2f}")
        size = binary.stat().st_size
        print(f"{label}: {size / 1e6:.1f} MB ({size / 2**20:.1f} MiB)", flush=True)
    if FOLDER.is_file():
        print(f"dist/catalogue-folder/: {_folder_size(FOLDER.parent) / 1e6:.1f} MB unpacked")
