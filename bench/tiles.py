"""The tiles benchmark (issue 32): OGC API - Tiles of a layer of 100,000 polygons.

The layer (bench/ogc.py ``make_polygons``: hexagons all over the world) is uploaded once. Then,
over HTTP, one request at a time:

(a) PNG map tiles with the tile cache off (CATALOGUE_TILE_CACHE_MB=0) and the layer cache warm
    (one tile of each zoom drawn first): p50 and p99 over DISTINCT tiles of zoom 3 to 6, none
    asked twice. Target: p50 < 25 ms. Beside it, WMS GetMap of the same boxes at 256 x 256.
(b) Mapbox Vector Tiles of the same tiles, cache off.
(c) With the tile cache on (the default): one tile asked REPEATS times, PNG and MVT. Target:
    p50 < 3 ms.

``python -m bench.tiles`` or ``python -m bench --only tiles``. The machine is shared: compare the
figures of one run with each other.
"""

from __future__ import annotations

import random
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from bench.__main__ import PASSWORD, seed_users, start_server
from bench.ogc import POLYGONS, make_polygons, upload

DISTINCT = 60
REPEATS = 200
ZOOMS = (3, 4, 5, 6)


def start(data: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    return start_server(data, 1, env=env, tries=600)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=20)


def tiles(count: int, seed: int = 11) -> list[tuple[int, int, int]]:
    """``count`` distinct tiles of ZOOMS between about 75 S and 75 N (where the polygons are)."""
    rng = random.Random(seed)
    out: set[tuple[int, int, int]] = set()
    while len(out) < count:
        z = ZOOMS[len(out) % len(ZOOMS)]
        n = 1 << z
        out.add((z, rng.randrange(n // 8, n - n // 8), rng.randrange(n)))
    return sorted(out)


def bounds(z: int, y: int, x: int) -> str:
    half = 20037508.342789244
    side = 2 * half / (1 << z)
    return f"{-half + x * side},{half - (y + 1) * side},{-half + (x + 1) * side},{half - y * side}"


def timed(client: httpx.Client, paths: list[str], media: str) -> dict[str, float]:
    times = []
    for path in paths:
        started = time.perf_counter()
        r = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        if r.status_code != 200 or not r.headers["content-type"].startswith(media):
            raise SystemExit(f"{path}: {r.status_code} {r.text[:200]}")
    times.sort()
    return {"p50": times[len(times) // 2], "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
            "n": len(times)}


def tiles_benchmarks(args=None) -> list[tuple[str, dict[str, float]]]:
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cells = make_polygons(tmp / "cells.gpkg")
        data = tmp / "data"
        seed_users(data, 1)
        proc, url = start(data, {"CATALOGUE_TILE_CACHE_MB": "0"})
        try:
            with httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=600) as client:
                layer = upload(client, {"base_file": ("cells.gpkg", cells.read_bytes())})
                cid = layer["alternate"].split(":", 1)[1]
                chosen = tiles(DISTINCT)
                warm = [(z, (1 << z) // 2, 0) for z in ZOOMS]  # the layer cache: read, projected, thinned
                for z, y, x in warm:
                    client.get(f"/ogcapi/collections/{cid}/map/tiles/WebMercatorQuad/{z}/{y}/{x}")
                    client.get(f"/ogcapi/collections/{cid}/tiles/WebMercatorQuad/{z}/{y}/{x}")
                png = [f"/ogcapi/collections/{cid}/map/tiles/WebMercatorQuad/{z}/{y}/{x}" for z, y, x in chosen]
                mvt = [f"/ogcapi/collections/{cid}/tiles/WebMercatorQuad/{z}/{y}/{x}" for z, y, x in chosen]
                wms = [f"/geoserver/ows?service=WMS&version=1.3.0&request=GetMap&layers={layer['alternate']}&styles="
                       f"&crs=EPSG:3857&bbox={bounds(z, y, x)}&width=256&height=256&format=image/png&transparent=true"
                       for z, y, x in chosen]
                rows.append((f"PNG tile, {POLYGONS:,} polygons, {DISTINCT} distinct z3-6, cache off",
                             timed(client, png, "image/png")))
                rows.append(("WMS GetMap 256x256 of the same boxes", timed(client, wms, "image/png")))
                rows.append((f"MVT tile, {POLYGONS:,} polygons, {DISTINCT} distinct z3-6, cache off",
                             timed(client, mvt, "application/vnd.mapbox-vector-tile")))
                for z in ZOOMS:
                    rows.append((f"  PNG z{z} only", timed(client, [p for p, t in zip(png, chosen) if t[0] == z],
                                                            "image/png")))
                    rows.append((f"  MVT z{z} only", timed(client, [p for p, t in zip(mvt, chosen) if t[0] == z],
                                                            "application/vnd.mapbox-vector-tile")))
        finally:
            stop(proc)
        proc, url = start(data, {})
        try:
            with httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=600) as client:
                z, y, x = chosen[0]
                for kind, path, media in (
                        ("PNG", f"/ogcapi/collections/{cid}/map/tiles/WebMercatorQuad/{z}/{y}/{x}", "image/png"),
                        ("MVT", f"/ogcapi/collections/{cid}/tiles/WebMercatorQuad/{z}/{y}/{x}",
                         "application/vnd.mapbox-vector-tile")):
                    client.get(path)
                    rows.append((f"{kind} tile repeated {REPEATS} times, cache on", timed(client, [path] * REPEATS, media)))
                with httpx.Client(base_url=url, timeout=60) as anon:
                    path = f"/ogcapi/collections/{cid}/map/tiles/WebMercatorQuad/{z}/{y}/{x}"
                    anon.get(path)
                    rows.append(("PNG tile repeated, anonymous, cache on", timed(anon, [path] * REPEATS, "image/png")))
        finally:
            stop(proc)
    print(f"{'':<62}{'p50 ms':>9}{'p99 ms':>9}{'n':>5}")
    for name, result in rows:
        print(f"{name:<62}{result['p50']:>9.2f}{result['p99']:>9.2f}{int(result['n']):>5}", flush=True)
    return rows


if __name__ == "__main__":
    tiles_benchmarks()
