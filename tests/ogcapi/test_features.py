"""OGC API - Features over HTTP: /collections, a collection, items with their parameters (bbox,
bbox-crs, crs, datetime, properties, limit/offset), one feature, queryables; who sees what; and
bad input answered with 400/404 in the standard's shape. The features are compared with the
uploaded Shapefile read by pyogrio."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyogrio
import pytest
import shapely

from tests.api.test_uploads import CITIES, COUNTRIES
from tests.conftest import ADMIN_PASSWORD, in_process, login, make_group, make_user
from tests.ogc.conftest import PRIVATE, upload_shapefile, upload_tif

CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
EPSG4326 = "http://www.opengis.net/def/crs/EPSG/0/4326"
EPSG3857 = "http://www.opengis.net/def/crs/EPSG/0/3857"
VIEW_ONLY = '{"users": {"AnonymousUser": ["view_resourcebase"]}}'


def dated_shapefile(folder: Path) -> Path:
    """Ten points with a date each (2020-01-01 to 2020-01-10) and a name, in a Shapefile."""
    folder.mkdir(parents=True, exist_ok=True)
    n = 10
    geometry = shapely.to_wkb(shapely.points(np.arange(n, dtype=float), np.arange(n, dtype=float)))
    days = np.array([f"2020-01-{i + 1:02d}" for i in range(n)], dtype="datetime64[D]")
    names = np.array([f"place {i}" for i in range(n)], dtype=object)
    pyogrio.raw.write(str(folder / "visits.shp"), geometry, field_data=[days, names], fields=["day", "label"],
                      geometry_type="Point", crs="EPSG:4326", driver="ESRI Shapefile")
    return folder


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("features")
    srv = in_process(root / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, viewer, other, member = (make_user(admin) for _ in range(4))
    group = make_group(admin)
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]], "role": "member"})
    assert r.status_code in (200, 201), r.text
    out = {"srv": srv, "admin": admin, "owner": owner, "viewer": viewer, "other": other, "member": member}
    out["countries"] = upload_shapefile(admin, COUNTRIES)
    out["cities"] = upload_shapefile(admin, CITIES, VIEW_ONLY, dataset_title="Cities to look at")
    out["visits"] = upload_shapefile(admin, dated_shapefile(root / "visits"))
    out["raster"] = upload_tif(admin, "world.byte.tif")
    r = admin.post("/api/v2/maps", json={"title": "Countries map", "maplayers": [
        {"name": out["countries"]["alternate"], "order": 0, "visibility": True, "opacity": 1.0}]})
    assert r.status_code in (200, 201), r.text
    out["map"] = r.json()["map"]
    with login(srv, owner) as c:
        out["private"] = upload_shapefile(c, COUNTRIES, PRIVATE, dataset_title="Private countries")
        r = c.put(f"/api/v2/resources/{out['private']['pk']}/permissions", json={
            "users": [{"id": viewer["pk"], "permissions": "view"}],
            "organizations": [{"id": group["group"]["pk"], "permissions": "download"}]})
        assert r.status_code == 200, r.text
    yield out
    admin.close()
    srv.stop()


def cid(dataset: dict) -> str:
    return dataset["alternate"].split(":", 1)[1]


def client(world, who: str):
    if who == "anonymous":
        return world["srv"].client()
    if who == "admin":
        return world["srv"].client(auth=("admin", ADMIN_PASSWORD))
    return login(world["srv"], world[who])


def rels(doc: dict) -> set[str]:
    return {lk["rel"] for lk in doc["links"]}


def shapefile():
    meta, fids, wkb, fields = pyogrio.raw.read(str(COUNTRIES / "naturalearth_lowres.shp"))
    return [str(f) for f in meta["fields"]], shapely.from_wkb(wkb), fields


# --- collections -----------------------------------------------------------------------------


def test_collections_list_what_the_caller_may_view(world):
    with client(world, "anonymous") as c:
        r = c.get("/ogcapi/collections")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    docs = {d["id"]: d for d in r.json()["collections"]}
    countries = docs[cid(world["countries"])]
    assert countries["itemType"] == "feature"
    assert {"self", "alternate", "items", "http://www.opengis.net/def/rel/ogc/1.0/queryables",
            "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector",
            "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map", "describedby"} <= rels(countries)
    assert countries["crs"][:3] == [CRS84, EPSG4326, EPSG3857]
    assert countries["storageCrs"] == EPSG4326
    x0, y0, x1, y1 = countries["extent"]["spatial"]["bbox"][0]
    assert (round(x0), round(y0), round(x1), round(y1)) == (-180, -90, 180, 84)
    assert countries["extent"]["spatial"]["crs"] == CRS84
    assert countries["datetimeProperty"] is None
    assert docs[cid(world["visits"])]["datetimeProperty"] == "day"
    # a raster and a map: map tiles only
    raster = docs[cid(world["raster"])]
    assert "itemType" not in raster and "items" not in rels(raster)
    assert "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map" in rels(raster)
    the_map = docs[f"map-{world['map']['pk']}"]
    assert "items" not in rels(the_map) and "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map" in rels(the_map)
    # viewable without the right to download: listed, with no items
    cities = docs[cid(world["cities"])]
    assert "items" not in rels(cities) and "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector" not in rels(cities)
    assert cid(world["private"]) not in docs


@pytest.mark.parametrize("who, listed, items", [
    ("anonymous", False, False), ("other", False, False), ("viewer", True, False), ("member", True, True),
    ("owner", True, True), ("admin", True, True)])
def test_a_private_collection(world, who, listed, items):
    name = cid(world["private"])
    with client(world, who) as c:
        ids = [d["id"] for d in c.get("/ogcapi/collections").json()["collections"]]
        one = c.get(f"/ogcapi/collections/{name}")
        page = c.get(f"/ogcapi/collections/{name}/items?limit=2")
        feature = c.get(f"/ogcapi/collections/{name}/items/3")
        queryables = c.get(f"/ogcapi/collections/{name}/queryables")
    assert (name in ids) == listed
    assert one.status_code == (200 if listed else 404)
    assert queryables.status_code == (200 if listed else 404)
    if listed:
        assert ("items" in rels(one.json())) == items
    expected = 200 if items else 403 if listed else 404
    assert page.status_code == expected, page.text
    assert feature.status_code == expected
    if expected == 200:
        assert page.json()["numberMatched"] == 177
    else:
        assert set(page.json()) == {"code", "description"}


def test_viewing_without_download_is_401_for_anonymous(world):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['cities'])}/items")
    assert r.status_code == 401 and r.json()["code"] == "NotAuthenticated"
    assert "www-authenticate" in r.headers


def test_collection_html(world):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['visits'])}", headers={"Accept": "text/html"})
        listing = c.get("/ogcapi/collections?f=html")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "selects features by the field day" in r.text
    assert world["countries"]["title"] in listing.text


# --- items -----------------------------------------------------------------------------------


def test_items_are_the_shapefiles_features(world):
    names, geometries, fields = shapefile()
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items", params={"limit": 1000})
    assert r.status_code == 200 and r.headers["content-type"] == "application/geo+json"
    assert r.headers["content-crs"] == f"<{CRS84}>"
    doc = r.json()
    assert doc["numberMatched"] == doc["numberReturned"] == 177 and doc["timeStamp"].endswith("Z")
    assert [f["id"] for f in doc["features"]] == list(range(1, 178))
    for i, feature in enumerate(doc["features"]):
        for name, column in zip(names, fields):
            value = column[i].item() if hasattr(column[i], "item") else column[i]
            assert feature["properties"][name] == value
        assert shapely.equals_exact(shapely.geometry.shape(feature["geometry"]).normalize(),
                                    geometries[i].normalize(), 1e-9) or \
            shapely.geometry.shape(feature["geometry"]).equals(geometries[i])


def test_paging_with_next_and_prev(world):
    seen = []
    url = f"/ogcapi/collections/{cid(world['countries'])}/items?limit=50"
    with client(world, "anonymous") as c:
        while url:
            doc = c.get(url).json()
            seen += [f["id"] for f in doc["features"]]
            links = {lk["rel"]: lk["href"] for lk in doc["links"]}
            assert ("prev" in links) == (len(seen) > 50)
            url = links.get("next")
    assert seen == list(range(1, 178))
    with client(world, "anonymous") as c:
        doc = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items?limit=10&offset=170").json()
    assert [f["id"] for f in doc["features"]] == list(range(171, 178))
    assert "next" not in rels(doc) and "prev" in rels(doc)


def test_a_limit_of_a_billion_is_capped(world):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items?limit=1000000000")
    assert r.status_code == 200 and r.json()["numberReturned"] == 177


def test_bbox_in_crs84_4326_and_3857(world):
    _, geometries, _ = shapefile()
    box = (5.0, 45.0, 15.0, 55.0)
    expected = (np.flatnonzero(shapely.intersects(geometries, shapely.box(*box))) + 1).tolist()
    path = f"/ogcapi/collections/{cid(world['countries'])}/items"
    with client(world, "anonymous") as c:
        crs84 = c.get(path, params={"bbox": "5,45,15,55", "limit": 200}).json()
        lat_first = c.get(path, params={"bbox": "45,5,55,15", "bbox-crs": EPSG4326, "limit": 200}).json()
        from pyproj import Transformer
        t = Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)
        x0, y0 = t.transform(5, 45)
        x1, y1 = t.transform(15, 55)
        mercator = c.get(path, params={"bbox": f"{x0},{y0},{x1},{y1}", "bbox-crs": EPSG3857, "limit": 200}).json()
    assert sorted(f["id"] for f in crs84["features"]) == expected
    assert crs84["numberMatched"] == len(expected) > 5
    assert sorted(f["id"] for f in lat_first["features"]) == expected
    assert set(expected) <= {f["id"] for f in mercator["features"]}


def test_crs_3857_and_4326_axis_order(world):
    path = f"/ogcapi/collections/{cid(world['visits'])}/items"
    with client(world, "anonymous") as c:
        lonlat = c.get(path, params={"limit": 10}).json()["features"]
        latlon = c.get(path, params={"crs": EPSG4326}).json()["features"]
        r = c.get(path, params={"crs": EPSG3857})
        one = c.get(f"{path}/4", params={"crs": EPSG4326})
    assert r.headers["content-crs"] == f"<{EPSG3857}>"
    assert lonlat[3]["geometry"]["coordinates"] == [3.0, 3.0]
    # 2020-01-01 is at (0, 0), the third at (2, 2): lat/lon gives (y, x); compare with a point off the diagonal
    assert [f["geometry"]["coordinates"] for f in latlon] == [[y, x] for x, y in
                                                             (f["geometry"]["coordinates"] for f in lonlat)]
    x, y = r.json()["features"][3]["geometry"]["coordinates"]
    assert round(x) == 333958 and round(y) == 334111
    assert one.headers["content-crs"] == f"<{EPSG4326}>"


def test_crs_axis_order_on_polygons(world):
    path = f"/ogcapi/collections/{cid(world['countries'])}/items/2"
    with client(world, "anonymous") as c:
        lonlat = c.get(path).json()["geometry"]["coordinates"]
        latlon = c.get(path, params={"crs": EPSG4326}).json()["geometry"]["coordinates"]
    first = np.array(lonlat[0][0] if isinstance(lonlat[0][0][0], list) else lonlat[0])
    second = np.array(latlon[0][0] if isinstance(latlon[0][0][0], list) else latlon[0])
    assert np.allclose(first[:, ::-1], second)


def test_datetime(world):
    path = f"/ogcapi/collections/{cid(world['visits'])}/items"
    with client(world, "anonymous") as c:
        day = c.get(path, params={"datetime": "2020-01-03"}).json()
        interval = c.get(path, params={"datetime": "2020-01-03/2020-01-05"}).json()
        open_end = c.get(path, params={"datetime": "2020-01-08/.."}).json()
        open_start = c.get(path, params={"datetime": "../2020-01-02T12:00:00Z"}).json()
        none = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items",
                     params={"datetime": "2020-01-03", "limit": 1}).json()
    assert [f["properties"]["day"] for f in day["features"]] == ["2020-01-03"]
    assert [f["id"] for f in interval["features"]] == [3, 4, 5]
    assert [f["id"] for f in open_end["features"]] == [8, 9, 10]
    assert [f["id"] for f in open_start["features"]] == [1, 2]
    assert none["numberMatched"] == 177  # no date: datetime selects every feature


def test_properties(world):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items", params={"properties": "name,iso_a3", "limit": 2})
    feature = r.json()["features"][0]
    assert set(feature["properties"]) == {"name", "iso_a3"} and feature["geometry"]["type"]


def test_one_feature(world):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items/3")
        html = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items/3?f=html")
    assert r.status_code == 200 and r.headers["content-type"] == "application/geo+json"
    doc = r.json()
    assert doc["type"] == "Feature" and doc["id"] == 3 and doc["properties"]["name"] == "W. Sahara"
    assert {"self", "alternate", "collection"} <= rels(doc)
    # entity tags come from geo/feature_etags.py (sent when it knows one): quoted, the same
    # while the feature is unchanged, another feature's is another
    etag = r.headers.get("etag")
    if etag is not None:
        with client(world, "anonymous") as c:
            again = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items/3").headers["etag"]
            other = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items/4").headers["etag"]
        assert etag.strip("W/").startswith('"') and etag == again != other
    assert html.status_code == 200 and "W. Sahara" in html.text


def test_items_html(world):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items", params={"limit": 5},
                  headers={"Accept": "text/html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "177 features match" in r.text and "Tanzania" in r.text and 'rel="next"' in r.text


def test_queryables(world):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['visits'])}/queryables")
        countries = c.get(f"/ogcapi/collections/{cid(world['countries'])}/queryables").json()
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/schema+json")
    doc = r.json()
    assert doc["type"] == "object" and doc["$schema"].startswith("https://json-schema.org/")
    assert doc["properties"]["day"] == {"title": "day", "type": "string", "format": "date",
                                        "x-ogc-role": "primary-instant"}
    assert doc["properties"]["label"]["type"] == "string"
    geometry = [p for p in countries["properties"].values() if p.get("x-ogc-role") == "primary-geometry"]
    assert geometry and geometry[0]["format"] == "geometry-multipolygon"
    assert countries["properties"]["pop_est"]["type"] == "number"
    assert countries["properties"]["gdp_md_est"]["type"] == "integer"


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("query, names", [
    ("bbox=1,2,3,4,5", "bbox"),
    ("bbox=a,b,c,d", "bbox"),
    ("bbox=0,10,5,0", "bbox"),
    ("bbox-crs=http://www.opengis.net/def/crs/EPSG/0/3857", "bbox-crs"),
    ("crs=http://www.opengis.net/def/crs/EPSG/0/999999", "crs"),
    ("crs=EPSG:4326", "crs"),
    ("crs=http://www.opengis.net/def/crs/EPSG/0/32631", "crs"),
    ("bbox=0,0,1,1&bbox-crs=http://www.opengis.net/def/crs/EPSG/0/2154", "bbox-crs"),
    ("limit=0", "limit"),
    ("limit=ten", "limit"),
    ("offset=-1", "offset"),
    ("datetime=yesterday", "datetime"),
    ("datetime=2020-02-01/2020-01-01", "datetime"),
    ("properties=name,nonexistent", "properties"),
    ("filter=name%20%3D", "filter"),
    ("filter=nonexistent%20%3D%201", "filter"),
    ("filter=name%3D'x'&filter-lang=sql", "filter-lang"),
    ("colour=red", "colour"),
    ("f=xml", "f"),
])
def test_bad_input_is_a_400_naming_the_parameter(world, query, names):
    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items?{query}")
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"code", "description"} and body["code"] == "InvalidParameterValue"
    assert body["description"].startswith(f"{names}:"), body


@pytest.mark.parametrize("path", [
    "/ogcapi/collections/nothing_here", "/ogcapi/collections/nothing_here/items",
    "/ogcapi/collections/nothing_here/items/1", "/ogcapi/collections/nothing_here/queryables",
    "/ogcapi/collections/{countries}/items/9999", "/ogcapi/collections/{countries}/items/abc",
    "/ogcapi/collections/{countries}/items/0", "/ogcapi/collections/{countries}/items/99999999999999999999999",
    "/ogcapi/collections/{raster}/items", "/ogcapi/collections/{raster}/queryables", "/ogcapi/collections/{map}/items",
    "/ogcapi/collections/map-abc", "/ogcapi/collections/map-99999999",
])
def test_unknown_collections_and_features_are_404(world, path):
    path = path.format(countries=cid(world["countries"]), raster=cid(world["raster"]), map=f"map-{world['map']['pk']}")
    with client(world, "admin") as c:
        r = c.get(path)
    assert r.status_code == 404, r.text
    assert set(r.json()) == {"code", "description"} and r.json()["code"] == "NotFound"


def test_a_box_across_the_antimeridian(world):
    with client(world, "anonymous") as c:
        fiji = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items", params={"bbox": "170,-20,-170,-10"}).json()
        north = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items",
                      params={"bbox": "170,60,-170,70", "properties": "name"}).json()
    assert [f["properties"]["name"] for f in fiji["features"]] == ["Fiji"]
    assert sorted(f["properties"]["name"] for f in north["features"]) == ["Russia", "United States of America"]


def test_web_mercator_answers_are_strict_json_at_the_poles(world):
    import json

    with client(world, "anonymous") as c:
        r = c.get(f"/ogcapi/collections/{cid(world['countries'])}/items", params={"crs": EPSG3857, "limit": 500})
    doc = json.loads(r.text, parse_constant=lambda name: pytest.fail(f"{name} in the answer"))
    coords = np.concatenate([shapely.get_coordinates(shapely.geometry.shape(f["geometry"])) for f in doc["features"]])
    assert len(doc["features"]) == 177 and np.isfinite(coords).all()


def test_the_record_collection_comes_first(world):
    with client(world, "anonymous") as c:
        docs = c.get("/ogcapi/collections").json()["collections"]
    assert docs[0]["id"] == "metadata:main" and docs[0]["itemType"] == "record"


def test_a_metadata_only_dataset_has_no_features(world, tmp_path):
    admin = world["admin"]
    dataset = upload_shapefile(admin, CITIES, dataset_title="Cities, metadata only")
    r = admin.patch(f"/api/v2/resources/{dataset['pk']}", json={"metadata_only": True})
    assert r.status_code == 200, r.text
    name = cid(dataset)
    with client(world, "admin") as c:
        doc = c.get(f"/ogcapi/collections/{name}").json()
        items = c.get(f"/ogcapi/collections/{name}/items")
        one = c.get(f"/ogcapi/collections/{name}/items/1")
    assert not {"items", "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector",
                "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map"} & rels(doc)
    assert items.status_code == one.status_code == 404
