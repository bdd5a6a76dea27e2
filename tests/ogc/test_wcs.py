"""WCS 2.0.1 and 1.0.0 against a running server: capabilities, coverage descriptions and
GetCoverage read by OWSLib and by plain requests as QGIS sends them, with the pixels of the
answers compared to the uploaded files, permissions on every operation and bad inputs."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import rasterio
import rasterio.warp
import requests
from lxml import etree
from owslib.util import Authentication, ServiceException
from owslib.wcs import WebCoverageService
from rasterio.io import MemoryFile
from rasterio.transform import from_origin
from rasterio.windows import Window

from tests.api.test_uploads import DATA, imported
from tests.conftest import ADMIN_PASSWORD, login
from tests.ogc.conftest import PRIVATE, PUBLIC, upload_tif

RGB = DATA / "RGB.byte.tif"
OWS20 = "{http://www.opengis.net/ows/2.0}"
OGC = "{http://www.opengis.net/ogc}"
NODATA = -9999.0


def write_lonlat_float(path: Path) -> Path:
    """A single-band float32 raster in EPSG:4326 (0.25 degree, the whole world) with nodata
    over the oceans of a made-up planet: value = latitude * 1000 + longitude."""
    lon = np.arange(1440) * 0.25 - 180 + 0.125
    lat = 90 - 0.125 - np.arange(720) * 0.25
    data = (lat[:, None] * 1000 + lon[None, :]).astype("float32")
    data[:, :100] = NODATA
    profile = dict(driver="GTiff", width=1440, height=720, count=1, dtype="float32", crs="EPSG:4326",
                   transform=from_origin(-180, 90, 0.25, 0.25), nodata=NODATA)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(data, 1)
    return path


def upload_file(client, path: Path, permissions: str = PUBLIC) -> dict:
    r = client.post("/api/v2/uploads/upload", files={"base_file": (path.name, path.read_bytes(), "image/tiff")},
                    data={"permissions": permissions})
    return imported(client, r)


@pytest.fixture(scope="module")
def wcs(ogc, tmp_path_factory):
    """The shared datasets plus a public float raster in EPSG:4326 and a private raster owned by
    `owner` that `viewer` may view but not download."""
    out = dict(ogc)
    out["float"] = upload_file(ogc["admin"], write_lonlat_float(tmp_path_factory.mktemp("wcs") / "lonlat_float.tif"))
    out["laea"] = upload_tif(ogc["admin"], "float_raster_with_nodata.tif")
    with login(ogc["srv"], ogc["owner"]) as c:
        out["secret"] = upload_tif(c, "shade.tif", PRIVATE)
        r = c.put(f"/api/v2/resources/{out['secret']['pk']}/permissions",
                  json={"users": [{"id": ogc["viewer"]["pk"], "permissions": "view"}]})
        assert r.status_code == 200, r.text
    return out


def cid(dataset: dict) -> str:
    return dataset["alternate"].replace(":", "__")


def ows(ogc) -> str:
    return ogc["srv"].url + "/geoserver/ows"


def auth(user: dict) -> Authentication:
    return Authentication(username=user["username"], password=user["password"])


@contextmanager
def tiff(data: bytes):
    with MemoryFile(data) as memory, memory.open() as ds:
        yield ds


def source(path: Path, window: Window) -> np.ndarray:
    with rasterio.open(path) as ds:
        return ds.read(window=window)


def exception_code(response) -> str:
    root = etree.fromstring(response.content)
    for el in root.iter():
        if isinstance(el.tag, str) and etree.QName(el).localname in ("Exception", "ServiceException"):
            return el.get("exceptionCode") or el.get("code")
    raise AssertionError(response.text)


def get(client, **params):
    return client.get("/geoserver/ows", params={"service": "WCS", **params})


# -- capabilities -------------------------------------------------------------------------------
def test_owslib_reads_the_201_capabilities(wcs):
    service = WebCoverageService(ows(wcs), version="2.0.1")
    assert service.identification.type == "OGC WCS" and service.identification.version == "2.0.1"
    assert service.identification.title and service.provider.name == "Catalogue"
    assert cid(wcs["rgb"]) in service.contents and cid(wcs["float"]) in service.contents
    assert cid(wcs["secret"]) not in service.contents            # private: absent for anonymous
    assert cid(wcs["countries"]) not in service.contents         # vectors are no coverages
    assert all(":" not in name for name in service.contents)
    for name in ("GetCapabilities", "DescribeCoverage", "GetCoverage"):
        assert service.getOperationByName(name).methods[0]["url"] == ows(wcs)
    assert "image/tiff" in service.contents[cid(wcs["rgb"])].supportedFormats


def test_owslib_reads_the_100_capabilities(wcs):
    service = WebCoverageService(ows(wcs), version="1.0.0")
    assert service.identification.service == "WCS"
    rgb = service.contents[wcs["rgb"]["alternate"]]
    assert rgb.title == wcs["rgb"]["title"]
    lons = [p[0] for p in wcs["rgb"]["ll_bbox_polygon"]["coordinates"][0]]
    assert rgb.boundingBoxWGS84[0] == pytest.approx(min(lons)) and rgb.boundingBoxWGS84[2] == pytest.approx(max(lons))
    assert wcs["secret"]["alternate"] not in service.contents
    assert wcs["countries"]["alternate"] not in service.contents
    assert service.getOperationByName("GetCoverage").methods[0]["url"] == ows(wcs)


def test_the_private_coverage_is_listed_for_those_who_may_view_it(wcs):
    for user in (wcs["viewer"], wcs["owner"]):
        assert cid(wcs["secret"]) in WebCoverageService(ows(wcs), version="2.0.1", auth=auth(user)).contents
        assert wcs["secret"]["alternate"] in WebCoverageService(ows(wcs), version="1.0.0", auth=auth(user)).contents


def test_version_negotiation(wcs):
    with wcs["srv"].client() as anon:
        assert etree.fromstring(get(anon, request="GetCapabilities").content).get("version") == "2.0.1"
        r = get(anon, request="GetCapabilities", acceptversions="1.0.0,2.0.1")
        assert etree.QName(etree.fromstring(r.content)).localname == "WCS_Capabilities"
        r = get(anon, request="GetCapabilities", version="1.1.1")  # not served: the one below
        assert etree.fromstring(r.content).get("version") == "1.0.0"
        r = get(anon, request="GetCapabilities", version="1.1.0,1.0.0")
        assert etree.fromstring(r.content).get("version") == "1.0.0"
        r = get(anon, request="GetCapabilities", acceptversions="3.0.0")
        assert r.status_code == 400 and exception_code(r) == "VersionNegotiationFailed"
        r = get(anon, request="DescribeCoverage", version="1.1.1", identifiers=cid(wcs["rgb"]))
        assert r.status_code == 400 and exception_code(r) == "InvalidParameterValue"


def test_a_layer_address_lists_that_coverage_only(wcs):
    name = wcs["rgb"]["alternate"].split(":")[1]
    with wcs["srv"].client() as anon:
        r = anon.get(f"/geoserver/catalogue/{name}/wcs?request=GetCapabilities")
        ids = [el.text for el in etree.fromstring(r.content).iter("{http://www.opengis.net/wcs/2.0}CoverageId")]
        assert ids == [cid(wcs["rgb"])]
        r = anon.get(f"/geoserver/catalogue/{name}/wcs?request=DescribeCoverage&version=2.0.1"
                     f"&coverageId={cid(wcs['float'])}")
        assert r.status_code == 404 and exception_code(r) == "NoSuchCoverage"


# -- DescribeCoverage ---------------------------------------------------------------------------
def test_owslib_describes_a_201_coverage(wcs):
    service = WebCoverageService(ows(wcs), version="2.0.1")
    rgb = service.contents[cid(wcs["rgb"])]
    grid = rgb.grid
    assert grid.dimension == 2 and grid.axislabels == ["i", "j"]
    assert grid.lowlimits == ["0", "0"] and grid.highlimits == ["790", "717"]
    with rasterio.open(RGB) as ds:
        t = ds.transform
    assert [float(v) for v in grid.origin] == pytest.approx([t.c + t.a / 2, t.f + t.e / 2])
    assert [[float(v) for v in o] for o in grid.offsetvectors] == [[t.a, 0], [0, t.e]]
    (box,) = rgb.boundingboxes
    assert box["nativeSrs"] == "http://www.opengis.net/def/crs/EPSG/0/32618"
    assert box["bbox"] == pytest.approx((101985.0, 2611485.0, 339315.0, 2826915.0))
    description = service.getDescribeCoverage(cid(wcs["rgb"]))
    envelope = description.find(".//{http://www.opengis.net/gml/3.2}Envelope")
    assert envelope.get("axisLabels") == "E N" and envelope.get("srsDimension") == "2"
    fields = description.findall(".//{http://www.opengis.net/swe/2.0}field")
    assert [f.get("name") for f in fields] == ["RED_BAND", "GREEN_BAND", "BLUE_BAND"]
    assert description.findtext(".//{http://www.opengis.net/wcs/2.0}nativeFormat") == "image/tiff"


def test_a_lonlat_coverage_is_described_lat_first(wcs):
    with wcs["srv"].client() as anon:
        r = get(anon, request="DescribeCoverage", version="2.0.1", coverageId=cid(wcs["float"]))
    assert r.status_code == 200, r.text
    envelope = etree.fromstring(r.content).find(".//{http://www.opengis.net/gml/3.2}Envelope")
    assert envelope.get("srsName") == "http://www.opengis.net/def/crs/EPSG/0/4326"
    assert envelope.get("axisLabels") == "Lat Long"
    assert envelope.findtext("{http://www.opengis.net/gml/3.2}lowerCorner") == "-90 -180"
    assert envelope.findtext("{http://www.opengis.net/gml/3.2}upperCorner") == "90 180"
    nil = etree.fromstring(r.content).findtext(".//{http://www.opengis.net/swe/2.0}nilValue")
    assert float(nil) == NODATA


def test_a_northing_first_crs_is_described_and_subset_in_its_order(wcs):
    laea = wcs["laea"]
    assert laea["srid"] == "EPSG:3035"
    with rasterio.open(DATA / "float_raster_with_nodata.tif") as ds:
        t, expected, nodata = ds.transform, ds.read(), ds.nodata
    with wcs["srv"].client() as anon:
        r = get(anon, request="DescribeCoverage", version="2.0.1", coverageId=cid(laea))
        envelope = etree.fromstring(r.content).find(".//{http://www.opengis.net/gml/3.2}Envelope")
        assert envelope.get("axisLabels") == "Y X"
        low = [float(v) for v in envelope.findtext("{http://www.opengis.net/gml/3.2}lowerCorner").split()]
        assert low == pytest.approx([t.f + 12 * t.e, t.c])  # northing, then easting
        # columns 2..9, rows 3..10, by their coordinates
        r = get(anon, request="GetCoverage", version="2.0.1", coverageId=cid(laea),
                subset=[f"X({t.c + 2 * t.a!r},{t.c + 10 * t.a!r})", f"Y({t.f + 11 * t.e!r},{t.f + 3 * t.e!r})"])
    assert r.status_code == 200, r.text
    with tiff(r.content) as out:
        assert (out.width, out.height) == (8, 8) and out.dtypes == ("float32",)
        assert out.nodata == pytest.approx(nodata)
        assert np.array_equal(out.read(), expected[:, 3:11, 2:10])


def test_the_capabilities_give_a_lonlat_box_lat_first_and_a_projected_one_x_first(wcs):
    with wcs["srv"].client() as anon:
        r = get(anon, request="GetCapabilities", version="2.0.1")
    ows_ns = "{http://www.opengis.net/ows/2.0}"
    boxes = {}
    for summary in etree.fromstring(r.content).iter("{http://www.opengis.net/wcs/2.0}CoverageSummary"):
        box = summary.find(f"{ows_ns}BoundingBox")
        boxes[summary.findtext("{http://www.opengis.net/wcs/2.0}CoverageId")] = (
            box.findtext(f"{ows_ns}LowerCorner"), box.findtext(f"{ows_ns}UpperCorner"))
    assert boxes[cid(wcs["float"])] == ("-90 -180", "90 180")
    x0, y0 = wcs["rgb"]["bbox_polygon"]["coordinates"][0][0]
    assert [float(v) for v in boxes[cid(wcs["rgb"])][0].split()] == pytest.approx([x0, y0])


def test_several_coverages_in_one_description(wcs):
    with wcs["srv"].client() as anon:
        r = get(anon, request="DescribeCoverage", version="2.0.1", coverageId=f"{cid(wcs['rgb'])},{cid(wcs['float'])}")
    ids = [el.text for el in etree.fromstring(r.content).iter("{http://www.opengis.net/wcs/2.0}CoverageId")]
    assert ids == [cid(wcs["rgb"]), cid(wcs["float"])]


def test_owslib_describes_a_100_coverage(wcs):
    service = WebCoverageService(ows(wcs), version="1.0.0")
    rgb = service.contents[wcs["rgb"]["alternate"]]
    assert rgb.grid.highlimits == ["790", "717"] and rgb.grid.axislabels == ["x", "y"]
    assert [c.getcode() for c in rgb.supportedCRS][0] == "EPSG:32618"
    assert "GeoTIFF" in rgb.supportedFormats
    assert rgb.boundingboxes[0]["bbox"] == pytest.approx((101985.0, 2611485.0, 339315.0, 2826915.0))
    # both names of a coverage are taken
    with wcs["srv"].client() as anon:
        r = get(anon, request="DescribeCoverage", version="1.0.0", coverage=cid(wcs["rgb"]))
    assert r.status_code == 200 and wcs["rgb"]["alternate"] in r.text


# -- GetCoverage 2.0.1 --------------------------------------------------------------------------
def rgb_edges(col0, row0, col1, row1):
    with rasterio.open(RGB) as ds:
        t = ds.transform
    return t.c + col0 * t.a, t.f + row1 * t.e, t.c + col1 * t.a, t.f + row0 * t.e


def test_owslib_getcoverage_201_window_is_the_source_pixels(wcs):
    service = WebCoverageService(ows(wcs), version="2.0.1")
    x0, y0, x1, y1 = rgb_edges(200, 100, 450, 400)
    answer = service.getCoverage(identifier=cid(wcs["rgb"]), format="image/tiff",
                                 subsets=[("E", x0, x1), ("N", y0, y1)])
    assert answer.info()["Content-Type"] == "image/tiff"
    with tiff(answer.read()) as out:
        assert (out.width, out.height, out.count) == (250, 300, 3)
        assert out.crs.to_epsg() == 32618
        assert out.transform.almost_equals(from_origin(x0, y1, (x1 - x0) / 250, (y1 - y0) / 300))
        assert out.nodata == 0
        assert np.array_equal(out.read(), source(RGB, Window(200, 100, 250, 300)))


def test_getcoverage_201_in_epsg_4326(wcs):
    x0, y0, x1, y1 = rgb_edges(200, 100, 450, 400)
    service = WebCoverageService(ows(wcs), version="2.0.1")
    answer = service.getCoverage(identifier=cid(wcs["rgb"]), format="image/tiff",
                                 subsets=[("E", x0, x1), ("N", y0, y1)],
                                 outputcrs="http://www.opengis.net/def/crs/EPSG/0/4326")
    lon0, lat0, lon1, lat1 = rasterio.warp.transform_bounds("EPSG:32618", "EPSG:4326", x0, y0, x1, y1)
    with tiff(answer.read()) as out:
        assert out.crs.to_epsg() == 4326
        b = out.bounds
        assert b.left <= lon0 + 1e-9 and b.right >= lon1 - 1e-9 and b.bottom <= lat0 + 1e-9 and b.top >= lat1 - 1e-9
        assert b.right - b.left < (lon1 - lon0) * 1.1
        assert (out.read() > 0).mean() > 0.8  # the image is there, not nodata


def test_getcoverage_201_subset_in_lat_long(wcs):
    with wcs["srv"].client() as anon:
        r = anon.get("/geoserver/ows?service=WCS&version=2.0.1&request=GetCoverage&coverageId="
                     f"{cid(wcs['float'])}&subset=Lat(10,20)&subset=Long(30,35)&format=image/geotiff")
    assert r.status_code == 200, r.text
    with tiff(r.content) as out:
        assert out.bounds == (30, 10, 35, 20) and (out.width, out.height) == (20, 40)
        assert out.dtypes == ("float32",) and out.nodata == NODATA
        values = out.read(1)
        lat = 20 - 0.125 - np.arange(40) * 0.25
        lon = 30 + 0.125 + np.arange(20) * 0.25
        assert np.array_equal(values, (lat[:, None] * 1000 + lon[None, :]).astype("float32"))


def test_getcoverage_201_subsetting_crs_and_scaling(wcs):
    lon0, lat0, lon1, lat1 = -78.0, 24.0, -77.0, 25.0
    with wcs["srv"].client() as anon:
        r = get(anon, request="GetCoverage", version="2.0.1", coverageId=cid(wcs["rgb"]),
                subsettingCrs="http://www.opengis.net/def/crs/EPSG/0/4326",
                outputCrs="http://www.opengis.net/def/crs/EPSG/0/4326",
                subset=[f"Long({lon0},{lon1})", f"Lat({lat0},{lat1})"], scaleSize="Long(200),Lat(100)")
    assert r.status_code == 200, r.text
    with tiff(r.content) as out:
        assert out.crs.to_epsg() == 4326 and (out.width, out.height) == (200, 100)
        assert np.allclose(out.bounds, (lon0, lat0, lon1, lat1))


def test_getcoverage_201_scaling_reads_a_smaller_picture(wcs):
    with wcs["srv"].client() as anon:
        r = get(anon, request="GetCoverage", version="2.0.1", coverageId=cid(wcs["rgb"]), scaleFactor="0.5")
        with tiff(r.content) as out:
            assert (out.width, out.height) == (396, 359)
            assert np.allclose(out.bounds, (101985.0, 2611485.0, 339315.0, 2826915.0))
        r = get(anon, request="GetCoverage", version="2.0.1", coverageId=cid(wcs["rgb"]),
                scaleSize="http://www.opengis.net/def/axis/OGC/1/i(100),http://www.opengis.net/def/axis/OGC/1/j(50)",
                interpolation="http://www.opengis.net/def/interpolation/OGC/1/linear")
        with tiff(r.content) as out:
            assert (out.width, out.height) == (100, 50)


def test_getcoverage_201_pixel_subsets_and_band_choice(wcs):
    with wcs["srv"].client() as anon:
        r = get(anon, request="GetCoverage", version="2.0.1", coverageId=cid(wcs["rgb"]),
                subset=["i(300,309)", "j(200,204)"], rangeSubset="BLUE_BAND,RED_BAND")
    assert r.status_code == 200, r.text
    with tiff(r.content) as out:
        assert (out.width, out.height, out.count) == (10, 5, 2)
        assert np.array_equal(out.read(), source(RGB, Window(300, 200, 10, 5))[[2, 0]])


# -- GetCoverage 1.0.0 --------------------------------------------------------------------------
def test_owslib_getcoverage_100_bbox_width_height(wcs):
    service = WebCoverageService(ows(wcs), version="1.0.0")
    box = rgb_edges(200, 100, 400, 300)
    answer = service.getCoverage(identifier=wcs["rgb"]["alternate"], bbox=box, crs="EPSG:32618",
                                 format="GeoTIFF", width=200, height=200)
    with tiff(answer.read()) as out:
        assert (out.width, out.height) == (200, 200) and out.crs.to_epsg() == 32618
        assert np.array_equal(out.read(), source(RGB, Window(200, 100, 200, 200)))
    answer = service.getCoverage(identifier=wcs["rgb"]["alternate"], bbox=box, crs="EPSG:32618",
                                 format="GeoTIFF", width=50, height=40)
    with tiff(answer.read()) as out:
        assert (out.width, out.height) == (50, 40)
        assert np.allclose(out.bounds, box)


def test_getcoverage_100_response_crs_and_resolution(wcs):
    service = WebCoverageService(ows(wcs), version="1.0.0")
    answer = service.getCoverage(identifier=wcs["rgb"]["alternate"], bbox=(-78, 24, -77, 25), crs="EPSG:4326",
                                 response_crs="EPSG:32618", format="image/tiff", resx=1000, resy=1000)
    with tiff(answer.read()) as out:
        assert out.crs.to_epsg() == 32618
        assert out.res == pytest.approx((1000, 1000), rel=0.02)
        utm = rasterio.warp.transform_bounds("EPSG:4326", "EPSG:32618", -78, 24, -77, 25)
        assert np.allclose(out.bounds, utm)


def test_qgis_requests_through_gs_with_upper_case_keys(wcs):
    alternate = wcs["rgb"]["alternate"]
    box = rgb_edges(100, 50, 300, 250)
    with wcs["srv"].client(auth=("admin", ADMIN_PASSWORD)) as qgis:
        r = qgis.get("/gs/ows?SERVICE=WCS&VERSION=1.0.0&REQUEST=GetCapabilities")
        assert r.status_code == 200 and f"<name>{alternate}</name>" in r.text
        assert f'xlink:href="{wcs["srv"].url}/gs/ows"' in r.text
        r = qgis.get(f"/gs/ows?SERVICE=WCS&VERSION=1.0.0&REQUEST=DescribeCoverage&COVERAGE={alternate}")
        assert r.status_code == 200 and "CoverageOffering" in r.text
        r = qgis.get(f"/gs/ows?SERVICE=WCS&VERSION=1.0.0&REQUEST=GetCoverage&COVERAGE={alternate}&CRS=EPSG:32618"
                     f"&BBOX={','.join(repr(v) for v in box)}&WIDTH=200&HEIGHT=200&FORMAT=GeoTIFF")
        assert r.status_code == 200 and r.headers["content-type"] == "image/tiff"
        with tiff(r.content) as out:
            assert np.array_equal(out.read(), source(RGB, Window(100, 50, 200, 200)))
        r = qgis.get(f"/gs/wcs?SERVICE=WCS&VERSION=2.0.1&REQUEST=GetCoverage&COVERAGEID={cid(wcs['rgb'])}"
                     f"&SUBSET=E({box[0]!r},{box[2]!r})&SUBSET=N({box[1]!r},{box[3]!r})&FORMAT=image/tiff")
        with tiff(r.content) as out:
            assert np.array_equal(out.read(), source(RGB, Window(100, 50, 200, 200)))


# -- permissions --------------------------------------------------------------------------------
def test_anonymous_knows_nothing_of_the_private_coverage(wcs):
    secret = wcs["secret"]
    with wcs["srv"].client() as anon:
        r = get(anon, request="GetCoverage", version="2.0.1", coverageId=cid(secret))
        assert r.status_code == 404 and exception_code(r) == "NoSuchCoverage"
        r = get(anon, request="DescribeCoverage", version="2.0.1", coverageId=cid(secret))
        assert r.status_code == 404 and exception_code(r) == "NoSuchCoverage"
        r = get(anon, request="GetCoverage", version="1.0.0", coverage=secret["alternate"], crs="EPSG:3857",
                bbox="-11858134,4803914,-11848350,4813698", width="10", height="10", format="GeoTIFF")
        assert r.status_code == 400 and exception_code(r) == "CoverageNotDefined"
        r = get(anon, request="DescribeCoverage", version="1.0.0", coverage=secret["alternate"])
        assert r.status_code == 400 and exception_code(r) == "CoverageNotDefined"
    with pytest.raises(requests.HTTPError):  # OWSLib raises on a 404
        WebCoverageService(ows(wcs), version="2.0.1").getDescribeCoverage(cid(secret))


def test_a_viewer_without_download_may_describe_but_not_get(wcs):
    secret = wcs["secret"]
    with login(wcs["srv"], wcs["viewer"]) as viewer:
        r = get(viewer, request="DescribeCoverage", version="2.0.1", coverageId=cid(secret))
        assert r.status_code == 200 and cid(secret) in r.text
        r = get(viewer, request="GetCoverage", version="2.0.1", coverageId=cid(secret))
        assert r.status_code == 403 and exception_code(r) == "NoApplicableCode"
        r = get(viewer, request="GetCoverage", version="1.0.0", coverage=secret["alternate"], crs="EPSG:3857",
                bbox="-11858134,4803914,-11848350,4813698", width="10", height="10", format="GeoTIFF")
        assert r.status_code == 403 and "ServiceExceptionReport" in r.text
    service = WebCoverageService(ows(wcs), version="2.0.1", auth=auth(wcs["viewer"]))
    with pytest.raises(ServiceException):
        service.getCoverage(identifier=cid(secret), format="image/tiff")


def test_the_owner_gets_the_private_coverage(wcs):
    secret = wcs["secret"]
    service = WebCoverageService(ows(wcs), version="2.0.1", auth=auth(wcs["owner"]))
    with tiff(service.getCoverage(identifier=cid(secret), format="image/tiff").read()) as out:
        with rasterio.open(DATA / "shade.tif") as ds:
            assert (out.width, out.height) == (ds.width, ds.height) and out.crs == ds.crs
            assert out.nodata == 255
            assert np.array_equal(out.read(), ds.read())
    service = WebCoverageService(ows(wcs), version="1.0.0", auth=auth(wcs["owner"]))
    answer = service.getCoverage(identifier=secret["alternate"], bbox=(-11858134, 4803914, -11848350, 4813698),
                                 crs="EPSG:3857", format="GeoTIFF", width=64, height=64)
    with tiff(answer.read()) as out:
        assert (out.width, out.height) == (64, 64)


def test_a_vector_dataset_is_no_coverage(wcs):
    with wcs["srv"].client() as anon:
        r = get(anon, request="GetCoverage", version="2.0.1", coverageId=cid(wcs["countries"]))
        assert r.status_code == 404 and exception_code(r) == "NoSuchCoverage"
        r = get(anon, request="DescribeCoverage", version="2.0.1", coverageId=cid(wcs["cities"]))
        assert r.status_code == 404 and exception_code(r) == "NoSuchCoverage"
        r = get(anon, request="GetCoverage", version="1.0.0", coverage=wcs["countries"]["alternate"],
                crs="EPSG:4326", bbox="0,0,10,10", width="10", height="10", format="GeoTIFF")
        assert r.status_code == 400 and exception_code(r) == "CoverageNotDefined"


# -- bad inputs ---------------------------------------------------------------------------------
BAD_20 = [
    ({"subset": "E(1"}, 400, "InvalidEncodingSyntax"),
    ({"subset": "E(abc,def)"}, 400, "InvalidSubsetting"),
    ({"subset": "E(200000,100000)"}, 400, "InvalidSubsetting"),
    ({"subset": ["E(0,10)", "N(0,10)"]}, 400, "InvalidSubsetting"),
    ({"subset": "E(150000)"}, 400, "InvalidSubsetting"),
    ({"subset": "Height(1,2)"}, 400, "InvalidAxisLabel"),
    ({"subset": ["E(110000,120000)", "E(110000,130000)"]}, 400, "InvalidAxisLabel"),
    ({"format": "image/png"}, 400, "InvalidParameterValue"),
    ({"scaleSize": "E(100000),N(100000)"}, 400, "InvalidParameterValue"),
    ({"scaleSize": "i(-5),j(10)"}, 400, "InvalidParameterValue"),
    ({"scaleSize": "i(1.5)"}, 400, "InvalidParameterValue"),
    ({"scaleSize": "i 100"}, 400, "InvalidEncodingSyntax"),
    ({"scaleSize": "k(100)"}, 400, "ScaleAxisUndefined"),
    ({"scaleFactor": "-1"}, 400, "InvalidScaleFactor"),
    ({"scaleFactor": "abc"}, 400, "InvalidScaleFactor"),
    ({"scaleFactor": "1000"}, 400, "InvalidParameterValue"),
    ({"resolution": "E(1e-300)"}, 400, "InvalidParameterValue"),
    ({"subset": "E(1e400,2)"}, 400, "InvalidSubsetting"),
    ({"outputCrs": "EPSG:99999"}, 400, "OutputCrs-NotSupported"),
    ({"outputCrs": "not a crs"}, 400, "OutputCrs-NotSupported"),
    ({"subsettingCrs": "urn:nothing"}, 400, "SubsettingCrs-NotSupported"),
    ({"interpolation": "magic"}, 400, "InterpolationMethodNotSupported"),
    ({"rangeSubset": "NIR_BAND"}, 400, "NoSuchField"),
    ({"coverageId": "catalogue__no_such_raster"}, 404, "NoSuchCoverage"),
    ({"coverageId": "a,b"}, 400, "InvalidParameterValue"),
    ({"coverageId": ""}, 400, "MissingParameterValue"),
    ({"request": "GetCoverageNow"}, 400, "OperationNotSupported"),
    ({"request": "DescribeCoverage", "coverageId": ""}, 400, "emptyCoverageIdList"),
    ({"version": "3.0.0"}, 400, "InvalidParameterValue"),
]


@pytest.mark.parametrize("params, status, code", BAD_20, ids=[str(p) for p, _, _ in BAD_20])
def test_bad_201_requests_get_exception_reports(wcs, params, status, code):
    query = {"request": "GetCoverage", "version": "2.0.1", "coverageId": cid(wcs["rgb"]), **params}
    with wcs["srv"].client() as anon:
        r = get(anon, **query)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("text/xml")
    assert etree.fromstring(r.content).tag == f"{OWS20}ExceptionReport"
    assert exception_code(r) == code


BAD_10 = [
    ({"bbox": "1,2,3"}, "InvalidParameterValue"),
    ({"bbox": "200000,2700000,100000,2800000"}, "InvalidParameterValue"),
    ({"bbox": "a,b,c,d"}, "InvalidParameterValue"),
    ({"bbox": "0,0,10,10"}, "InvalidParameterValue"),
    ({"width": "0"}, "InvalidParameterValue"),
    ({"width": "abc"}, "InvalidParameterValue"),
    ({"width": "100000", "height": "100000"}, "InvalidParameterValue"),
    ({"width": None, "height": None, "resx": "1e-320", "resy": "1e-320"}, "InvalidParameterValue"),
    ({"width": None, "height": None, "bbox": "-1e308,-1e308,1e308,1e308"}, "InvalidParameterValue"),
    ({"height": None}, "MissingParameterValue"),
    ({"format": "jpeg"}, "InvalidFormat"),
    ({"crs": "EPSG:99999"}, "InvalidParameterValue"),
    ({"response_crs": "EPSG:nope"}, "InvalidParameterValue"),
    ({"interpolation": "magic"}, "InvalidParameterValue"),
    ({"coverage": "catalogue:no_such_raster"}, "CoverageNotDefined"),
    ({"coverage": None}, "MissingParameterValue"),
]


@pytest.mark.parametrize("params, code", BAD_10, ids=[str(p) for p, _ in BAD_10])
def test_bad_100_requests_get_exception_reports(wcs, params, code):
    query = {"request": "GetCoverage", "version": "1.0.0", "coverage": wcs["rgb"]["alternate"], "crs": "EPSG:32618",
             "bbox": "110000,2700000,120000,2710000", "width": "10", "height": "10", "format": "GeoTIFF", **params}
    with wcs["srv"].client() as anon:
        r = get(anon, **{k: v for k, v in query.items() if v is not None})
    assert r.status_code == 400, r.text
    assert etree.fromstring(r.content).tag == f"{OGC}ServiceExceptionReport"
    assert exception_code(r) == code


# -- cost ---------------------------------------------------------------------------------------
def server_cpu(pid: int) -> float:
    """CPU seconds of a process and its children (the server's workers)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if entry.name == str(pid) or fields[1] == str(pid):
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def test_a_512_coverage_costs_little_server_cpu(wcs):
    srv = wcs["srv"]
    requests = {
        "2.0.1 512x512 window": {"version": "2.0.1", "coverageId": cid(wcs["rgb"]),
                                 "subset": ["i(0,511)", "j(0,511)"]},
        "2.0.1 whole float raster scaled to 512x512": {"version": "2.0.1", "coverageId": cid(wcs["float"]),
                                                       "scaleSize": "i(512),j(512)"},
        "1.0.0 512x512 in EPSG:3857": {"version": "1.0.0", "coverage": wcs["rgb"]["alternate"], "crs": "EPSG:4326",
                                       "response_crs": "EPSG:3857", "bbox": "-78.5,24,-77,25.5", "width": "512",
                                       "height": "512", "format": "GeoTIFF"},
    }
    spent = {}
    with srv.client() as anon:
        for name, params in requests.items():
            assert get(anon, request="GetCoverage", **params).status_code == 200
            start, wall = server_cpu(srv.proc.pid), time.perf_counter()
            for _ in range(10):
                r = get(anon, request="GetCoverage", **params)
                assert r.status_code == 200
            spent[name] = ((server_cpu(srv.proc.pid) - start) / 10, (time.perf_counter() - wall) / 10)
            with tiff(r.content) as out:
                assert (out.width, out.height) == (512, 512)
    print("\nserver CPU / wall per GetCoverage: "
          + "; ".join(f"{k}: {c * 1000:.0f} ms CPU, {w * 1000:.0f} ms wall" for k, (c, w) in spent.items()))
    assert all(cpu < 0.5 for cpu, _ in spent.values()), spent
