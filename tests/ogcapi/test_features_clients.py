"""OGC API - Features read by the clients people use: GDAL's OAPIF driver (Debian's ogr2ogr and
ogrinfo, and pyogrio's own GDAL) copies a collection, and OWSLib's Features class lists the
collections, pages through items and reads one feature; CQL2 filters (text and JSON) through
``filter=``, checked against the same test made in Python on the uploaded Shapefile; a layer
stored in EPSG:3857 read in CRS84, EPSG:4326 and its own CRS.

A real server process: these clients open their own connections."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pyogrio
import pytest
import shapely
from pyproj import Transformer

from tests.api.test_uploads import COUNTRIES, imported
from tests.conftest import ADMIN_PASSWORD, Server
from tests.ogc.conftest import upload_shapefile

CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
EPSG4326 = "http://www.opengis.net/def/crs/EPSG/0/4326"
EPSG3857 = "http://www.opengis.net/def/crs/EPSG/0/3857"
TO_MERCATOR = Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)


def places_gpkg(folder: Path) -> Path:
    """Twelve points in EPSG:3857 with a date-time, a count that is sometimes missing and a label
    that is sometimes missing."""
    folder.mkdir(parents=True, exist_ok=True)
    lon = np.linspace(-30.0, 30.0, 12)
    lat = np.linspace(-20.0, 40.0, 12)
    x, y = TO_MERCATOR.transform(lon, lat)
    geometry = shapely.to_wkb(shapely.points(x, y))
    seen = np.array([f"2021-03-{i + 1:02d}T10:00:00" for i in range(12)], dtype="datetime64[ms]")
    visitors = np.array([i * 10 for i in range(12)], dtype=np.float64)
    visitors[[2, 5]] = np.nan
    labels = np.array([None if i in (3, 7) else f"Place {i}" for i in range(12)], dtype=object)
    path = folder / "places.gpkg"
    pyogrio.raw.write(str(path), geometry, field_data=[seen, visitors, labels], fields=["seen", "visitors", "label"],
                      geometry_type="Point", crs="EPSG:3857", driver="GPKG", layer="places")
    return path


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("features-clients")
    srv = Server(root / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    countries = upload_shapefile(admin, COUNTRIES)
    path = places_gpkg(root / "places")
    r = admin.post("/api/v2/uploads/upload", files={"base_file": (path.name, path.read_bytes(), "application/octet-stream")},
                   data={"permissions": '{"users": {"AnonymousUser": ["view_resourcebase", "download_resourcebase"]}}'})
    places = imported(admin, r)
    yield {"srv": srv, "admin": admin, "countries": countries["alternate"].split(":", 1)[1],
           "places": places["alternate"].split(":", 1)[1], "tmp": root}
    admin.close()
    srv.stop()


def shapefile():
    meta, _, wkb, fields = pyogrio.raw.read(str(COUNTRIES / "naturalearth_lowres.shp"))
    return dict(zip((str(f) for f in meta["fields"]), fields)), shapely.from_wkb(wkb)


def same_as_shapefile(fields: dict, geometries) -> None:
    expected, shapes = shapefile()
    assert len(geometries) == len(shapes) == 177
    for name, column in expected.items():
        got = fields[name]
        if column.dtype.kind in "if":
            assert np.allclose(np.asarray(got, dtype=float), column.astype(float), equal_nan=True), name
        else:
            assert list(got) == list(column), name
    assert all(shapely.equals_exact(a.normalize(), b.normalize(), 0) for a, b in zip(geometries, shapes))


# --- GDAL ------------------------------------------------------------------------------------


def test_ogr2ogr_copies_a_collection(live):
    out = live["tmp"] / "copy.gpkg"
    url = f"OAPIF:{live['srv'].url}/ogcapi/collections/{live['countries']}"
    done = subprocess.run(["ogr2ogr", "-f", "GPKG", str(out), url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    meta, _, wkb, fields = pyogrio.raw.read(str(out))
    same_as_shapefile(dict(zip((str(f) for f in meta["fields"]), fields)), shapely.from_wkb(wkb))


def test_ogrinfo_filters_by_attribute_and_box(live):
    url = f"OAPIF:{live['srv'].url}/ogcapi/collections/{live['countries']}"
    done = subprocess.run(["ogrinfo", "-ro", "-q", "-where", "continent = 'Africa' AND pop_est > 30000000",
                           "-spat", "0", "0", "40", "40", url, live["countries"]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    fields, shapes = shapefile()
    expected = sorted(n for n, c, p, s in zip(fields["name"], fields["continent"], fields["pop_est"], shapes)
                      if c == "Africa" and p > 30000000 and s.intersects(shapely.box(0, 0, 40, 40)))
    got = sorted(line.split("=", 1)[1].strip() for line in done.stdout.splitlines()
                 if line.strip().startswith("name (String)"))
    assert got == expected and len(expected) > 3


def test_pyogrio_reads_a_collection(live):
    url = f"OAPIF:{live['srv'].url}/ogcapi/collections/{live['countries']}"
    meta, _, wkb, fields = pyogrio.raw.read(url)
    geometries = shapely.from_wkb(wkb)
    if meta["crs"] == "EPSG:4326" and geometries[0].centroid.x < -90:  # (never: GDAL gives longitude first)
        geometries = shapely.transform(geometries, lambda xy: xy[:, ::-1])
    same_as_shapefile(dict(zip((str(f) for f in meta["fields"]), fields)), geometries)


def test_gdal_reads_a_layer_stored_in_3857(live):
    out = live["tmp"] / "places.gpkg"
    url = f"OAPIF:{live['srv'].url}/ogcapi/collections/{live['places']}"
    done = subprocess.run(["ogr2ogr", "-f", "GPKG", str(out), url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    meta, _, wkb, fields = pyogrio.raw.read(str(out))
    points = shapely.from_wkb(wkb)
    assert np.allclose(shapely.get_coordinates(points), np.column_stack([np.linspace(-30, 30, 12),
                                                                         np.linspace(-20, 40, 12)]), atol=1e-7)
    values = dict(zip((str(f) for f in meta["fields"]), fields))
    assert [v for v in values["label"]][:4] == ["Place 0", "Place 1", "Place 2", None]


# --- OWSLib ----------------------------------------------------------------------------------


def test_owslib_collections_items_and_one_feature(live):
    from owslib.ogcapi.features import Features

    api = Features(f"{live['srv'].url}/ogcapi/")
    assert live["countries"] in api.feature_collections()
    assert live["places"] in api.feature_collections()
    about = api.collection(live["countries"])
    assert about["itemType"] == "feature" and about["id"] == live["countries"]
    boxed = api.collection_items(live["countries"], bbox=[5, 45, 15, 55], limit=100)
    fields, shapes = shapefile()
    expected = sorted(n for n, s in zip(fields["name"], shapes) if s.intersects(shapely.box(5, 45, 15, 55)))
    assert sorted(f["properties"]["name"] for f in boxed["features"]) == expected
    seen, offset = [], 0
    while True:
        page = api.collection_items(live["countries"], limit=40, offset=offset)
        assert page["numberMatched"] == 177
        seen += [f["id"] for f in page["features"]]
        if not any(lk["rel"] == "next" for lk in page["links"]):
            break
        offset += 40
    assert seen == list(range(1, 178))
    one = api.collection_item(live["countries"], "3")
    assert one["id"] == 3 and one["properties"]["name"] == "W. Sahara"
    queryables = api.collection_queryables(live["countries"])
    assert {"geometry", "name", "pop_est", "continent"} <= set(queryables["properties"])


# --- CQL2 ------------------------------------------------------------------------------------

FIELDS, SHAPES = None, None


def _expect(test) -> list[int]:
    global FIELDS, SHAPES
    if FIELDS is None:
        FIELDS, SHAPES = shapefile()
    rows = [{k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in FIELDS.items()} | {"geometry": SHAPES[i]}
            for i in range(177)]
    return [i + 1 for i, row in enumerate(rows) if test(row)]


FRANCE_BOX = shapely.box(-5, 42, 8, 51)
TEXT_FILTERS = [
    ("continent = 'Africa'", lambda r: r["continent"] == "Africa"),
    ("pop_est > 100000000", lambda r: r["pop_est"] > 100000000),
    ("gdp_md_est <= 1000", lambda r: r["gdp_md_est"] <= 1000),
    ("name <> 'France'", lambda r: r["name"] != "France"),
    ("name LIKE 'Ma%'", lambda r: r["name"].startswith("Ma")),
    ("iso_a3 IN ('FRA', 'DEU', 'ITA')", lambda r: r["iso_a3"] in ("FRA", "DEU", "ITA")),
    ("gdp_md_est BETWEEN 1000 AND 5000", lambda r: 1000 <= r["gdp_md_est"] <= 5000),
    ("name IS NULL", lambda r: r["name"] is None),
    ("name IS NOT NULL", lambda r: r["name"] is not None),
    ("continent = 'Europe' AND pop_est > 50000000", lambda r: r["continent"] == "Europe" and r["pop_est"] > 50000000),
    ("continent = 'Oceania' OR name LIKE 'Z%'", lambda r: r["continent"] == "Oceania" or r["name"].startswith("Z")),
    ("NOT (continent = 'Africa') AND gdp_md_est < 2000",
     lambda r: r["continent"] != "Africa" and r["gdp_md_est"] < 2000),
    ("S_INTERSECTS(geometry, POLYGON((-5 42, 8 42, 8 51, -5 51, -5 42)))", lambda r: r["geometry"].intersects(FRANCE_BOX)),
    ("CASEI(name) = 'FRANCE' OR CASEI(continent) LIKE 'south%'",
     lambda r: r["name"] == "France" or r["continent"].lower().startswith("south")),
    ("ACCENTI(name) = 'Cote d''Ivoire'", lambda r: r["name"] == "Côte d'Ivoire"),
    ("S_INTERSECTS(geometry, POINT(2.35 48.85)) OR iso_a3 = 'DEU'",
     lambda r: r["geometry"].intersects(shapely.Point(2.35, 48.85)) or r["iso_a3"] == "DEU"),
]


@pytest.mark.parametrize("text, test", TEXT_FILTERS, ids=[t for t, _ in TEXT_FILTERS])
def test_cql2_text_through_owslib(live, text, test):
    from owslib.ogcapi.features import Features

    api = Features(f"{live['srv'].url}/ogcapi/")
    found = api.collection_items(live["countries"], filter=text, limit=500)
    assert sorted(f["id"] for f in found["features"]) == _expect(test)
    assert found["numberMatched"] == len(found["features"])


JSON_FILTERS = [
    ({"op": "=", "args": [{"property": "continent"}, "Africa"]}, lambda r: r["continent"] == "Africa"),
    ({"op": "and", "args": [{"op": "like", "args": [{"property": "name"}, "S%"]},
                            {"op": ">", "args": [{"property": "pop_est"}, 10000000]}]},
     lambda r: r["name"].startswith("S") and r["pop_est"] > 10000000),
    ({"op": "in", "args": [{"property": "iso_a3"}, ["FRA", "ESP"]]}, lambda r: r["iso_a3"] in ("FRA", "ESP")),
    ({"op": "between", "args": [{"property": "gdp_md_est"}, 1000, 5000]}, lambda r: 1000 <= r["gdp_md_est"] <= 5000),
    ({"op": "not", "args": [{"op": "isNull", "args": [{"property": "name"}]}]}, lambda r: r["name"] is not None),
    ({"op": "or", "args": [{"op": "s_intersects", "args": [{"property": "geometry"},
                                                           {"type": "Point", "coordinates": [2.35, 48.85]}]},
                           {"op": "=", "args": [{"property": "iso_a3"}, "ITA"]}]},
     lambda r: r["geometry"].intersects(shapely.Point(2.35, 48.85)) or r["iso_a3"] == "ITA"),
]


@pytest.mark.parametrize("doc, test", JSON_FILTERS, ids=[d["op"] for d, _ in JSON_FILTERS])
def test_cql2_json_through_owslib(live, doc, test):
    from owslib.ogcapi.features import Features

    api = Features(f"{live['srv'].url}/ogcapi/")
    found = api.collection_items(live["countries"], filter=json.dumps(doc), limit=500, **{"filter-lang": "cql2-json"})
    assert sorted(f["id"] for f in found["features"]) == _expect(test)
    assert "filter-lang=cql2-json" in api.request


def test_cql2_on_a_projected_layer_with_nulls_and_dates(live):
    path = f"/ogcapi/collections/{live['places']}/items"
    with live["srv"].client() as c:
        nulls = c.get(path, params={"filter": "visitors IS NULL"}).json()
        labels = c.get(path, params={"filter": "label IS NULL OR visitors > 95"}).json()
        dates = c.get(path, params={"filter": "seen >= TIMESTAMP('2021-03-10T00:00:00Z')"}).json()
        area = c.get(path, params={"filter": "S_INTERSECTS(geometry, POLYGON((-31 -21, 0 -21, 0 11, -31 11, -31 -21)))"}).json()
        # the same box in EPSG:3857 (filter-crs), and as bbox in EPSG:4326 (latitude first)
        x0, y0 = TO_MERCATOR.transform(-31, -21)
        x1, y1 = TO_MERCATOR.transform(0, 11)
        mercator = c.get(path, params={"filter": f"S_INTERSECTS(geometry, POLYGON(({x0} {y0}, {x1} {y0}, {x1} {y1}, "
                                                 f"{x0} {y1}, {x0} {y0})))", "filter-crs": EPSG3857}).json()
        lat_first = c.get(path, params={"filter": "S_INTERSECTS(geometry, POLYGON((-21 -31, -21 0, 11 0, 11 -31, -21 -31)))",
                                        "filter-crs": EPSG4326}).json()
        boxed = c.get(path, params={"bbox": "-21,-31,11,0", "bbox-crs": EPSG4326}).json()
        own = c.get(path, params={"crs": EPSG3857, "limit": 1})
        dated = c.get(path, params={"datetime": "2021-03-02T00:00:00Z/2021-03-03T23:00:00Z"}).json()
    assert [f["id"] for f in nulls["features"]] == [3, 6]
    assert [f["id"] for f in labels["features"]] == [4, 8, 11, 12]
    assert [f["id"] for f in dates["features"]] == [10, 11, 12]
    lon = np.linspace(-30.0, 30.0, 12)
    lat = np.linspace(-20.0, 40.0, 12)
    inside = [i + 1 for i in range(12) if lon[i] <= 0 and lat[i] <= 11]
    assert [f["id"] for f in area["features"]] == inside
    assert [f["id"] for f in mercator["features"]] == inside
    assert [f["id"] for f in boxed["features"]] == inside
    assert [f["id"] for f in lat_first["features"]] == inside  # EPSG:4326 by its URI: latitude first
    assert own.headers["content-crs"] == f"<{EPSG3857}>"
    x, y = own.json()["features"][0]["geometry"]["coordinates"]
    assert np.allclose((x, y), TO_MERCATOR.transform(-30.0, -20.0))
    assert [f["id"] for f in dated["features"]] == [2, 3]


def test_a_filter_naming_an_unknown_queryable_is_a_400(live):
    with live["srv"].client() as c:
        r = c.get(f"/ogcapi/collections/{live['countries']}/items", params={"filter": "colour = 'red'"})
        bad_json = c.get(f"/ogcapi/collections/{live['countries']}/items",
                         params={"filter": '{"op": "=", "args": [', "filter-lang": "cql2-json"})
    assert r.status_code == 400 and r.json()["description"].startswith("filter:")
    assert bad_json.status_code == 400 and bad_json.json()["code"] == "InvalidParameterValue"


# --- QGIS ------------------------------------------------------------------------------------

SYSTEM_PYTHON = "/usr/bin/python3"


def _has_qgis() -> bool:
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import qgis.core"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not _has_qgis(), reason="python3-qgis is not installed")
def test_qgis_reads_a_collection(live):
    client = Path(__file__).with_name("qgis_oapif_client.py")
    home = live["tmp"] / "qgis-home"
    home.mkdir(exist_ok=True)
    done = subprocess.run([SYSTEM_PYTHON, str(client), f"{live['srv'].url}/ogcapi", live["countries"]],
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(home), "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    fields, shapes = shapefile()
    assert got["valid"] and not got["errors"], got
    assert {"pop_est", "continent", "name", "iso_a3", "gdp_md_est"} <= set(got["fields"])
    assert got["count"] == 177 and got["names"] == sorted(fields["name"])
    boxed = sorted(n for n, s in zip(fields["name"], shapes) if s.intersects(shapely.box(5, 45, 15, 55)))
    assert got["boxed"] == boxed
