"""WMS 1.1.1 and 1.3.0 as OWSLib and QGIS use it: capabilities listing what the caller may view,
maps of vectors and rasters in several CRSs and formats, feature information under a pixel,
legends, styles changed through the REST style address, permissions, and exception reports."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import rasterio
from lxml import etree
from owslib.wms import WebMapService
from PIL import Image

from tests.api.test_uploads import COUNTRIES, DATA
from tests.conftest import login
from tests.ogc.conftest import PUBLIC, upload_shapefile

WMS_NS = "{http://www.opengis.net/wms}"
WHITE = (255, 255, 255)
# lon, lat of places on land and at sea
LAND = {"central Africa": (22.0, 2.0), "Brazil": (-52.0, -10.0), "Russia": (100.0, 62.0)}
SEA = {"mid-Pacific": (-150.0, 0.0), "south Atlantic": (-20.0, -35.0), "Indian Ocean": (75.0, -30.0)}
MERCATOR = 20037508.342789244


def url(ogc) -> str:
    return ogc["srv"].url + "/geoserver/ows"


def owslib(ogc, version: str, user: dict | None = None) -> WebMapService:
    auth = {"username": user["username"], "password": user["password"]} if user else {}
    return WebMapService(url(ogc), version=version, timeout=60, **auth)


def picture(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


def lonlat_pixel(lon: float, lat: float, size: tuple[int, int], box=(-180, -90, 180, 90)) -> tuple[int, int]:
    w, h = size
    return int((lon - box[0]) / (box[2] - box[0]) * w), int((box[3] - lat) / (box[3] - box[1]) * h)


def mercator_pixel(lon: float, lat: float, size: tuple[int, int]) -> tuple[int, int]:
    x = lon / 180 * MERCATOR
    y = math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)) * 6378137
    w, h = size
    return int((x + MERCATOR) / (2 * MERCATOR) * w), int((MERCATOR - y) / (2 * MERCATOR) * h)


def assert_world_map(img: Image.Image, to_pixel, background=WHITE) -> None:
    """Land is drawn, the sea is background."""
    rgb = img.convert("RGB")
    for place, (lon, lat) in LAND.items():
        assert rgb.getpixel(to_pixel(lon, lat, img.size)) != background, place
    for place, (lon, lat) in SEA.items():
        assert rgb.getpixel(to_pixel(lon, lat, img.size)) == background, place


def report(response) -> tuple[str, str | None]:
    """The code and locator of an OGC exception report."""
    root = etree.fromstring(response.content)
    assert etree.QName(root).localname == "ServiceExceptionReport", response.text
    exc = next(el for el in root.iter() if isinstance(el.tag, str) and etree.QName(el).localname == "ServiceException")
    return exc.get("code"), exc.get("locator")


def getmap_params(layer: str, version: str = "1.3.0", **extra) -> dict:
    params = {"service": "WMS", "version": version, "request": "GetMap", "layers": layer, "styles": "",
              "width": "512", "height": "256", "format": "image/png"}
    if version == "1.3.0":
        params.update(crs="EPSG:4326", bbox="-90,-180,90,180")
    else:
        params.update(srs="EPSG:4326", bbox="-180,-90,180,90")
    params.update(extra)
    return params


def gfi_params(layer: str, lon: float, lat: float, version: str = "1.3.0", **extra) -> dict:
    params = getmap_params(layer, version, query_layers=layer, info_format="application/json")
    params["request"] = "GetFeatureInfo"
    col, row = lonlat_pixel(lon, lat, (512, 256))
    params.update({"i": str(col), "j": str(row)} if version == "1.3.0" else {"x": str(col), "y": str(row)})
    params.update(extra)
    return params


# --- capabilities --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.1.1", "1.3.0"])
def test_owslib_reads_capabilities_of_public_layers(ogc, version):
    wms = owslib(ogc, version)
    assert wms.identification.type in ("WMS", "OGC:WMS")
    countries, rgb, cities = ogc["countries"], ogc["rgb"], ogc["cities"]
    for dataset in (countries, rgb, cities):
        assert dataset["alternate"] in wms.contents
        assert wms[dataset["alternate"]].title == dataset["title"]
    assert ogc["private"]["alternate"] not in wms.contents
    layer = wms[countries["alternate"]]
    west, south, east, north = layer.boundingBoxWGS84
    assert west == pytest.approx(-180, abs=1e-6) and east == pytest.approx(180, abs=1e-6)
    assert south == pytest.approx(-90, abs=1e-6) and north == pytest.approx(83.645, abs=1e-3)
    assert {"EPSG:4326", "EPSG:3857"} <= set(layer.crsOptions)
    assert "EPSG:32618" in wms[rgb["alternate"]].crsOptions
    assert layer.queryable
    assert layer.styles, "each layer lists its styles"
    legend = next(iter(layer.styles.values()))["legend"]
    assert legend.startswith(ogc["srv"].url) and "GetLegendGraphic" in legend
    getmap = wms.getOperationByName("GetMap")
    assert {"image/png", "image/jpeg"} <= set(getmap.formatOptions)
    assert getmap.methods[0]["url"].startswith(url(ogc))
    info = wms.getOperationByName("GetFeatureInfo")
    assert {"application/json", "text/html", "text/plain"} <= set(info.formatOptions)


def test_capabilities_130_axis_order_and_boxes(ogc):
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params={"service": "WMS", "request": "GetCapabilities"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/xml")
    root = etree.fromstring(r.content)
    assert root.tag == f"{WMS_NS}WMS_Capabilities" and root.get("version") == "1.3.0"
    layer = next(el for el in root.iter(f"{WMS_NS}Layer") if el.findtext(f"{WMS_NS}Name") == ogc["rgb"]["alternate"])
    boxes = {b.get("CRS"): b for b in layer.findall(f"{WMS_NS}BoundingBox")}
    geo = layer.find(f"{WMS_NS}EX_GeographicBoundingBox")
    west = float(geo.findtext(f"{WMS_NS}westBoundLongitude"))
    south = float(geo.findtext(f"{WMS_NS}southBoundLatitude"))
    # EPSG:4326 lists latitude first in 1.3.0, CRS:84 longitude first
    assert float(boxes["EPSG:4326"].get("minx")) == pytest.approx(south)
    assert float(boxes["EPSG:4326"].get("miny")) == pytest.approx(west)
    assert float(boxes["CRS:84"].get("minx")) == pytest.approx(west)
    with rasterio.open(DATA / "RGB.byte.tif") as ds:
        assert float(boxes["EPSG:32618"].get("minx")) == pytest.approx(ds.bounds.left, abs=1)
        assert float(boxes["EPSG:32618"].get("maxy")) == pytest.approx(ds.bounds.top, abs=1)
    # every operation points at the absolute address it came to
    hrefs = [el.get("{http://www.w3.org/1999/xlink}href") for el in root.iter(f"{WMS_NS}OnlineResource")]
    assert hrefs and all(h.startswith(ogc["srv"].url) for h in hrefs)


def test_capabilities_111_document(ogc):
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/wms", params={"service": "WMS", "request": "GetCapabilities", "version": "1.1.1"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/vnd.ogc.wms_xml")
    assert b"<!DOCTYPE" not in r.content
    root = etree.fromstring(r.content)
    assert root.tag == "WMT_MS_Capabilities" and root.get("version") == "1.1.1"
    layer = next(el for el in root.iter("Layer") if el.findtext("Name") == ogc["countries"]["alternate"])
    ll = layer.find("LatLonBoundingBox")
    assert float(ll.get("minx")) == pytest.approx(-180) and float(ll.get("miny")) == pytest.approx(-90)
    assert "EPSG:4326" in [s.text for s in layer.findall("SRS")]


@pytest.mark.parametrize("asked, answered", [(None, "1.3.0"), ("1.3.0", "1.3.0"), ("1.1.1", "1.1.1"),
                                             ("1.0.0", "1.1.1"), ("2.0.0", "1.3.0"), ("1.1.0", "1.1.1")])
def test_capabilities_version_negotiation(ogc, asked, answered):
    params = {"service": "WMS", "request": "GetCapabilities"}
    if asked:
        params["version"] = asked
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params=params)
    assert r.status_code == 200
    assert etree.fromstring(r.content).get("version") == answered


@pytest.mark.parametrize("version", ["1.1.1", "1.3.0"])
def test_private_layer_listed_for_owner_viewer_and_admin_only(ogc, version):
    private = ogc["private"]["alternate"]
    assert private in owslib(ogc, version, ogc["owner"]).contents
    assert private in owslib(ogc, version, ogc["viewer"]).contents
    with ogc["srv"].client() as anon:
        caps = anon.get("/geoserver/ows", params={"service": "WMS", "request": "GetCapabilities",
                                                  "version": version}).text
    assert private not in caps
    assert private in ogc["admin"].get("/geoserver/ows", params={"service": "WMS", "request": "GetCapabilities",
                                                                 "version": version}).text


# --- GetMap: vectors -----------------------------------------------------------------------------


def test_owslib_getmap_130_epsg4326_lat_lon_order(ogc):
    wms = owslib(ogc, "1.3.0")
    # OWSLib takes x/y and sends EPSG:4326 as lat,lon in 1.3.0
    r = wms.getmap(layers=[ogc["countries"]["alternate"]], styles=[""], srs="EPSG:4326",
                   bbox=(-180, -90, 180, 90), size=(512, 256), format="image/png")
    assert r.info()["Content-Type"] == "image/png"
    img = picture(r.read())
    assert img.format == "PNG" and img.size == (512, 256)
    assert_world_map(img, lonlat_pixel)


def test_owslib_getmap_130_crs84(ogc):
    r = owslib(ogc, "1.3.0").getmap(layers=[ogc["countries"]["alternate"]], srs="CRS:84", bbox=(-180, -90, 180, 90),
                                     size=(400, 200), format="image/png")
    img = picture(r.read())
    assert img.size == (400, 200)
    assert_world_map(img, lonlat_pixel)


def test_owslib_getmap_111_epsg4326_lon_lat_order(ogc):
    r = owslib(ogc, "1.1.1").getmap(layers=[ogc["countries"]["alternate"]], srs="EPSG:4326",
                                     bbox=(-180, -90, 180, 90), size=(512, 256), format="image/png")
    img = picture(r.read())
    assert img.size == (512, 256)
    assert_world_map(img, lonlat_pixel)


@pytest.mark.parametrize("code", ["EPSG:3857", "EPSG:900913"])
def test_getmap_web_mercator(ogc, code):
    r = owslib(ogc, "1.3.0").getmap(layers=[ogc["countries"]["alternate"]], srs=code,
                                     bbox=(-MERCATOR, -MERCATOR, MERCATOR, MERCATOR), size=(512, 512),
                                     format="image/png")
    img = picture(r.read())
    assert img.size == (512, 512)
    assert_world_map(img, mercator_pixel)


def test_axis_orders_give_the_same_map(ogc):
    layer = ogc["countries"]["alternate"]
    with ogc["srv"].client() as anon:
        a = anon.get("/geoserver/ows", params=getmap_params(layer, "1.3.0"))
        b = anon.get("/geoserver/ows", params=getmap_params(layer, "1.3.0", crs="CRS:84", bbox="-180,-90,180,90"))
        c = anon.get("/geoserver/ows", params=getmap_params(layer, "1.1.1"))
    assert a.status_code == b.status_code == c.status_code == 200
    pixels = [np.asarray(picture(r.content).convert("RGB")) for r in (a, b, c)]
    assert (pixels[0] == pixels[1]).all() and (pixels[0] == pixels[2]).all()


def test_jpeg(ogc):
    r = owslib(ogc, "1.3.0").getmap(layers=[ogc["countries"]["alternate"]], srs="CRS:84", bbox=(-180, -90, 180, 90),
                                     size=(360, 180), format="image/jpeg")
    assert r.info()["Content-Type"] == "image/jpeg"
    img = picture(r.read())
    assert img.format == "JPEG" and img.size == (360, 180)
    rgb = img.convert("RGB")
    sea = rgb.getpixel(lonlat_pixel(-150, 0, img.size))
    land = rgb.getpixel(lonlat_pixel(22, 2, img.size))
    assert min(sea) > 245 and max(land) < 235  # lossy, but clearly apart


def test_transparent_background_and_bgcolor(ogc):
    layer = ogc["countries"]["alternate"]
    with ogc["srv"].client() as anon:
        clear = picture(anon.get("/geoserver/ows", params=getmap_params(layer, transparent="TRUE")).content)
        blue = picture(anon.get("/geoserver/ows", params=getmap_params(layer, bgcolor="0x0000FF")).content)
    clear = clear.convert("RGBA")
    assert clear.getpixel(lonlat_pixel(-150, 0, clear.size))[3] == 0
    assert clear.getpixel(lonlat_pixel(22, 2, clear.size))[3] == 255
    assert_world_map(blue, lonlat_pixel, background=(0, 0, 255))


@pytest.mark.parametrize("name", ["png", "image/png8", "image/png; mode=8bit"])
def test_png_spellings_are_tolerated(ogc, name):
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params=getmap_params(ogc["countries"]["alternate"], format=name))
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert picture(r.content).format == "PNG"


def test_two_layers_drawn_in_order(ogc):
    countries, cities = ogc["countries"]["alternate"], ogc["cities"]["alternate"]
    big = {"width": "1024", "height": "512"}
    with ogc["srv"].client() as anon:
        one = np.asarray(picture(anon.get("/geoserver/ows", params=getmap_params(countries, **big)).content)
                         .convert("RGB"))
        r = anon.get("/geoserver/ows", params=getmap_params(f"{countries},{cities}", styles=",", **big))
        assert r.status_code == 200, r.text
        both = np.asarray(picture(r.content).convert("RGB"))
        # the other order: the countries now cover the cities
        under = np.asarray(picture(anon.get("/geoserver/ows", params=getmap_params(f"{cities},{countries}", **big))
                                   .content).convert("RGB"))
    col, row = lonlat_pixel(2.35, 48.86, (1024, 512))  # Paris
    assert tuple(both[row, col]) != tuple(one[row, col])
    assert tuple(under[row, col]) == tuple(one[row, col])
    assert (both != one).any(axis=2).sum() > 500  # every city's mark


def test_concurrent_maps_are_alike(ogc):
    from concurrent.futures import ThreadPoolExecutor

    layers = f"{ogc['countries']['alternate']},{ogc['cities']['alternate']}"
    cases = [getmap_params(layers, styles=","),
             getmap_params(layers, styles=",", crs="EPSG:3857", bbox=f"{-MERCATOR},{-MERCATOR},{MERCATOR},{MERCATOR}")]

    def fetch(params):
        with ogc["srv"].client() as anon:
            r = anon.get("/geoserver/ows", params=params)
        assert r.status_code == 200, r.text
        return r.content

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(fetch, cases * 6))
    assert len(set(answers[0::2])) == 1 and len(set(answers[1::2])) == 1


def test_qgis_getmap_through_gs_with_upper_case_keys(ogc):
    owner = ogc["owner"]
    query = ("SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&BBOX=-90,-180,90,180&CRS=EPSG:4326&WIDTH=512&HEIGHT=256"
             f"&LAYERS={ogc['private']['alternate']}&STYLES=&FORMAT=image/png&DPI=96&MAP_RESOLUTION=96"
             "&FORMAT_OPTIONS=dpi:96&TRANSPARENT=TRUE")
    with login(ogc["srv"], owner) as c:
        r = c.get(f"/gs/ows?{query}")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "image/png"
    img = picture(r.content).convert("RGBA")
    assert img.size == (512, 256)
    assert img.getpixel(lonlat_pixel(-52, -10, img.size))[3] == 255
    assert img.getpixel(lonlat_pixel(-150, 0, img.size))[3] == 0


def test_getmap_through_a_layer_address_refuses_other_layers(ogc):
    name = ogc["countries"]["alternate"].split(":")[1]
    with ogc["srv"].client() as anon:
        ok = anon.get(f"/geoserver/catalogue/{name}/wms", params=getmap_params(ogc["countries"]["alternate"]))
        other = anon.get(f"/geoserver/catalogue/{name}/wms", params=getmap_params(ogc["cities"]["alternate"]))
    assert ok.status_code == 200
    assert other.status_code == 400 and report(other)[0] == "LayerNotDefined"


# --- GetMap: rasters -----------------------------------------------------------------------------


def test_raster_in_its_own_crs_matches_the_source(ogc):
    with rasterio.open(DATA / "RGB.byte.tif") as ds:
        source = ds.read()
        bounds = ds.bounds
        size = (ds.width, ds.height)
    r = owslib(ogc, "1.3.0").getmap(layers=[ogc["rgb"]["alternate"]], srs="EPSG:32618",
                                     bbox=(bounds.left, bounds.bottom, bounds.right, bounds.top), size=size,
                                     format="image/png", transparent=True)
    img = np.asarray(picture(r.read()).convert("RGBA"))
    assert img.shape == (size[1], size[0], 4)
    # at the raster's own resolution the pixels are the source's
    for row, col in [(359, 395), (200, 300), (500, 600), (100, 450)]:
        assert tuple(img[row, col, :3]) == tuple(source[:, row, col]), (row, col)
    # nodata (0 in every band, in the corners) is clear
    assert img[0, 0, 3] == 0 and img[359, 395, 3] == 255


def test_raster_reprojected_to_epsg4326(ogc):
    from pyproj import Transformer

    with rasterio.open(DATA / "RGB.byte.tif") as ds:
        source = ds.read()
        to_ll = Transformer.from_crs(ds.crs, "EPSG:4326", always_xy=True)
        x, y = ds.xy(359, 395)
        lon, lat = to_ll.transform(x, y)
        west, south, east, north = to_ll.transform_bounds(*ds.bounds)
    box = (west, south, east, north)
    size = (1000, 1000)  # finer than the source: read at full resolution, not from an overview
    r = owslib(ogc, "1.3.0").getmap(layers=[ogc["rgb"]["alternate"]], srs="EPSG:4326", bbox=box, size=size,
                                     format="image/png", transparent=True)
    img = np.asarray(picture(r.read()).convert("RGBA"))
    assert (img[:, :, 3] == 255).mean() > 0.3
    col, row = lonlat_pixel(lon, lat, size, box)
    window = source[:, 359 - 3:359 + 4, 395 - 3:395 + 4].reshape(3, -1)
    value = img[row, col, :3]
    # the map pixel is one of the source pixels near that place
    assert any((window[:, k] == value).all() for k in range(window.shape[1])), (value, window)


# --- styles --------------------------------------------------------------------------------------


RED_SLD = b"""<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc">
  <NamedLayer><Name>red</Name><UserStyle><Title>Red</Title><FeatureTypeStyle><Rule>
    <PolygonSymbolizer>
      <Fill><CssParameter name="fill">#FF0000</CssParameter></Fill>
      <Stroke><CssParameter name="stroke">#000000</CssParameter><CssParameter name="stroke-width">1</CssParameter></Stroke>
    </PolygonSymbolizer>
  </Rule></FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>"""

BLUE_SE = b"""<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="1.1.0" xmlns="http://www.opengis.net/sld" xmlns:se="http://www.opengis.net/se"
    xmlns:ogc="http://www.opengis.net/ogc">
  <NamedLayer><se:Name>blue</se:Name><UserStyle><se:Name>blue</se:Name><se:FeatureTypeStyle><se:Rule>
    <se:Name>Single symbol</se:Name>
    <se:PolygonSymbolizer>
      <se:Fill><se:SvgParameter name="fill">#0000ff</se:SvgParameter></se:Fill>
    </se:PolygonSymbolizer>
  </se:Rule></se:FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>"""


def test_style_put_changes_the_next_map(ogc):
    admin = ogc["admin"]
    dataset = upload_shapefile(admin, COUNTRIES, PUBLIC, dataset_title="Countries restyled")
    layer = dataset["alternate"]
    style = dataset["default_style"]
    brazil = lonlat_pixel(-52, -10, (512, 256))
    with ogc["srv"].client() as anon:
        before = picture(anon.get("/geoserver/ows", params=getmap_params(layer)).content).convert("RGB")
        assert before.getpixel(brazil) != (255, 0, 0)
        r = admin.put(style["sld_url"], content=RED_SLD, headers={"Content-Type": "application/vnd.ogc.sld+xml"})
        assert r.status_code == 200, r.text
        red = picture(anon.get("/geoserver/ows", params=getmap_params(layer)).content).convert("RGB")
        assert red.getpixel(brazil) == (255, 0, 0)
        assert red.getpixel(lonlat_pixel(-150, 0, red.size)) == WHITE
        # QGIS saves SE 1.1 (SvgParameter) through /gs/
        gs_url = style["sld_url"].replace("/geoserver/", "/gs/")
        r = admin.put(gs_url, content=BLUE_SE, headers={"Content-Type": "application/vnd.ogc.se+xml"})
        assert r.status_code == 200, r.text
        blue = picture(anon.get("/gs/ows", params=getmap_params(layer)).content).convert("RGB")
        assert blue.getpixel(brazil) == (0, 0, 255)
        # the legend follows the style
        legend = picture(anon.get("/geoserver/ows", params={"service": "WMS", "request": "GetLegendGraphic",
                                                            "layer": layer, "format": "image/png"}).content)
        assert legend.convert("RGB").getpixel((10, 10)) == (0, 0, 255)


def test_sld_body_styles_the_map(ogc):
    params = getmap_params(ogc["countries"]["alternate"], sld_body=RED_SLD.decode())
    with ogc["srv"].client() as anon:
        r = anon.post("/geoserver/ows", data=params)  # long SLDs come as forms
    assert r.status_code == 200, r.text
    assert picture(r.content).convert("RGB").getpixel(lonlat_pixel(-52, -10, (512, 256))) == (255, 0, 0)


def test_named_style_and_unknown_style(ogc):
    layer = ogc["countries"]
    name = layer["default_style"]["name"]
    with ogc["srv"].client() as anon:
        ok = anon.get("/geoserver/ows", params=getmap_params(layer["alternate"], styles=name))
        bad = anon.get("/geoserver/ows", params=getmap_params(layer["alternate"], styles="no-such-style"))
    assert ok.status_code == 200 and ok.headers["content-type"] == "image/png"
    assert bad.status_code == 400 and report(bad) == ("StyleNotDefined", "styles")


# --- GetFeatureInfo ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.1.1", "1.3.0"])
def test_feature_info_json_finds_brazil(ogc, version):
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params=gfi_params(ogc["countries"]["alternate"], -52, -10, version))
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["type"] == "FeatureCollection" and len(body["features"]) == 1
    feature = body["features"][0]
    assert feature["properties"]["name"] == "Brazil"
    assert feature["geometry"]["type"] in ("Polygon", "MultiPolygon")
    ring = feature["geometry"]["coordinates"][0] if feature["geometry"]["type"] == "Polygon" \
        else feature["geometry"]["coordinates"][0][0]
    lons = [p[0] for p in ring]
    assert -75 < min(lons) < max(lons) < -30  # longitude first, in degrees


def test_owslib_getfeatureinfo(ogc):
    wms = owslib(ogc, "1.3.0")
    layer = ogc["countries"]["alternate"]
    r = wms.getfeatureinfo(layers=[layer], srs="EPSG:4326", bbox=(-180, -90, 180, 90), size=(512, 256),
                           format="image/png", query_layers=[layer], info_format="application/json",
                           xy=lonlat_pixel(22, 2, (512, 256)), feature_count=3)
    import json
    features = json.loads(r.read())["features"]
    assert [f["properties"]["continent"] for f in features] == ["Africa"]


def test_feature_info_html_text_and_sea(ogc):
    layer = ogc["countries"]["alternate"]
    with ogc["srv"].client() as anon:
        html = anon.get("/geoserver/ows", params=gfi_params(layer, -52, -10, info_format="text/html"))
        plain = anon.get("/geoserver/ows", params=gfi_params(layer, -52, -10, info_format="text/plain"))
        sea = anon.get("/geoserver/ows", params=gfi_params(layer, -150, 0))
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "<table" in html.text and "<td>Brazil</td>" in html.text
    assert plain.headers["content-type"].startswith("text/plain") and "name = Brazil" in plain.text
    assert sea.json()["features"] == []


def test_feature_info_points_within_a_few_pixels(ogc):
    import pyogrio.raw
    import shapely

    _, _, wkb, fields = pyogrio.raw.read(DATA / "naturalearth_cities" / "naturalearth_cities.shp")
    names = list(fields[0])
    city = shapely.from_wkb(wkb[names.index("Paris")])
    col, row = lonlat_pixel(city.x, city.y, (512, 256))
    params = gfi_params(ogc["cities"]["alternate"], 0, 0, i=str(col + 2), j=str(row - 1), feature_count="5")
    with ogc["srv"].client() as anon:
        body = anon.get("/geoserver/ows", params=params).json()
    assert "Paris" in [f["properties"]["name"] for f in body["features"]]
    assert all(f["geometry"]["type"] == "Point" for f in body["features"])


def test_feature_info_of_a_raster_gives_band_values(ogc):
    with rasterio.open(DATA / "RGB.byte.tif") as ds:
        x, y = ds.xy(359, 395)
        value = ds.read(window=((359, 360), (395, 396)))[:, 0, 0]
        b = ds.bounds
    params = {"service": "WMS", "version": "1.3.0", "request": "GetFeatureInfo", "layers": ogc["rgb"]["alternate"],
              "query_layers": ogc["rgb"]["alternate"], "crs": "EPSG:32618", "styles": "",
              "bbox": f"{x - 150},{y - 150},{x + 150},{y + 150}", "width": "11", "height": "11", "i": "5", "j": "5",
              "info_format": "application/json"}
    with ogc["srv"].client() as anon:
        body = anon.get("/geoserver/ows", params=params).json()
    props = body["features"][0]["properties"]
    assert [props["RED_BAND"], props["GREEN_BAND"], props["BLUE_BAND"]] == value.tolist()
    assert b.left < x < b.right


# --- GetLegendGraphic ----------------------------------------------------------------------------


@pytest.mark.parametrize("dataset, size", [("countries", None), ("cities", (30, 24)), ("rgb", None)])
def test_legend_graphic(ogc, dataset, size):
    params = {"service": "WMS", "request": "GetLegendGraphic", "layer": ogc[dataset]["alternate"],
              "format": "image/png"}
    if size:
        params.update(width=str(size[0]), height=str(size[1]))
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params=params)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    img = picture(r.content).convert("RGBA")
    assert img.size == (size or (20, 20))
    assert (np.asarray(img)[:, :, 3] > 0).sum() > 20


# --- permissions ---------------------------------------------------------------------------------


def test_anonymous_is_refused_every_operation_on_a_private_layer(ogc):
    private = ogc["private"]["alternate"]
    requests = {
        "GetMap": getmap_params(private),
        "GetFeatureInfo": gfi_params(private, -52, -10),
        "GetLegendGraphic": {"service": "WMS", "request": "GetLegendGraphic", "layer": private, "format": "image/png"},
    }
    with ogc["srv"].client() as anon:
        for operation, params in requests.items():
            r = anon.get("/geoserver/ows", params=params)
            assert r.status_code == 400, operation
            assert report(r)[0] == "LayerNotDefined", operation
    # as if it did not exist
    with ogc["srv"].client() as anon:
        unknown = anon.get("/geoserver/ows", params=getmap_params("catalogue:no_such_layer"))
    assert unknown.status_code == 400 and report(unknown)[0] == "LayerNotDefined"


@pytest.mark.parametrize("who", ["owner", "viewer"])
def test_owner_and_viewer_may_map_query_and_see_the_legend(ogc, who):
    user = ogc[who]
    private = ogc["private"]["alternate"]
    r = owslib(ogc, "1.3.0", user).getmap(layers=[private], srs="EPSG:4326", bbox=(-180, -90, 180, 90),
                                           size=(512, 256), format="image/png")
    assert_world_map(picture(r.read()), lonlat_pixel)
    with login(ogc["srv"], user) as c:
        info = c.get("/geoserver/ows", params=gfi_params(private, -52, -10))
        legend = c.get("/gs/ows", params={"SERVICE": "WMS", "REQUEST": "GetLegendGraphic", "LAYER": private,
                                          "FORMAT": "image/png"})
    assert info.status_code == 200 and info.json()["features"][0]["properties"]["name"] == "Brazil"
    assert legend.status_code == 200 and legend.headers["content-type"] == "image/png"


# --- errors --------------------------------------------------------------------------------------


def _without(params: dict, key: str) -> dict:
    return {k: v for k, v in params.items() if k != key}


ERRORS = [
    ("no layers", lambda c: _without(getmap_params(c), "layers"), "MissingParameterValue", "layers"),
    ("unknown layer", lambda c: getmap_params("catalogue:nothing"), "LayerNotDefined", "layers"),
    ("empty layer name", lambda c: getmap_params(f"{c},"), "LayerNotDefined", "layers"),
    ("bad crs", lambda c: getmap_params(c, crs="EPSG:999999"), "InvalidCRS", "crs"),
    ("words as crs", lambda c: getmap_params(c, crs="not a crs"), "InvalidCRS", "crs"),
    ("bad srs 1.1.1", lambda c: getmap_params(c, "1.1.1", srs="EPSG:999999"), "InvalidSRS", "srs"),
    ("no crs", lambda c: _without(getmap_params(c), "crs"), "MissingParameterValue", "crs"),
    ("bad format", lambda c: getmap_params(c, format="image/gif"), "InvalidFormat", "format"),
    ("no format", lambda c: _without(getmap_params(c), "format"), "MissingParameterValue", "format"),
    ("words in bbox", lambda c: getmap_params(c, bbox="a,b,c,d"), "InvalidParameterValue", "bbox"),
    ("three numbers", lambda c: getmap_params(c, bbox="1,2,3"), "InvalidParameterValue", "bbox"),
    ("empty bbox", lambda c: getmap_params(c, bbox="0,0,0,0"), "InvalidParameterValue", "bbox"),
    ("min over max", lambda c: getmap_params(c, bbox="10,10,-10,-10"), "InvalidParameterValue", "bbox"),
    ("nan in bbox", lambda c: getmap_params(c, bbox="nan,0,1,1"), "InvalidParameterValue", "bbox"),
    ("no bbox", lambda c: _without(getmap_params(c), "bbox"), "MissingParameterValue", "bbox"),
    ("huge width", lambda c: getmap_params(c, width="5000"), "InvalidParameterValue", "width"),
    ("huge height", lambda c: getmap_params(c, height="100000"), "InvalidParameterValue", "height"),
    ("negative width", lambda c: getmap_params(c, width="-5"), "InvalidParameterValue", "width"),
    ("zero height", lambda c: getmap_params(c, height="0"), "InvalidParameterValue", "height"),
    ("words as width", lambda c: getmap_params(c, width="wide"), "InvalidParameterValue", "width"),
    ("bad transparent", lambda c: getmap_params(c, transparent="maybe"), "InvalidParameterValue", "transparent"),
    ("bad bgcolor", lambda c: getmap_params(c, bgcolor="0xZZZZZZ"), "InvalidParameterValue", "bgcolor"),
    ("styles for fewer layers", lambda c: getmap_params(c, styles="a,b"), "InvalidParameterValue", "styles"),
    ("vertical crs", lambda c: getmap_params(c, crs="EPSG:5773", bbox="0,0,1,1"), "InvalidCRS", "crs"),
    ("geocentric srs 1.1.1", lambda c: getmap_params(c, "1.1.1", srs="EPSG:4978", bbox="0,0,1,1"), "InvalidSRS",
     "srs"),
    ("3D crs", lambda c: getmap_params(c, crs="EPSG:4979"), "InvalidCRS", "crs"),
    ("overflowing bbox", lambda c: getmap_params(c, bbox="-1e308,-1e308,1e308,1e308"), "InvalidParameterValue",
     "bbox"),
    ("too many layers", lambda c: getmap_params(",".join([c] * 51)), "InvalidParameterValue", "layers"),
    ("unreadable sld_body", lambda c: getmap_params(c, sld_body="<oops"), "InvalidParameterValue", "sld_body"),
    ("sld_body not a style", lambda c: getmap_params(c, sld_body="<sld/>"), "InvalidParameterValue", "sld_body"),
    ("unknown operation", lambda c: {"service": "WMS", "request": "GetPicture"}, "OperationNotSupported", "request"),
    ("no operation", lambda c: {"service": "WMS"}, "MissingParameterValue", "request"),
    ("point off the map", lambda c: gfi_params(c, 0, 0, i="600"), "InvalidPoint", "i"),
    ("negative point", lambda c: gfi_params(c, 0, 0, j="-1"), "InvalidPoint", "j"),
    ("no point", lambda c: _without(gfi_params(c, 0, 0), "i"), "MissingParameterValue", "i"),
    ("negative count", lambda c: gfi_params(c, 0, 0, feature_count="-3"), "InvalidParameterValue", "feature_count"),
    ("overflowing bbox of a query", lambda c: gfi_params(c, 0, 0, bbox="-1e308,-1e308,1e308,1e308"),
     "InvalidParameterValue", "bbox"),
    ("too many query layers", lambda c: gfi_params(c, 0, 0, query_layers=",".join([c] * 51)),
     "InvalidParameterValue", "query_layers"),
    ("bad info format", lambda c: gfi_params(c, 0, 0, info_format="application/pdf"), "InvalidFormat", "info_format"),
    ("unknown query layer", lambda c: gfi_params(c, 0, 0, query_layers="catalogue:nothing"), "LayerNotDefined",
     "query_layers"),
    ("legend of nothing", lambda c: {"service": "WMS", "request": "GetLegendGraphic", "layer": "nothing"},
     "LayerNotDefined", "layer"),
    ("legend too big", lambda c: {"service": "WMS", "request": "GetLegendGraphic", "layer": c, "width": "9999"},
     "InvalidParameterValue", "width"),
    ("legend as gif", lambda c: {"service": "WMS", "request": "GetLegendGraphic", "layer": c, "format": "image/gif"},
     "InvalidFormat", "format"),
]


@pytest.mark.parametrize("case, build, code, locator", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_requests_get_exception_reports(ogc, case, build, code, locator):
    params = build(ogc["countries"]["alternate"])
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params=params)
    assert 400 <= r.status_code < 500, r.text
    assert r.headers["content-type"].startswith(("text/xml", "application/vnd.ogc.se_xml"))
    assert report(r) == (code, locator)


def test_version_111_reports_are_111_documents(ogc):
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params=getmap_params("catalogue:nothing", "1.1.1"))
    assert r.status_code == 400
    assert r.headers["content-type"].startswith("application/vnd.ogc.se_xml")
    assert etree.fromstring(r.content).get("version") == "1.1.1"
    assert report(r)[0] == "LayerNotDefined"


# --- limits --------------------------------------------------------------------------------------


def test_feature_info_gives_a_viewer_few_features_without_geometry(ogc):
    """A view-only user cannot download a layer through GetFeatureInfo: a one-pixel map of the
    world with a huge buffer and count answers a few features, without geometry."""
    private = ogc["private"]["alternate"]
    tiny = {"service": "WMS", "version": "1.3.0", "request": "GetFeatureInfo", "layers": private,
            "query_layers": private, "styles": "", "crs": "CRS:84", "bbox": "-160,-88,200,92", "width": "1",
            "height": "1", "i": "0", "j": "0", "buffer": "100", "feature_count": "1000",
            "info_format": "application/json"}
    with login(ogc["srv"], ogc["viewer"]) as c:
        whole = c.get("/geoserver/ows", params=tiny)
        near = c.get("/geoserver/ows", params=gfi_params(private, 22, 2, buffer="100", feature_count="2"))
        wfs = c.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typenames": private, "outputFormat": "application/json"})
    assert wfs.status_code == 403
    assert whole.status_code == 200, whole.text
    features = whole.json()["features"]
    assert 1 <= len(features) <= 3  # the country under the middle of the map, not all 177
    assert all(f["geometry"] is None for f in features)
    assert near.status_code == 200
    features = near.json()["features"]
    assert 1 <= len(features) <= 2 and all(f["geometry"] is None for f in features)
    assert features[0]["properties"]["continent"] == "Africa"
    # the owner may download: geometry given
    with login(ogc["srv"], ogc["owner"]) as c:
        owned = c.get("/geoserver/ows", params=tiny).json()["features"]
    assert owned and all(f["geometry"]["type"] in ("Polygon", "MultiPolygon") for f in owned)


def test_feature_info_count_and_buffer_are_capped(ogc):
    from catalogue_app.api.ogc.wms import MAX_FEATURES

    cities = ogc["cities"]["alternate"]
    params = {"service": "WMS", "version": "1.3.0", "request": "GetFeatureInfo", "layers": cities,
              "query_layers": cities, "styles": "", "crs": "CRS:84", "bbox": "-30,-60,70,90", "width": "1",
              "height": "1", "i": "0", "j": "0", "buffer": "100000", "feature_count": "1000",
              "info_format": "application/json"}
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows", params=params)
    assert r.status_code == 200, r.text
    features = r.json()["features"]
    assert 0 < len(features) <= MAX_FEATURES
    # the searched square is at most 25 pixels of a 256-pixel map on either side of the centre (20, 15)
    for f in features:
        lon, lat = f["geometry"]["coordinates"]
        assert abs(lon - 20) <= 100 * 25 / 256 + 1e-6 and abs(lat - 15) <= 150 * 25 / 256 + 1e-6


@pytest.mark.parametrize("dataset", ["countries", "rgb"])
@pytest.mark.parametrize("operation", ["GetMap", "GetFeatureInfo"])
def test_overflowing_boxes_are_refused(ogc, dataset, operation):
    layer = ogc[dataset]["alternate"]
    for version in ("1.1.1", "1.3.0"):
        for box in ("-1e308,-1e308,1e308,1e308", "-1.7e308,0,1.7e308,1"):
            params = getmap_params(layer, version, bbox=box) if operation == "GetMap" else \
                gfi_params(layer, 0, 0, version, bbox=box)
            with ogc["srv"].client() as anon:
                r = anon.get("/geoserver/ows", params=params)
            assert r.status_code == 400, (version, box, r.text)
            assert report(r) == ("InvalidParameterValue", "bbox")


def test_sld_body_is_limited_and_must_be_readable(ogc):
    layer = ogc["countries"]["alternate"]
    padded = RED_SLD.decode().replace("<NamedLayer>", "<!-- " + "x" * 70_000 + " --><NamedLayer>")
    with ogc["srv"].client() as anon:
        big = anon.post("/geoserver/ows", data=getmap_params(layer, sld_body=padded))
        broken = anon.post("/geoserver/ows", data=getmap_params(layer, sld_body=RED_SLD.decode()[:-30]))
        legend = anon.post("/geoserver/ows", data={"service": "WMS", "request": "GetLegendGraphic", "layer": layer,
                                                   "format": "image/png", "sld_body": "<oops"})
    assert big.status_code == 400 and report(big) == ("InvalidParameterValue", "sld_body")
    assert broken.status_code == 400 and report(broken) == ("InvalidParameterValue", "sld_body")
    assert legend.status_code == 400 and report(legend) == ("InvalidParameterValue", "sld_body")


def test_a_layer_named_many_times_is_drawn_once_over(ogc):
    layer = ogc["countries"]["alternate"]
    with ogc["srv"].client() as anon:
        once = anon.get("/geoserver/ows", params=getmap_params(layer))
        many = anon.get("/geoserver/ows", params=getmap_params(",".join([layer] * 50)))
    assert once.status_code == many.status_code == 200, many.text
    assert (np.asarray(picture(once.content).convert("RGB")) == np.asarray(picture(many.content).convert("RGB"))).all()


def test_capabilities_list_only_crs_maps_are_drawn_in(ogc):
    from catalogue_app.api.ogc.wms_capabilities import _native_codes

    assert _native_codes({"srid": "EPSG:32618"}) == ["EPSG:32618"]
    assert _native_codes({"srid": "EPSG:5773"}) == [] and _native_codes({"srid": "EPSG:4979"}) == []


class StubRequest:
    """Just what GetMap and GetFeatureInfo ask of a request, for a layer whose file is at ``path``;
    counts the lookups of styles and files."""

    def __init__(self, params: dict, path, kind: str = "vector"):
        self.params = {k.lower(): v for k, v in params.items()}
        self.path, self.kind = path, kind
        self.calls = {"style_body": 0, "data_path": 0}

    def get(self, key, default=None):
        value = self.params.get(key.lower())
        return default if value in (None, "") else value

    def require(self, key):
        from catalogue_app.api.ogc.common import OgcError

        if self.get(key) is None:
            raise OgcError("MissingParameterValue", key, key)
        return self.get(key)

    def layer(self, name, locator, code="InvalidParameterValue", download=False):
        return {"id": 1, "alternate": name, "subtype": "raster" if self.kind == "raster" else "vector",
                "srid": "EPSG:4326", "crs_wkt": None, "styles": [], "may_download": True}

    def data_path(self, layer):
        self.calls["data_path"] += 1
        return self.path

    def style_body(self, layer, name):
        self.calls["style_body"] += 1
        return None


def test_getmap_looks_a_repeated_layer_up_once():
    from catalogue_app.api.ogc import wms

    req = StubRequest(getmap_params(",".join(["catalogue:countries"] * 20)), COUNTRIES / "naturalearth_lowres.shp")
    r = wms.handle(req)
    assert r.status_code == 200
    assert req.calls == {"style_body": 1, "data_path": 1}


@pytest.mark.parametrize("kind", ["vector", "raster"])
@pytest.mark.parametrize("operation", ["GetMap", "GetFeatureInfo"])
def test_a_file_gone_while_drawing_is_an_exception_report(tmp_path, kind, operation):
    """The working copy found, then gone before it is read (a dataset replaced or deleted)."""
    from catalogue_app.api.ogc import wms
    from catalogue_app.api.ogc.common import OgcError

    params = getmap_params("catalogue:gone") if operation == "GetMap" else gfi_params("catalogue:gone", 0, 0)
    req = StubRequest(params, tmp_path / ("gone.gpkg" if kind == "vector" else "gone.tif"), kind)
    with pytest.raises(OgcError) as caught:
        wms.handle(req)
    assert (caught.value.code, caught.value.status) == ("NoApplicableCode", 404)
    assert "catalogue:gone" in caught.value.message
