"""A server worker's resident memory before and after it imports a large raster.

A 20,000 x 20,000 three-band GeoTIFF (1.2 GB of pixels, within the 50,000 a side and 1 giga-
pixel limits) is written once, uploaded to a fresh server, and imported; the worker's resident
memory (VmRSS) is read from /proc before the upload and after the import has finished (and its
thumbnail been drawn). "Before" is taken after a small raster was imported, so that the libraries
a first import loads (GDAL, PROJ's data) count on both sides. Target: after at most 1.5 times
before. The peak (VmHWM) is printed too.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from bench.__main__ import PASSWORD, seed_users, start_server
from bench.uploads import peak_mb, reset_peak, server_pids, status_mb

SIDE = 20_000


def make_raster(path: Path, side: int = SIDE) -> Path:
    import rasterio
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    rng = np.random.default_rng(3)
    with rasterio.open(path, "w", driver="GTiff", width=side, height=side, count=3, dtype="uint8", crs="EPSG:3857",
                       transform=from_origin(0, 2_000_000, 10, 10), tiled=True, blockxsize=512, blockysize=512,
                       compress="deflate") as ds:
        for row in range(0, side, 2048):
            rows = min(2048, side - row)
            base = rng.integers(0, 64, (3, rows, 1), dtype=np.uint8)
            ds.write(base + np.arange(side, dtype=np.uint16)[None, None, :].astype(np.uint8) // 8,
                     window=Window(0, row, side, rows))
    return path


def import_raster(client: httpx.Client, raster: Path) -> dict:
    with open(raster, "rb") as f:
        r = client.post("/api/v2/uploads/upload", files={"base_file": (raster.name, f, "image/tiff")})
    r.raise_for_status()
    exec_id = r.json()["execution_id"]
    while True:
        status = client.get(f"/api/v2/executionrequest/{exec_id}").json()["request"]
        if status["status"] in ("finished", "failed"):
            return status
        time.sleep(0.2)


def rss_mb(pids: list[int]) -> float:
    """The worker's resident memory, in MB."""
    return status_mb(pids, "VmRSS")


def memory_benchmarks() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        raster = make_raster(tmp / "large.tif")
        data = tmp / "data"
        seed_users(data, 1)
        proc, url = start_server(data, 1)
        try:
            pids = server_pids(proc.pid)
            client = httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=600)
            import_raster(client, make_raster(tmp / "small.tif", 1000))  # the libraries loaded, as in use
            time.sleep(2)
            before = rss_mb(pids)
            reset_peak(pids)
            started = time.monotonic()
            status = import_raster(client, raster)
            took = time.monotonic() - started
            time.sleep(2)  # the thumbnail is drawn just after
            after, peak = rss_mb(pids), peak_mb(pids)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"\n{'raster import':<58} {'status':>9} {'seconds':>8} {'RSS before':>11} {'peak':>8} {'after':>8} {'after/before':>13}")
    print(f"{f'{SIDE} x {SIDE} x 3 GeoTIFF ({raster_size_mb(SIDE):.0f} MB of pixels)':<58} {status['status']:>9} "
          f"{took:>8.1f} {before:>10.0f}M {peak:>7.0f}M {after:>7.0f}M {after / before:>13.2f}")


def raster_size_mb(side: int) -> float:
    return side * side * 3 / 1e6
