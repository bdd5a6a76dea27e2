"""The built-in basemap (catalogue:basemap): drawn by the WMS for everyone, in Web Mercator
tiles as Leaflet asks for them and in EPSG:4326; listed in the WMS capabilities; no resource of
the catalogue; unknown to WFS and WCS."""

from __future__ import annotations

import io
import math
import shutil

import numpy as np
from lxml import etree
from PIL import Image

from tests.api.test_uploads import CITIES
from tests.ogc.conftest import upload_shapefile

LAND = (0xEE, 0xF0, 0xE8)
BORDER = (0xA9, 0xB0, 0xB7)
SEA = (0xAA, 0xD3, 0xDF)
WMS_NS = "{http://www.opengis.net/wms}"
TITLE = "Basemap (Natural Earth countries)"


def tile_box(z: int, x: int, y: int) -> str:
    """The EPSG:3857 box of a slippy-map tile (Leaflet's numbering)."""
    half = 20037508.342789244
    size = 2 * half / 2 ** z
    return f"{-half + x * size},{half - (y + 1) * size},{-half + (x + 1) * size},{half - y * size}"


def rgba(response) -> np.ndarray:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    return np.asarray(Image.open(io.BytesIO(response.content)).convert("RGBA"))


def share(pixels: np.ndarray, colour: tuple[int, int, int]) -> float:
    return float(np.all(pixels[..., :3] == colour, axis=-1).mean())


def get_map(client, layer="catalogue:basemap", **params):
    return client.get("/geoserver/ows", params={"SERVICE": "WMS", "REQUEST": "GetMap", "LAYERS": layer,
                                                "STYLES": "", "FORMAT": "image/png", **params})


def ows_error(response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(("text/xml", "application/vnd.ogc.se_xml"))
    root = etree.fromstring(response.content)
    assert root.tag.endswith("ExceptionReport"), response.text
    assert (root[0].get("exceptionCode") or root[0].get("code")) == code, response.text


def test_anonymous_mercator_tile_over_europe(anon):
    # z=3, x=4, y=2: lon 0..45, lat 41..67 (France to Finland); both versions Leaflet speaks
    for version, crs_key in (("1.1.1", "SRS"), ("1.3.0", "CRS")):
        pixels = rgba(get_map(anon, VERSION=version, **{crs_key: "EPSG:3857"}, BBOX=tile_box(3, 4, 2),
                              WIDTH="256", HEIGHT="256", TRANSPARENT="true"))
        assert pixels.shape == (256, 256, 4)
        assert share(pixels, LAND) > 0.3, version
        assert share(pixels, BORDER) > 0.001, version
        assert (pixels[..., 3] == 0).mean() > 0.05, version   # the sea is left clear


def test_bare_name_and_background_colour(anon):
    pixels = rgba(get_map(anon, layer="basemap", VERSION="1.1.1", SRS="EPSG:3857", BBOX=tile_box(3, 4, 2),
                          WIDTH="256", HEIGHT="256", BGCOLOR="0xAAD3DF"))
    assert share(pixels, LAND) > 0.3 and share(pixels, SEA) > 0.05
    assert (pixels[..., 3] == 255).all()


def test_whole_world_in_epsg_4326(anon):
    pixels = rgba(get_map(anon, VERSION="1.3.0", CRS="EPSG:4326", BBOX="-90,-180,90,180", WIDTH="720",
                          HEIGHT="360", BGCOLOR="0xAAD3DF"))

    def at(lon, lat):
        return tuple(pixels[int((90 - lat) * 2), int((lon + 180) * 2), :3])

    assert at(22, 2) == LAND and at(-52, -10) == LAND and at(100, 62) == LAND
    assert at(-150, 0) == SEA and at(-20, -35) == SEA
    assert share(pixels, BORDER) > 0.001


def test_capabilities_list_it_for_anonymous(anon):
    for version, ns in (("1.3.0", WMS_NS), ("1.1.1", "")):
        r = anon.get("/geoserver/ows", params={"SERVICE": "WMS", "REQUEST": "GetCapabilities", "VERSION": version})
        assert r.status_code == 200, r.text
        root = etree.fromstring(r.content)
        layers = {el.findtext(f"{ns}Name"): el for el in root.iter(f"{ns}Layer") if el.find(f"{ns}Name") is not None}
        assert "catalogue:basemap" in layers, version
        layer = layers["catalogue:basemap"]
        assert layer.findtext(f"{ns}Title") == TITLE
        codes = {el.text for el in layer.findall(f"{ns}{'CRS' if ns else 'SRS'}")}
        assert {"EPSG:4326", "EPSG:3857"} <= codes


def test_feature_info_and_legend(anon):
    r = anon.get("/geoserver/ows", params={
        "SERVICE": "WMS", "VERSION": "1.1.1", "REQUEST": "GetFeatureInfo", "LAYERS": "catalogue:basemap",
        "QUERY_LAYERS": "catalogue:basemap", "SRS": "EPSG:4326", "BBOX": "-10,40,10,50", "WIDTH": "200",
        "HEIGHT": "100", "X": "120", "Y": "60", "INFO_FORMAT": "application/json"})
    assert r.status_code == 200, r.text
    (feature,) = r.json()["features"]
    assert feature["properties"]["name"] == "France" and feature["geometry"] is None
    r = anon.get("/geoserver/ows", params={"SERVICE": "WMS", "REQUEST": "GetLegendGraphic",
                                           "LAYER": "catalogue:basemap", "FORMAT": "image/png"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"


def test_not_a_catalogue_resource(anon, admin):
    for client in (anon, admin):
        for path in ("/api/v2/resources", "/api/v2/datasets"):
            page, seen = 1, []
            while True:
                r = client.get(path, params={"page": page, "page_size": 100})
                assert r.status_code == 200, r.text
                body = r.json()
                seen += body["resources" if path.endswith("resources") else "datasets"]
                if not body.get("links", {}).get("next"):
                    break
                page += 1
            assert not [x for x in seen if x.get("alternate") == "catalogue:basemap" or x.get("title") == TITLE]
        r = client.get("/api/v2/resources", params={"search": "basemap"})
        assert r.status_code == 200, r.text
        assert all(x.get("alternate") != "catalogue:basemap" for x in r.json()["resources"])


def test_a_dataset_named_basemap_gets_another_name(admin, anon, tmp_path):
    folder = tmp_path / "basemap"
    folder.mkdir()
    for part in CITIES.iterdir():
        shutil.copy(part, folder / f"basemap{part.suffix}")
    dataset = upload_shapefile(admin, folder)
    assert dataset["alternate"] != "catalogue:basemap" and dataset["alternate"].startswith("catalogue:basemap")
    pixels = rgba(get_map(anon, VERSION="1.1.1", SRS="EPSG:3857", BBOX=tile_box(3, 4, 2), WIDTH="256",
                          HEIGHT="256"))
    assert share(pixels, LAND) > 0.3   # still the built-in one
    r = admin.delete(f"/api/v2/resources/{dataset['pk']}")
    assert r.status_code in (200, 204), r.text


def test_wfs_and_wcs_do_not_offer_it(anon):
    for params in ({"VERSION": "2.0.0", "REQUEST": "DescribeFeatureType", "TYPENAMES": "catalogue:basemap"},
                   {"VERSION": "2.0.0", "REQUEST": "GetFeature", "TYPENAMES": "catalogue:basemap"},
                   {"VERSION": "1.1.0", "REQUEST": "GetFeature", "TYPENAME": "basemap"}):
        ows_error(anon.get("/geoserver/ows", params={"SERVICE": "WFS", **params}), 400, "InvalidParameterValue")
    r = anon.get("/geoserver/ows", params={"SERVICE": "WFS", "REQUEST": "GetCapabilities"})
    assert r.status_code == 200 and b"basemap" not in r.content
    r = anon.get("/geoserver/ows", params={"SERVICE": "WCS", "VERSION": "2.0.1", "REQUEST": "DescribeCoverage",
                                           "COVERAGEID": "catalogue__basemap"})
    assert 400 <= r.status_code < 500, r.text


def test_bad_requests_are_4xx(anon):
    good = {"VERSION": "1.1.1", "SRS": "EPSG:3857", "WIDTH": "256", "HEIGHT": "256"}
    for bbox in ("1,2,3", "10,0,0,10", "a,b,c,d", f"0,0,{math.inf},1"):
        ows_error(get_map(anon, **{**good, "BBOX": bbox}), 400, "InvalidParameterValue")
    ows_error(get_map(anon, **{**good, "BBOX": tile_box(3, 4, 2), "SRS": "EPSG:999999"}), 400, "InvalidSRS")
    # another workspace's service address does not hold it
    r = anon.get("/geoserver/otherws/ows", params={"SERVICE": "WMS", "REQUEST": "GetMap", "LAYERS": "basemap",
                                                   "FORMAT": "image/png", "BBOX": tile_box(3, 4, 2), **good})
    ows_error(r, 400, "LayerNotDefined")
