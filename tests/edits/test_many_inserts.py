"""Many new features in one edit (they are checked together and written at once): every one is
stored, indexed and recorded as one by one would, the GeoPackage's triggers are as they were
after it, and a refused feature among them is named by its place and leaves nothing behind."""

from __future__ import annotations

import re
import sqlite3

import httpx

from tests.conftest import assert_envelope, login
from tests.edits.conftest import features, upload_points
from tests.edits.test_edits_api import edits_url, gpkg_versions, versions_of
from tests.edits.test_reads_after_edit import working_copy

WFS = "http://www.opengis.net/wfs"


def gdal_insert(dataset: dict, points: list[tuple[float, float]]) -> bytes:
    """One Insert of every point, as GDAL's ogr2ogr -append posts it at WFS 1.1.0 (GML 3.1,
    latitude first)."""
    workspace, name = dataset["alternate"].split(":")
    parts = [f'<wfs:Transaction xmlns:wfs="{WFS}" service="WFS" version="1.1.0" xmlns:gml="http://www.opengis.net/gml">'
             "<wfs:Insert>"]
    for i, (x, y) in enumerate(points):
        parts.append(f'<feature:{name} xmlns:feature="urn:catalogue:workspace:{workspace}"><feature:geom>'
                     f'<gml:Point srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>{y!r} {x!r}</gml:pos></gml:Point>'
                     f"</feature:geom><feature:label>many {i}</feature:label><feature:n>{i}</feature:n>"
                     f"<feature:height>{i / 4}</feature:height><feature:day>2024/03/{1 + i % 28:02d}</feature:day>"
                     f"</feature:{name}>")
    parts.append("</wfs:Insert></wfs:Transaction>")
    return "".join(parts).encode()


def index_state(srv, dataset: dict) -> dict:
    """What the working copy holds besides the features: its triggers (SQL), its spatial index
    (fid -> box), each feature's point, the stored feature count, the integrity check."""
    conn = sqlite3.connect(working_copy(srv, dataset), timeout=30)
    try:
        table = conn.execute("SELECT table_name FROM gpkg_contents WHERE data_type = 'features'").fetchone()[0]
        return {"triggers": sorted(r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")),
                "index": {r[0]: r[1:] for r in conn.execute(f'SELECT id, minx, maxx, miny, maxy FROM "rtree_{table}_geom"')},
                "fids": [r[0] for r in conn.execute(f'SELECT fid FROM "{table}" ORDER BY fid')],
                "count": conn.execute("SELECT feature_count FROM gpkg_ogr_contents").fetchone()[0],
                "integrity": conn.execute("PRAGMA integrity_check").fetchone()[0]}
    finally:
        conn.close()


def test_many_new_features_are_stored_indexed_and_recorded(ed, tmp_path):
    srv = ed["srv"]
    with login(srv, ed["owner"]) as c:
        dataset = upload_points(c, tmp_path / "src", n=30, name="many", title="Many")
        before = index_state(srv, dataset)
        points = [(-170 + i * 0.85, -60 + (i % 120)) for i in range(400)]
        r = c.post("/geoserver/ows", content=gdal_insert(dataset, points), headers={"Content-Type": "text/xml"})
        assert r.status_code == 200 and "<wfs:totalInserted>400</wfs:totalInserted>" in r.text, r.text[:500]
        ids = [int(found) for found in re.findall(r'fid="many\.(\d+)"', r.text)]
        assert ids == list(range(31, 431))
        after = index_state(srv, dataset)
        assert after["triggers"] == before["triggers"] and after["integrity"] == "ok"
        assert after["fids"] == list(range(1, 431)) and after["count"] == 430
        for fid, (x, y) in zip(ids, points):  # the index holds each new point (as float32 boxes round)
            x0, x1, y0, y1 = after["index"][fid]
            assert x0 <= x <= x1 and y0 <= y <= y1 and x1 - x0 < 1e-4 and y1 - y0 < 1e-4
        assert {k: v for k, v in after["index"].items() if k <= 30} == before["index"]
        # a map-sized box finds them through the index; each is stored as sent
        shown = features(c, dataset, bbox="-171,-61,171,61,EPSG:4326", count="10000")
        assert set(ids) <= set(shown)
        assert shown[ids[7]]["geometry"]["coordinates"] == list(points[7])
        assert shown[ids[7]]["properties"]["label"] == "many 7" and shown[ids[7]]["properties"]["n"] == 7
        assert shown[ids[7]]["properties"]["day"] == "2024-03-08"
        version = versions_of(srv, dataset)[-1]
        detail = c.get(f"/api/v2/resources/{dataset['pk']}/versions/{version[1]}").json()["version"]
        inserted = detail["changes"]["features"]["inserted"]
        assert [f["id"] for f in inserted] == ids
        assert inserted[7]["properties"] == {"label": "many 7", "n": 7, "height": 1.75, "ok": None, "day": "2024-03-08"}
        assert inserted[7]["geometry"] == {"type": "Point", "coordinates": list(points[7])}
        # one more feature afterwards goes through the GeoPackage's own trigger into the index
        r = c.post(edits_url(dataset), json={"insert": [{"type": "Feature", "properties": {"label": "one"},
                                                         "geometry": {"type": "Point", "coordinates": [12.5, 33.25]}}]})
        assert r.status_code == 200, r.text
        [one] = r.json()["inserted"]
        x0, x1, y0, y1 = index_state(srv, dataset)["index"][one]
        assert x0 <= 12.5 <= x1 and y0 <= 33.25 <= y1


def test_a_refused_feature_among_many_is_named_and_nothing_is_kept(ed, tmp_path):
    srv = ed["srv"]
    with login(srv, ed["owner"]) as c:
        dataset = upload_points(c, tmp_path / "src", n=10, name="refused", title="Refused")
        before, history, kept = index_state(srv, dataset), versions_of(srv, dataset), gpkg_versions(srv, dataset)
        shown = features(c, dataset)
        inserts = [{"type": "Feature", "properties": {"label": f"new {i}", "n": i},
                    "geometry": {"type": "Point", "coordinates": [i / 10, 45]}} for i in range(300)]
        inserts[136]["geometry"]["coordinates"] = [5, 95]  # north of the pole
        r = c.post(edits_url(dataset), json={"insert": inserts})
        assert_envelope(r, 400, "invalid")
        assert "new feature 137" in r.json()["errors"][0] and "outside the area" in r.json()["errors"][0]
        inserts[136]["geometry"]["coordinates"] = [5, 45]
        inserts[250]["properties"]["n"] = "many"
        r = c.post(edits_url(dataset), json={"insert": inserts})
        assert_envelope(r, 400, "invalid")
        assert "new feature 251's field n" in r.json()["errors"][0], r.json()["errors"][0]
        assert features(c, dataset) == shown
    assert index_state(srv, dataset) == before
    assert versions_of(srv, dataset) == history and gpkg_versions(srv, dataset) == kept
    with httpx.Client(base_url=srv.url, timeout=60) as anon:
        assert len(features(anon, dataset)) == 10
