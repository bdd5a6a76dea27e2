"""What a client reads right after an edit shows it, whichever server process answers (the
server runs two): GetMap, WFS GetFeature, GetFeatureInfo and the download. The layer cache of a
process that drew the layer before is not used for the new data."""

from __future__ import annotations

import io
import sqlite3
import zipfile

import httpx
import numpy as np
import pyogrio.raw
from PIL import Image

from tests.conftest import login
from tests.edits.conftest import features, upload_points

TRIES = 8  # requests on new connections, so that both server processes answer some


def _get_map(srv, dataset: dict, box: tuple[float, float, float, float]) -> int:
    """How many pixels of a 64 x 64 GetMap of ``box`` are drawn on (a new connection)."""
    r = httpx.get(f"{srv.url}/geoserver/ows", params={
        "service": "WMS", "version": "1.1.1", "request": "GetMap", "layers": dataset["alternate"], "styles": "",
        "srs": "EPSG:4326", "bbox": ",".join(map(str, box)), "width": "64", "height": "64",
        "format": "image/png", "transparent": "true"}, timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/png"), r.text[:300]
    return int((np.asarray(Image.open(io.BytesIO(r.content)).convert("RGBA"))[..., 3] > 0).sum())


def _feature_info(srv, dataset: dict, box) -> list[dict]:
    r = httpx.get(f"{srv.url}/geoserver/ows", params={
        "service": "WMS", "version": "1.1.1", "request": "GetFeatureInfo", "layers": dataset["alternate"],
        "query_layers": dataset["alternate"], "styles": "", "srs": "EPSG:4326", "bbox": ",".join(map(str, box)),
        "width": "64", "height": "64", "x": "32", "y": "32", "info_format": "application/json",
        "feature_count": "10"}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["features"]


def _download(srv, dataset: dict, tmp_path) -> dict:
    r = httpx.get(f"{srv.url}/datasets/{dataset['alternate']}/dataset_download", timeout=60)
    assert r.status_code == 200, r.text[:300]
    folder = tmp_path / "download"
    zipfile.ZipFile(io.BytesIO(r.content)).extractall(folder)
    shp = next(folder.glob("*.shp"))
    meta, _fids, _geometry, fields = pyogrio.raw.read(shp)
    return dict(zip(meta["fields"], fields))


def test_every_read_shows_an_edit_at_once(ed, tmp_path):
    srv = ed["srv"]
    with login(srv, ed["owner"]) as c:
        points = upload_points(c, tmp_path / "src", n=20, name="moved", title="Moved points")
    with login(srv, ed["owner"]) as c:  # a first edit puts the file in WAL mode
        r = c.post(f"/api/v2/datasets/{points['pk']}/edits", json={"update": [{"id": 20, "properties": {"n": 1}}]})
        assert r.status_code == 200, r.text
    # A reader that keeps the file open elsewhere (QGIS, a backup): the edits then stay in the
    # write-ahead log, and the GeoPackage's own modification time and size do not change.
    reader = sqlite3.connect(working_copy(srv, points))
    reader.execute("SELECT COUNT(*) FROM gpkg_contents").fetchone()
    stat = working_copy(srv, points).stat()
    empty = (100.0, -30.0, 101.0, -29.0)       # no point here yet
    first = (-10.5, 39.5, -9.5, 40.5)           # the first point, at (-10, 40)
    for _ in range(TRIES):                      # both processes draw (and keep) the layer as uploaded
        assert _get_map(srv, points, empty) == 0
        assert _get_map(srv, points, first) > 0
    before = features(httpx.Client(base_url=srv.url), points)
    assert len(before) == 20
    first_fid = min(before)

    with login(srv, ed["owner"]) as c:
        r = c.post(f"/api/v2/datasets/{points['pk']}/edits", json={
            "update": [{"id": first_fid, "properties": {"label": "moved"},
                        "geometry": {"type": "Point", "coordinates": [100.5, -29.5]}}]})
        assert r.status_code == 200, r.text

    for _ in range(TRIES):
        assert _get_map(srv, points, empty) > 0
        assert _get_map(srv, points, first) == 0
        hits = _feature_info(srv, points, empty)
        assert [h["properties"]["label"] for h in hits] == ["moved"]
        with httpx.Client(base_url=srv.url) as anon:
            after = features(anon, points)
        assert after[first_fid]["geometry"]["coordinates"] == [100.5, -29.5]
        assert after[first_fid]["properties"]["label"] == "moved"
    fields = _download(srv, points, tmp_path)
    assert "moved" in list(fields["label"])
    assert (stat.st_mtime_ns, stat.st_size) == (working_copy(srv, points).stat().st_mtime_ns,
                                                working_copy(srv, points).stat().st_size)

    with login(srv, ed["owner"]) as c:   # a delete and an insert: the counts follow
        r = c.post(f"/api/v2/datasets/{points['pk']}/edits", json={
            "delete": [first_fid], "insert": [{"type": "Feature", "properties": {"label": "new"},
                                               "geometry": {"type": "Point", "coordinates": [0, 0]}},
                                              {"type": "Feature", "properties": {"label": "new2"},
                                               "geometry": {"type": "Point", "coordinates": [1, 1]}}]})
        assert r.status_code == 200, r.text
        detail = c.get(f"/api/v2/datasets/{points['pk']}").json()["dataset"]
    for _ in range(TRIES):
        assert _get_map(srv, points, empty) == 0
        with httpx.Client(base_url=srv.url) as anon:
            r = anon.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                                   "typeNames": points["alternate"], "resultType": "hits"})
            assert 'numberMatched="21"' in r.text, r.text
    assert detail.get("feature_count", 21) in (21, None)
    reader.close()


def working_copy(srv, dataset: dict):
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3")
    try:
        folder = conn.execute("SELECT folder FROM datasets WHERE resource_id = ?", (dataset["pk"],)).fetchone()[0]
    finally:
        conn.close()
    return srv.data_dir / "files" / folder / "working" / "data.gpkg"


def test_the_thumbnail_is_drawn_again_after_a_quiet_time(ed, tmp_path):
    import time

    srv = ed["srv"]
    with login(srv, ed["owner"]) as c:
        points = upload_points(c, tmp_path / "src", n=5, name="pictured", title="Pictured")
        deadline = time.monotonic() + 30
        while not (first := c.get(f"/api/v2/resources/{points['pk']}").json()["resource"]["thumbnail_url"]):
            assert time.monotonic() < deadline, "the upload's thumbnail was not drawn"
            time.sleep(0.1)
        for i in range(3):  # a burst of edits: one drawing after it
            r = c.post(f"/api/v2/datasets/{points['pk']}/edits",
                       json={"update": [{"id": 1, "properties": {}, "geometry": {"type": "Point", "coordinates": [i, i]}}]})
            assert r.status_code == 200, r.text
        assert c.get(f"/api/v2/resources/{points['pk']}").json()["resource"]["thumbnail_url"] == first
        deadline = time.monotonic() + 30
        while c.get(f"/api/v2/resources/{points['pk']}").json()["resource"]["thumbnail_url"] == first:
            assert time.monotonic() < deadline, "the thumbnail was not drawn again"
            time.sleep(0.2)
        drawn = c.get(f"/api/v2/resources/{points['pk']}").json()["resource"]["thumbnail_url"]
        assert httpx.get(drawn if drawn.startswith("http") else f"{srv.url}{drawn}").status_code == 200
