"""GetMap after edits, through a server of two worker processes: every map drawn after inserts,
geometry updates and deletes (whichever worker made the edit and whichever draws) is the map the
server draws after a restart, from layers read afresh, pixel for pixel."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.conftest import ADMIN_PASSWORD, Server
from tests.edits.conftest import features, upload_countries, upload_points

VIEWS = [("EPSG:4326", "-180,-90,180,90", 360, 180), ("EPSG:4326", "-10,35,30,60", 400, 250),
         ("EPSG:3857", "-20000000,-12000000,20000000,12000000", 300, 180)]


def get_map(client, dataset: dict, view) -> np.ndarray:
    crs, bbox, width, height = view
    r = client.get("/geoserver/ows", params={"service": "WMS", "version": "1.1.1", "request": "GetMap",
                                             "layers": dataset["alternate"], "styles": "", "srs": crs, "bbox": bbox,
                                             "width": width, "height": height, "format": "image/png"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:300]
    return np.asarray(Image.open(io.BytesIO(r.content)).convert("RGBA"))


def maps(client, datasets, times: int = 4) -> list[np.ndarray]:
    """Each view of each dataset, asked ``times`` times (both workers draw), all alike."""
    out = []
    for dataset in datasets:
        for view in VIEWS:
            drawn = [get_map(client, dataset, view) for _ in range(times)]
            assert all((d == drawn[0]).all() for d in drawn[1:]), f"the workers draw {dataset['alternate']} apart"
            out.append(drawn[0])
    return out


def edit(client, dataset: dict, body: dict) -> None:
    r = client.post(f"/api/v2/datasets/{dataset['pk']}/edits", json=body)
    assert r.status_code == 200, r.text


def test_maps_after_edits_are_the_maps_of_the_layers_read_afresh(tmp_path):
    data = tmp_path / "data"
    srv = Server(data, workers=2)
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            countries, points = upload_countries(admin), upload_points(admin, tmp_path / "src", n=400)
            before = maps(admin, [countries, points])  # both workers hold the layers
            by_name = {f["properties"]["name"]: fid for fid, f in features(admin, countries).items()}
            square = {"type": "Polygon", "coordinates": [[[-30, -20], [30, -20], [30, 20], [-30, 20], [-30, -20]]]}
            edit(admin, countries, {"insert": [{"type": "Feature", "geometry": {"type": "MultiPolygon",
                                                                                  "coordinates": [square["coordinates"]]},
                                                "properties": {"name": "Square"}}],
                                    "delete": [by_name["France"]]})
            edit(admin, countries, {"update": [{"id": by_name["Brazil"], "properties": {},
                                                "geometry": {"type": "MultiPolygon", "coordinates": [[[
                                                    [-60, -10], [-40, -10], [-40, 0], [-60, -10]]]]}},
                                               {"id": by_name["Chile"], "properties": {"name": "Chile (renamed)"}}]})
            edit(admin, points, {"update": [{"id": fid, "properties": {}, "geometry": {
                "type": "Point", "coordinates": [0.0 + fid / 100, 45.0]}} for fid in range(1, 40)],
                "delete": [50, 51], "insert": [{"type": "Feature", "geometry": {"type": "Point",
                                                                                 "coordinates": [0.2, 45.0]},
                                                "properties": {"label": "new"}}]})
            after = maps(admin, [countries, points])
            assert all(any((a != b).any() for a, b in zip(before[i::3], after[i::3])) for i in range(3))
    finally:
        srv.stop()
    again = Server(data, workers=2)
    try:
        with again.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            afresh = maps(admin, [countries, points], times=2)
        for i, (patched, read) in enumerate(zip(after, afresh)):
            differ = int((patched != read).any(axis=2).sum())
            assert differ == 0, f"map {i}: {differ} pixels differ from the layer read afresh"
    finally:
        again.stop()
