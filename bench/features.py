"""The OGC API - Features benchmark: pages of 1,000 features of a 100,000-polygon dataset.

A layer of 100,000 small polygons (bench/ogc.py ``make_polygons``, written with pyogrio) is
uploaded once to a real server. Then, one request at a time over one kept-alive connection
(after a warm-up that fills the server's caches), each case is asked REQUESTS times and its
latency p50 and p90 printed, with the server's CPU time a request (on a busy machine the
latency is mostly waiting; the CPU time is near what a quiet machine's latency would be):

- ``/ogcapi/collections/{id}/items?limit=1000`` at offsets 0, 50,000 and 99,000;
- the same with a bbox (a box that holds a few thousand polygons), and with a CQL2 filter;
- WFS 2.0 GetFeature (GeoJSON) of the same 1,000 features (count=1000&startIndex=...), in the
  same run, side by side.

Target: items, 1,000 features of the 100,000: < 50 ms p50. The machine is shared: compare the
figures of one run with each other.

Run: ``python -m bench --only features`` (or ``python -m bench.features``).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.__main__ import PASSWORD, seed_users, start_server
from bench.ogc import POLYGONS, make_polygons, upload
from bench.uploads import server_pids

REQUESTS = 40
WARM = 5


def _cpu_seconds(pids: list[int]) -> float:
    """CPU time (user and system) the processes have used, in seconds."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _times(client: httpx.Client, url: str, pids: list[int], count: int = REQUESTS) -> tuple[dict[str, float], int, int]:
    """Latencies in ms (p50, p90) of ``count`` requests after a warm-up, and the server's CPU time
    a request (ms: what a quiet machine's latency comes near); the answer's size and how many
    features it held."""
    last = None
    for _ in range(WARM):
        last = client.get(url)
        last.raise_for_status()
    took = []
    cpu = _cpu_seconds(pids)
    for _ in range(count):
        started = time.perf_counter()
        r = client.get(url)
        took.append((time.perf_counter() - started) * 1000)
        r.raise_for_status()
        last = r
    cpu = (_cpu_seconds(pids) - cpu) / count * 1000
    took.sort()
    doc = last.json()
    return ({"p50": statistics.median(took), "p90": took[int(len(took) * 0.9) - 1], "cpu": cpu}, len(last.content),
            len(doc.get("features", [])))


def features_benchmarks(args=None) -> list[tuple[str, dict[str, float]]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        cells = make_polygons(tmp / "cells.gpkg")
        print(f"generated {POLYGONS:,} polygons in {time.perf_counter() - started:.1f} s", flush=True)
        data = tmp / "data"
        seed_users(data, 1)
        proc, url = start_server(data, 1)
        try:
            with httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=600) as client:
                polygons = upload(client, {"base_file": ("cells.gpkg", cells.read_bytes())})
            name = polygons["alternate"].split(":", 1)[1]
            items = f"/ogcapi/collections/{name}/items?limit=1000"
            wfs = (f"/geoserver/ows?service=WFS&version=2.0.0&request=GetFeature&typenames={polygons['alternate']}"
                   "&outputFormat=application/json&count=1000")
            cases = []
            for offset in (0, 50_000, 99_000):
                cases.append((f"items limit=1000 offset={offset:,}", f"{items}&offset={offset}"))
                cases.append((f"WFS GetFeature count=1000 startIndex={offset:,}", f"{wfs}&startIndex={offset}"))
            cases.append(("items limit=1000 bbox=-60,-40,60,40", f"{items}&bbox=-60,-40,60,40"))
            cases.append(("WFS GetFeature count=1000 bbox=-60,-40,60,40",
                          f"{wfs}&bbox=-40,-60,40,60,urn:ogc:def:crs:EPSG::4326"))
            cases.append(("items limit=1000 filter=size > 100", f"{items}&filter=size%20%3E%20100"))
            cases.append(("items limit=1000 crs=EPSG:3857",
                          f"{items}&crs=http://www.opengis.net/def/crs/EPSG/0/3857"))
            with httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=60) as client:
                pids = server_pids(proc.pid)
                for label, target in cases:
                    figures, size, returned = _times(client, target, pids)
                    print(f"{label:<48} p50 {figures['p50']:7.1f} ms  p90 {figures['p90']:7.1f} ms"
                          f"  server CPU {figures['cpu']:6.1f} ms  {returned} features, {size / 1e6:.1f} MB", flush=True)
                    rows.append((label, figures))
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return rows


if __name__ == "__main__":
    features_benchmarks()
