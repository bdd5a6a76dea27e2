"""OGC API - Tiles: the WebMercatorQuad tile matrix set, PNG map tiles of datasets, maps and the
basemap, Mapbox Vector Tiles of vector datasets, who gets which tiles, and the tile cache
emptied by an edit and by a style change."""

from __future__ import annotations

import io
import math

import mapbox_vector_tile
import numpy as np
import pytest
from PIL import Image

from tests.api.test_uploads import CITIES, COUNTRIES, DATA
from tests.conftest import ADMIN_PASSWORD, in_process, login, make_group, make_user
from tests.ogc.conftest import PRIVATE, PUBLIC, upload_shapefile, upload_tif
from tests.ogc.test_wms import RED_SLD

TMS = "WebMercatorQuad"


def lonlat_tile(lon: float, lat: float, z: int) -> tuple[int, int]:
    """(y, x) of the tile holding a point, and its pixel inside it."""
    n = 1 << z
    fx = (lon + 180.0) / 360.0 * n
    fy = (1.0 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2.0 * n
    return int(fy), int(fx)


def pixel_of(lon: float, lat: float, z: int) -> tuple[int, int]:
    n = 1 << z
    fx = (lon + 180.0) / 360.0 * n
    fy = (1.0 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2.0 * n
    return int((fx % 1) * 256), int((fy % 1) * 256)


def png(r) -> np.ndarray:
    assert r.status_code == 200, r.text[:300]
    assert r.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(r.content))
    assert image.size == (256, 256)
    return np.asarray(image.convert("RGBA"))


def map_tile(client, cid: str, z: int, y: int, x: int, **kw):
    return client.get(f"/ogcapi/collections/{cid}/map/tiles/{TMS}/{z}/{y}/{x}", **kw)


def vector_tile(client, cid: str, z: int, y: int, x: int, **kw):
    return client.get(f"/ogcapi/collections/{cid}/tiles/{TMS}/{z}/{y}/{x}", **kw)


def cid_of(dataset: dict) -> str:
    return dataset["alternate"].split(":", 1)[1]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("tiles") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, viewer, member, other = (make_user(admin) for _ in range(4))
    group = make_group(admin)
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]], "role": "member"})
    assert r.status_code == 200, r.text
    out = {"srv": srv, "admin": admin, "owner": owner, "viewer": viewer, "member": member, "other": other,
           "group": group}
    out["countries"] = upload_shapefile(admin, COUNTRIES)
    out["cities"] = upload_shapefile(admin, CITIES)
    out["rgb"] = upload_tif(admin, "world.byte.tif") if (DATA / "world.byte.tif").exists() else None
    with login(srv, owner) as c:
        out["private"] = upload_shapefile(c, COUNTRIES, PRIVATE, dataset_title="Private countries")
        r = c.put(f"/api/v2/resources/{out['private']['pk']}/permissions",
                  json={"users": [{"id": viewer["pk"], "permissions": "view"}],
                        "organizations": [{"id": group["group"]["pk"], "permissions": "download"}]})
        assert r.status_code == 200, r.text
    yield out
    admin.close()
    srv.stop()


# --- the tile matrix set -------------------------------------------------------------------------


def test_tile_matrix_sets(world):
    with world["srv"].client() as anon:
        r = anon.get("/ogcapi/tileMatrixSets")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        sets = r.json()["tileMatrixSets"]
        assert [s["id"] for s in sets] == [TMS]
        assert sets[0]["links"][0]["href"].endswith(f"/ogcapi/tileMatrixSets/{TMS}")
        doc = anon.get(f"/ogcapi/tileMatrixSets/{TMS}").json()
        assert doc["id"] == TMS
        assert doc["crs"] == "http://www.opengis.net/def/crs/EPSG/0/3857"
        assert [m["id"] for m in doc["tileMatrices"]] == [str(z) for z in range(25)]
        z3 = doc["tileMatrices"][3]
        assert (z3["matrixWidth"], z3["matrixHeight"], z3["tileWidth"]) == (8, 8, 256)
        assert z3["pointOfOrigin"] == pytest.approx([-20037508.342789244, 20037508.342789244])
        assert anon.get("/ogcapi/tileMatrixSets/WorldCRS84Quad").status_code == 404


def test_tilesets_of_a_dataset(world):
    cid = cid_of(world["countries"])
    with world["srv"].client() as anon:
        r = anon.get(f"/ogcapi/collections/{cid}/map/tiles")
        assert r.status_code == 200, r.text
        tileset = r.json()["tilesets"][0]
        assert tileset["dataType"] == "map" and tileset["tileMatrixSetURI"].endswith("/WebMercatorQuad")
        templated = [link for link in tileset["links"] if link["rel"] == "item"][0]
        assert templated["href"].endswith(f"/collections/{cid}/map/tiles/{TMS}/{{tileMatrix}}/{{tileRow}}/{{tileCol}}")
        assert templated["type"] == "image/png"
        meta = anon.get(f"/ogcapi/collections/{cid}/map/tiles/{TMS}").json()
        limits = {m["tileMatrix"]: m for m in meta["tileMatrixSetLimits"]}
        assert limits["0"] == {"tileMatrix": "0", "minTileRow": 0, "maxTileRow": 0, "minTileCol": 0, "maxTileCol": 0}
        vector = anon.get(f"/ogcapi/collections/{cid}/tiles/{TMS}").json()
        assert vector["dataType"] == "vector" and vector["layers"] == [{"id": cid, "dataType": "vector"}]
        assert [link for link in vector["links"] if link["rel"] == "item"][0]["type"] == \
            "application/vnd.mapbox-vector-tile"
        assert anon.get("/ogcapi/map/tiles").status_code == 200


# --- PNG tiles -----------------------------------------------------------------------------------


def test_png_tile_has_pixels_where_the_data_is(world):
    cid = cid_of(world["countries"])
    with world["srv"].client() as anon:
        # QGIS's XYZ client sends no Accept
        r = map_tile(anon, cid, 0, 0, 0, headers={"Accept": ""})
        whole = png(r)
        col, row = pixel_of(20, 5, 0)   # central Africa
        assert whole[row, col, 3] == 255
        col, row = pixel_of(-140, -10, 0)  # the Pacific
        assert whole[row, col, 3] == 0
        # a tile at zoom 4 over Brazil: filled; over the South Atlantic: clear
        y, x = lonlat_tile(-52, -10, 4)
        assert (png(map_tile(anon, cid, 4, y, x))[..., 3] == 255).mean() > 0.9
        y, x = lonlat_tile(-20, -40, 4)
        assert (png(map_tile(anon, cid, 4, y, x))[..., 3] == 0).all()


def test_a_raster_and_the_basemap_have_png_tiles(world):
    with world["srv"].client() as anon:
        base = png(anon.get(f"/ogcapi/map/tiles/{TMS}/1/0/1"))
        assert (base[..., 3] > 0).mean() > 0.2
        if world["rgb"] is not None:
            tile = png(map_tile(anon, cid_of(world["rgb"]), 0, 0, 0))
            assert (tile[..., 3] > 0).mean() > 0.3
            assert vector_tile(anon, cid_of(world["rgb"]), 0, 0, 0).status_code == 404


@pytest.mark.parametrize(("path", "status"), [
    ("25/0/0", 404), ("1/2/0", 404), ("1/0/2", 404), ("3/8/0", 404), ("0/0/1", 404),
    ("a/0/0", 400), ("0/0/x", 400), ("1.5/0/0", 400), ("-1/0/0", 400), ("0/-1/0", 400),
])
def test_outside_the_matrix(world, path, status):
    cid = cid_of(world["countries"])
    with world["srv"].client() as anon:
        for url in (f"/ogcapi/collections/{cid}/map/tiles/{TMS}/{path}", f"/ogcapi/collections/{cid}/tiles/{TMS}/{path}",
                    f"/ogcapi/map/tiles/{TMS}/{path}"):
            r = anon.get(url)
            assert r.status_code == status, (url, r.text)
            assert set(r.json()) >= {"code", "description"}


def test_unknown_collections_and_matrix_sets(world):
    with world["srv"].client() as anon:
        assert map_tile(anon, "no_such_layer", 0, 0, 0).status_code == 404
        assert map_tile(anon, "map-999999", 0, 0, 0).status_code == 404
        assert anon.get(f"/ogcapi/collections/{cid_of(world['countries'])}/map/tiles/Other/0/0/0").status_code == 404
        assert anon.get("/ogcapi/collections/bad%20name/map/tiles").status_code == 404
        r = map_tile(anon, cid_of(world["countries"]), 0, 0, 0, params={"f": "mvt"})
        assert r.status_code == 400 and "f" in r.json()["description"]
        assert anon.get("/ogcapi/tileMatrixSets", params={"f": "html"}).status_code == 400


# --- vector tiles --------------------------------------------------------------------------------


def test_mvt_holds_the_features_of_the_tile(world):
    cid = cid_of(world["cities"])
    with world["srv"].client() as anon:
        r = vector_tile(anon, cid, 0, 0, 0)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/vnd.mapbox-vector-tile"
        layers = mapbox_vector_tile.decode(r.content)
        assert list(layers) == [cid]
        layer = layers[cid]
        assert layer["extent"] == 4096
        assert len(layer["features"]) == 243  # every city of naturalearth_cities
        names = {f["properties"]["name"] for f in layer["features"]}
        assert {"Paris", "Tokyo", "Lima"} <= names
        ids = {f["id"] for f in layer["features"]}
        assert ids == set(range(1, 244))
        # zoom 5 around Paris: Paris is there, Tokyo is not
        y, x = lonlat_tile(2.35, 48.86, 5)
        near = mapbox_vector_tile.decode(vector_tile(anon, cid, 5, y, x).content)[cid]["features"]
        names = {f["properties"]["name"] for f in near}
        assert "Paris" in names and "Tokyo" not in names
        paris = next(f for f in near if f["properties"]["name"] == "Paris")
        assert paris["geometry"]["type"] == "Point"
        px, py = paris["geometry"]["coordinates"]  # decoded with y up
        col, row = pixel_of(2.35, 48.86, 5)
        assert abs(px / 16 - col) <= 1 and abs((4096 - py) / 16 - row) <= 1


def test_mvt_of_polygons_clipped_and_empty(world):
    cid = cid_of(world["countries"])
    with world["srv"].client() as anon:
        y, x = lonlat_tile(-52, -10, 4)
        features = mapbox_vector_tile.decode(vector_tile(anon, cid, 4, y, x).content)[cid]["features"]
        brazil = [f for f in features if f["properties"].get("name") == "Brazil"]
        assert brazil and brazil[0]["geometry"]["type"] in ("Polygon", "MultiPolygon")
        coords = np.array([pt for ring in _rings(brazil[0]["geometry"]) for pt in ring])
        assert coords.min() >= -64 and coords.max() <= 4096 + 64  # clipped, with its buffer
        assert brazil[0]["properties"]["continent"] == "South America"
        y, x = lonlat_tile(-20, -40, 4)
        r = vector_tile(anon, cid, 4, y, x)
        assert r.status_code == 200
        decoded = mapbox_vector_tile.decode(r.content)
        assert not decoded.get(cid, {}).get("features")


def _rings(geometry):
    if geometry["type"] == "Polygon":
        return geometry["coordinates"]
    return [ring for polygon in geometry["coordinates"] for ring in polygon]


# --- who gets which tiles ------------------------------------------------------------------------


def test_private_tiles_follow_the_permissions(world):
    srv, cid = world["srv"], cid_of(world["private"])
    # the owner first, so that a cached tile is there for the others to (not) find
    with login(srv, world["owner"]) as owner:
        assert map_tile(owner, cid, 0, 0, 0).status_code == 200
        assert vector_tile(owner, cid, 0, 0, 0).status_code == 200
    with srv.client() as anon:
        for r in (map_tile(anon, cid, 0, 0, 0), vector_tile(anon, cid, 0, 0, 0),
                  anon.get(f"/ogcapi/collections/{cid}/map/tiles"), anon.get(f"/ogcapi/collections/{cid}/tiles")):
            assert r.status_code == 404, r.text
            assert "image" not in r.headers["content-type"]
    with login(srv, world["other"]) as other:
        assert map_tile(other, cid, 0, 0, 0).status_code == 404
        assert vector_tile(other, cid, 0, 0, 0).status_code == 404
    with login(srv, world["viewer"]) as viewer:  # may view, not download
        assert map_tile(viewer, cid, 0, 0, 0).status_code == 200
        assert vector_tile(viewer, cid, 0, 0, 0).status_code == 403
    with login(srv, world["member"]) as member:  # the group may download
        assert map_tile(member, cid, 0, 0, 0).status_code == 200
        assert vector_tile(member, cid, 0, 0, 0).status_code == 200
    admin = world["admin"]
    assert map_tile(admin, cid, 0, 0, 0).status_code == 200
    assert vector_tile(admin, cid, 0, 0, 0).status_code == 200


def test_a_public_dataset_without_download_has_no_vector_tiles_for_anonymous(world):
    admin = world["admin"]
    dataset = upload_shapefile(admin, CITIES, '{"users": {"AnonymousUser": ["view_resourcebase"]}}',
                               dataset_title="Cities to look at")
    cid = cid_of(dataset)
    with world["srv"].client() as anon:
        assert map_tile(anon, cid, 0, 0, 0).status_code == 200
        r = vector_tile(anon, cid, 0, 0, 0)
        assert r.status_code == 401 and r.json()["code"]


# --- the cache -----------------------------------------------------------------------------------


def test_an_edit_and_a_style_change_empty_the_cache(world):
    admin = world["admin"]
    dataset = upload_shapefile(admin, COUNTRIES, PUBLIC, dataset_title="Countries edited")
    cid = cid_of(dataset)
    y, x = lonlat_tile(-52, -10, 3)
    col, row = pixel_of(-52, -10, 3)
    with world["srv"].client() as anon:
        first = map_tile(anon, cid, 3, y, x)
        before = png(first)
        assert before[row, col, 3] == 255
        again = map_tile(anon, cid, 3, y, x)
        assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
        assert map_tile(anon, cid, 3, y, x, headers={"If-None-Match": first.headers["etag"]}).status_code == 304
        mvt_before = mapbox_vector_tile.decode(vector_tile(anon, cid, 3, y, x).content)[cid]["features"]
        brazil = next(f for f in mvt_before if f["properties"]["name"] == "Brazil")
        # Brazil deleted through the web UI's edits
        r = admin.post(f"/api/v2/datasets/{dataset['pk']}/edits", json={"delete": [brazil["id"]]})
        assert r.status_code in (200, 201), r.text
        after = png(map_tile(anon, cid, 3, y, x))
        assert after[row, col, 3] == 0
        mvt_after = mapbox_vector_tile.decode(vector_tile(anon, cid, 3, y, x).content)[cid]["features"]
        assert "Brazil" not in {f["properties"]["name"] for f in mvt_after}
        # a style change: the land turns red
        col, row = pixel_of(-65, -30, 3)  # Argentina
        assert tuple(after[row, col, :3]) != (255, 0, 0)
        style = admin.get(f"/api/v2/datasets/{dataset['pk']}").json()["dataset"]["default_style"]
        r = admin.put(style["sld_url"], content=RED_SLD, headers={"Content-Type": "application/vnd.ogc.sld+xml"})
        assert r.status_code == 200, r.text
        red = png(map_tile(anon, cid, 3, y, x))
        assert tuple(red[row, col, :3]) == (255, 0, 0)


# --- maps ----------------------------------------------------------------------------------------


def test_a_map_tile_draws_its_layers_and_only_what_the_caller_may_see(world):
    admin = world["admin"]
    countries, private = world["countries"], world["private"]
    r = admin.post("/api/v2/maps", json={"resource_type": "map", "title": "Tiled map", "maplayers": [
        {"name": countries["alternate"], "order": 0, "visibility": True, "opacity": 1.0},
        {"name": private["alternate"], "order": 1, "visibility": True, "opacity": 1.0}]})
    assert r.status_code in (200, 201), r.text
    the_map = r.json()["map"]
    cid = f"map-{the_map['pk']}"
    with world["srv"].client() as anon:
        r = anon.get(f"/ogcapi/collections/{cid}/map/tiles/{TMS}")
        assert r.status_code == 200 and r.json()["title"] == "Tiled map"
        tile = png(map_tile(anon, cid, 0, 0, 0))
        alone = png(map_tile(anon, cid_of(countries), 0, 0, 0))
        assert np.array_equal(tile, alone)  # the private layer is left out for anonymous
        assert vector_tile(anon, cid, 0, 0, 0).status_code == 404
    assert png(map_tile(admin, cid, 0, 0, 0)) is not None


def test_a_dataset_tile_with_one_of_its_styles(world):
    countries = world["countries"]
    cid = cid_of(countries)
    style = countries["default_style"]["name"]
    with world["srv"].client() as anon:
        plain = png(map_tile(anon, cid, 1, 0, 0))
        for name in (style, f"catalogue:{style}"):
            r = anon.get(f"/ogcapi/collections/{cid}/styles/{name}/map/tiles/{TMS}/1/0/0")
            assert np.array_equal(png(r), plain)
        r = anon.get(f"/ogcapi/collections/{cid}/styles/no_such_style/map/tiles/{TMS}/1/0/0")
        assert r.status_code == 404 and r.json()["code"]
        private = cid_of(world["private"])
        r = anon.get(f"/ogcapi/collections/{private}/styles/{world['private']['default_style']['name']}"
                     f"/map/tiles/{TMS}/1/0/0")
        assert r.status_code == 404


def test_the_basemap_is_drawn_on_the_sea(world):
    with world["srv"].client() as anon:
        tile = png(anon.get(f"/ogcapi/map/tiles/{TMS}/2/1/1"))
        assert (tile[..., 3] == 255).all()
        col, row = pixel_of(-140, -10, 0)
        assert tuple(png(anon.get(f"/ogcapi/map/tiles/{TMS}/0/0/0"))[row, col, :3]) == (0xDC, 0xE7, 0xEE)
