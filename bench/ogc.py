"""The OGC benchmark: GetMap, GetFeature and GetCoverage over HTTP against a real server.

Datasets are uploaded through the API: the Natural Earth countries (177 polygons), a generated
layer of 100,000 small polygons spread over the world, and a generated 4000x4000 single-band
GeoTIFF in UTM 32N (about 27 MB). wrk then sends the same request over one connection for
``--seconds`` seconds, after a warm-up (which also fills the server's layer cache): the figures
are the latency of one request at a time, p50 and p99.

Targets: GetMap 512x512 p50 under 30 ms for the countries and under 100 ms for the 100,000
polygons.
"""

from __future__ import annotations

import base64
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import pyogrio.raw
import shapely

from bench.__main__ import PASSWORD, seed_users, start_server, wrk

DATA = Path(__file__).parent.parent / "tests" / "data"
POLYGONS = 100_000


def make_polygons(path: Path, count: int = POLYGONS, seed: int = 3) -> Path:
    """``count`` hexagons of 0.05 to 0.5 degrees at random places between 80 S and 80 N."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-179.0, 179.0, count)
    y = rng.uniform(-80.0, 80.0, count)
    r = rng.uniform(0.025, 0.25, count)
    angles = np.linspace(0, 2 * np.pi, 7)
    rings = np.stack([x[:, None] + r[:, None] * np.cos(angles), y[:, None] + r[:, None] * np.sin(angles)], axis=-1)
    geometry = shapely.to_wkb(shapely.polygons(rings))
    fields = [np.arange(count, dtype=np.int64), np.round(r * 1000, 1), np.array([f"cell {i}" for i in range(count)],
                                                                              dtype=object)]
    meta = [("id", "int64"), ("size", "float64"), ("label", "str")]
    pyogrio.raw.write(path, geometry, fields, [m[0] for m in meta], driver="GPKG", crs="EPSG:4326",
                      geometry_type="Polygon", layer="cells")
    return path


def make_raster(path: Path, size: int = 4000) -> Path:
    import rasterio
    from rasterio.transform import from_origin

    rows, cols = np.mgrid[0:size, 0:size]
    data = ((np.sin(rows / 97.0) + np.cos(cols / 53.0)) * 60 + 128).astype("uint8")
    with rasterio.open(path, "w", driver="GTiff", width=size, height=size, count=1, dtype="uint8",
                       crs="EPSG:32632", transform=from_origin(500000, 5200000, 30, 30)) as out:
        out.write(data, 1)
    return path


def upload(client: httpx.Client, files: dict, timeout: float = 600) -> dict:
    r = client.post("/api/v2/uploads/upload", files=files,
                    data={"permissions": '{"users": {"AnonymousUser": ["view_resourcebase", '
                                         '"download_resourcebase"]}}'}, timeout=timeout)
    r.raise_for_status()
    url = f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(url).json()
        if status["status"] in ("finished", "failed"):
            if status["status"] == "failed":
                raise SystemExit(f"upload failed: {status}")
            pk = status["output_params"]["resources"][0]["id"]
            return client.get(f"/api/v2/datasets/{pk}").json()["dataset"]
        time.sleep(0.2)
    raise SystemExit("upload did not finish")


def shapefile(folder: Path) -> dict:
    shp = next(folder.glob("*.shp"))
    keys = {".shp": "base_file", ".dbf": "dbf_file", ".shx": "shx_file", ".prj": "prj_file"}
    return {key: (shp.with_suffix(ext).name, shp.with_suffix(ext).read_bytes()) for ext, key in keys.items()}


def ogc_benchmarks(args) -> list[tuple[str, int, dict[str, float]]]:
    rows = []
    basic = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        cells = make_polygons(tmp / "cells.gpkg")
        raster = make_raster(tmp / "dem.tif")
        print(f"generated {POLYGONS:,} polygons and a 4000x4000 raster in {time.perf_counter() - started:.1f} s",
              flush=True)
        data = tmp / "data"
        seed_users(data, 1)
        proc, url = start_server(data, 1)
        try:
            with httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=600) as client:
                countries = upload(client, shapefile(DATA / "naturalearth_lowres"))
                polygons = upload(client, {"base_file": ("cells.gpkg", cells.read_bytes())})
                dem = upload(client, {"base_file": ("dem.tif", raster.read_bytes())})
            ows = f"{url}/geoserver/ows"
            getmap = (f"{ows}?service=WMS&version=1.3.0&request=GetMap&styles=&crs=EPSG:4326&bbox=-90,-180,90,180"
                      "&width=512&height=512&format=image/png&layers=")
            x0, y0, x1, y1 = dem["bbox_polygon"]["coordinates"][0][0] + dem["bbox_polygon"]["coordinates"][0][2]
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            coverage_id = dem["alternate"].replace(":", "__")
            cases = [
                ("WMS GetMap 512x512, countries (177 polygons)", f"{getmap}{countries['alternate']}"),
                (f"WMS GetMap 512x512, {POLYGONS:,} polygons", f"{getmap}{polygons['alternate']}"),
                ("WMS GetMap 512x512, 4000x4000 raster to EPSG:4326",
                 f"{getmap.replace('bbox=-90,-180,90,180', '')}{dem['alternate']}&bbox="
                 + ",".join(str(v) for v in (dem["ll_bbox_polygon"]["coordinates"][0][0][1],
                                             dem["ll_bbox_polygon"]["coordinates"][0][0][0],
                                             dem["ll_bbox_polygon"]["coordinates"][0][2][1],
                                             dem["ll_bbox_polygon"]["coordinates"][0][2][0]))),
                ("WFS GetFeature 10,000 polygons, GeoJSON",
                 f"{ows}?service=WFS&version=2.0.0&request=GetFeature&typenames={polygons['alternate']}"
                 "&count=10000&outputFormat=application/json"),
                ("WCS GetCoverage 512x512 window, GeoTIFF",
                 f"{ows}?service=WCS&version=2.0.1&request=GetCoverage&coverageId={coverage_id}&format=image/tiff"
                 f"&subset=E({cx - 256 * 30},{cx + 256 * 30})&subset=N({cy - 256 * 30},{cy + 256 * 30})"),
            ]
            for name, target in cases:
                check = httpx.get(target, headers={"Authorization": basic}, timeout=60)
                if check.status_code != 200 or "xml" in check.headers.get("content-type", ""):
                    print(f"{name}: {check.status_code} {check.text[:300]}", flush=True)
                    continue
                print(f"{name}: {len(check.content) / 1e3:,.0f} kB {check.headers['content-type']}", flush=True)
                rows.append((name, 1, wrk(target, f"Authorization: {basic}", 1, args.seconds)))
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return rows
