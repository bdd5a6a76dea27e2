"""WFS 2.0.0, 1.1.0 and 1.0.0 as clients use it: OWSLib reads the capabilities and runs
GetFeature and DescribeFeatureType; QGIS-style requests with upper-case keys go through /gs/;
private datasets are hidden or refused; bad parameters get OGC exception reports."""

from __future__ import annotations

import json

import numpy as np
import pyogrio.raw
import pytest
import shapely
from lxml import etree
from owslib.util import ServiceException
from owslib.wfs import WebFeatureService
from pyproj import CRS, Transformer

from tests.api.test_uploads import CITIES, COUNTRIES
from tests.conftest import ADMIN_PASSWORD
from tests.ogc.conftest import upload_shapefile

NS = {"wfs": "http://www.opengis.net/wfs/2.0", "wfs11": "http://www.opengis.net/wfs",
      "ows": "http://www.opengis.net/ows/1.1", "ows10": "http://www.opengis.net/ows",
      "gml": "http://www.opengis.net/gml/3.2", "gml3": "http://www.opengis.net/gml",
      "xsd": "http://www.w3.org/2001/XMLSchema", "xlink": "http://www.w3.org/1999/xlink"}


def source(folder):
    """The features of a Shapefile in tests/data: (shapely geometries, {field: list})."""
    meta, _fids, wkb, fields = pyogrio.raw.read(folder / f"{folder.name}.shp")
    return shapely.from_wkb(wkb), {name: list(col) for name, col in zip(meta["fields"], fields)}


COUNTRY_SHAPES, COUNTRY_FIELDS = source(COUNTRIES)
CITY_SHAPES, _ = source(CITIES)


def ows_url(ogc, root="/geoserver"):
    return ogc["srv"].url + root + "/ows"


def service(ogc, version, user=None):
    auth = {"username": user["username"], "password": user["password"]} if user else {}
    return WebFeatureService(ows_url(ogc), version=version, **auth)


def get(ogc, auth=None, root="/geoserver", **params):
    with ogc["srv"].client(auth=auth) as client:
        return client.get(root + "/ows", params=params)


def as_json(response):
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def exception(response, status, code, locator=None):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/xml")
    root = etree.fromstring(response.content)
    assert root.tag.endswith("ExceptionReport"), response.text
    found = root[0]
    assert found.get("exceptionCode") == code, response.text
    if locator is not None:
        assert (found.get("locator") or "").lower() == locator.lower(), response.text
    assert found[0].text


def creds(user):
    return (user["username"], user["password"])


# --- capabilities ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.0.0", "1.1.0", "1.0.0"])
def test_owslib_reads_capabilities_with_public_types_only(ogc, version):
    wfs = service(ogc, version)
    countries, cities = ogc["countries"], ogc["cities"]
    assert countries["alternate"] in wfs.contents and cities["alternate"] in wfs.contents
    assert wfs[countries["alternate"]].title == countries["title"]
    assert wfs[cities["alternate"]].title == cities["title"]
    assert ogc["private"]["alternate"] not in wfs.contents
    assert ogc["rgb"]["alternate"] not in wfs.contents  # rasters are not feature types
    if version != "1.0.0":
        west, south, east, north = wfs[countries["alternate"]].boundingBoxWGS84
        assert (west, south, east) == pytest.approx((-180, -90, 180)) and north == pytest.approx(83.645, abs=1e-3)
        codes = [c.code for c in wfs[countries["alternate"]].crsOptions]
        assert codes[0] == 4326 and 3857 in codes
        op = wfs.getOperationByName("GetFeature")
        assert op.methods[0]["url"] == ows_url(ogc)


@pytest.mark.parametrize("version", ["2.0.0", "1.1.0"])
def test_private_type_is_listed_for_owner_viewer_and_admin(ogc, version):
    for user in (ogc["owner"], ogc["viewer"]):
        wfs = service(ogc, version, user)
        assert wfs[ogc["private"]["alternate"]].title == "Private countries"
    admin = ogc["admin"].get("/geoserver/wfs", params={"service": "WFS", "request": "GetCapabilities", "version": version})
    assert ogc["private"]["alternate"].encode() in admin.content


def test_capabilities_negotiate_versions_as_qgis_reads_them(ogc):
    r = get(ogc, root="/gs", SERVICE="WFS", REQUEST="GetCapabilities")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/xml")
    root = etree.fromstring(r.content)
    assert root.get("version") == "2.0.0" and root.tag == "{%s}WFS_Capabilities" % NS["wfs"]
    values = root.xpath("//ows:Operation[@name='GetCapabilities']/ows:Parameter[@name='AcceptVersions']//ows:Value/text()",
                        namespaces=NS)
    assert values == ["2.0.0", "1.1.0", "1.0.0"]
    hrefs = set(root.xpath("//ows:Operation//ows:Get/@xlink:href", namespaces=NS))
    assert hrefs == {ogc["srv"].url + "/gs/ows"}
    names = root.xpath("//wfs:FeatureType/wfs:Name/text()", namespaces=NS)
    assert ogc["countries"]["alternate"] in names
    prefix = ogc["countries"]["alternate"].split(":")[0]
    assert root.nsmap.get(prefix)  # the type names' prefix is declared

    older = get(ogc, SERVICE="WFS", REQUEST="GetCapabilities", ACCEPTVERSIONS="1.1.0,1.0.0")
    root = etree.fromstring(older.content)
    assert root.get("version") == "1.1.0" and root.tag == "{%s}WFS_Capabilities" % NS["wfs11"]
    values = root.xpath("//ows10:Operation[@name='GetCapabilities']/ows10:Parameter[@name='AcceptVersions']/ows10:Value/text()",
                        namespaces=NS)
    assert values == ["2.0.0", "1.1.0", "1.0.0"]
    exception(get(ogc, service="WFS", request="GetCapabilities", acceptversions="3.0.0"), 400, "VersionNegotiationFailed")


def test_virtual_layer_service_lists_one_type(ogc):
    workspace, name = ogc["cities"]["alternate"].split(":")
    with ogc["srv"].client() as client:
        r = client.get(f"/geoserver/{workspace}/{name}/wfs", params={"request": "GetCapabilities"})
    names = etree.fromstring(r.content).xpath("//wfs:FeatureType/wfs:Name/text()", namespaces=NS)
    assert names == [ogc["cities"]["alternate"]]


# --- GetFeature ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.0.0", "1.1.0"])
def test_owslib_getfeature_json_returns_every_feature(ogc, version):
    wfs = service(ogc, version)
    name = ogc["countries"]["alternate"]
    doc = json.loads(wfs.getfeature(typename=[name], outputFormat="application/json").read())
    assert doc["type"] == "FeatureCollection"
    assert len(doc["features"]) == len(COUNTRY_SHAPES) == 177
    assert doc["numberMatched"] == doc["totalFeatures"] == doc["numberReturned"] == 177
    assert doc["timeStamp"] and "crs" not in doc
    local = name.split(":")[1]
    assert [f["id"] for f in doc["features"]] == [f"{local}.{i}" for i in range(1, 178)]
    assert sorted(f["properties"]["name"] for f in doc["features"]) == sorted(COUNTRY_FIELDS["name"])
    first = doc["features"][0]
    assert set(first["properties"]) == set(COUNTRY_FIELDS)
    assert shapely.equals_exact(shapely.geometry.shape(first["geometry"]), COUNTRY_SHAPES[0], tolerance=1e-9)


def test_count_and_startindex_page_through_in_one_order(ogc):
    wfs = service(ogc, "2.0.0")
    name = ogc["countries"]["alternate"]
    everything = [f["id"] for f in json.loads(wfs.getfeature(typename=[name], outputFormat="json").read())["features"]]
    seen = []
    for start in range(0, 177, 50):
        doc = json.loads(wfs.getfeature(typename=[name], maxfeatures=50, startindex=start or None,
                                        outputFormat="application/json").read())
        assert doc["numberMatched"] == 177 and doc["numberReturned"] == len(doc["features"]) == min(50, 177 - start)
        seen += [f["id"] for f in doc["features"]]
    assert seen == everything
    wfs11 = service(ogc, "1.1.0")
    doc = json.loads(wfs11.getfeature(typename=[name], maxfeatures=7, startindex=170, outputFormat="json").read())
    assert [f["id"] for f in doc["features"]] == everything[170:177]
    past = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name,
                       outputformat="json", startindex="500"))
    assert past["features"] == [] and past["numberMatched"] == 177


def test_bbox_returns_the_features_that_intersect_it(ogc):
    name = ogc["countries"]["alternate"]
    box = (0.0, 40.0, 20.0, 50.0)
    expected = int(shapely.intersects(COUNTRY_SHAPES, shapely.box(*box)).sum())
    assert 5 < expected < 177
    wfs = service(ogc, "2.0.0")  # OWSLib writes the urn form, latitude first
    doc = json.loads(wfs.getfeature(typename=[name], bbox=box, outputFormat="application/json").read())
    assert len(doc["features"]) == doc["numberMatched"] == expected
    assert all(shapely.intersects(shapely.geometry.shape(f["geometry"]), shapely.box(*box)) for f in doc["features"])
    wfs11 = service(ogc, "1.1.0")
    doc11 = json.loads(wfs11.getfeature(typename=[name], bbox=box, outputFormat="application/json").read())
    assert len(doc11["features"]) == expected
    # short EPSG form and no CRS: longitude first; urn form: latitude first; a box in EPSG:3857
    for bbox in ("0,40,20,50,EPSG:4326", "0,40,20,50", "40,0,50,20,urn:ogc:def:crs:EPSG::4326",
                 "40,0,50,20,http://www.opengis.net/def/crs/EPSG/0/4326"):
        doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name,
                          outputformat="application/json", bbox=bbox))
        assert doc["numberMatched"] == expected, bbox
    x0, y0 = Transformer.from_crs(4326, 3857, always_xy=True).transform(0, 40)
    x1, y1 = Transformer.from_crs(4326, 3857, always_xy=True).transform(20, 50)
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name,
                      outputformat="application/json", bbox=f"{x0},{y0},{x1},{y1},EPSG:3857"))
    assert doc["numberMatched"] == expected
    hits = get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, resulttype="hits",
               bbox="0,40,20,50,EPSG:4326")
    assert etree.fromstring(hits.content).get("numberMatched") == str(expected)


def test_srsname_reprojects_coordinates(ogc):
    name = ogc["countries"]["alternate"]
    wfs = service(ogc, "2.0.0")
    doc = json.loads(wfs.getfeature(typename=[name], srsname="EPSG:3857", maxfeatures=1,
                                    outputFormat="application/json").read())
    assert doc["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::3857"
    got = shapely.get_coordinates(shapely.geometry.shape(doc["features"][0]["geometry"]))[0]
    lon, lat = shapely.get_coordinates(COUNTRY_SHAPES[0])[0]
    assert tuple(got) == pytest.approx(Transformer.from_crs(4326, 3857, always_xy=True).transform(lon, lat), abs=1e-6)
    for srs in ("urn:ogc:def:crs:EPSG::3857", "http://www.opengis.net/def/crs/EPSG/0/3857"):
        again = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, count="1",
                            outputformat="json", srsname=srs))
        assert shapely.get_coordinates(shapely.geometry.shape(again["features"][0]["geometry"]))[0] == pytest.approx(got)


def test_propertyname_limits_the_properties(ogc):
    name = ogc["countries"]["alternate"]
    wfs = service(ogc, "2.0.0")
    doc = json.loads(wfs.getfeature(typename=[name], propertyname=["name"], outputFormat="application/json").read())
    assert len(doc["features"]) == 177
    assert all(set(f["properties"]) == {"name"} and f["geometry"] is None for f in doc["features"])
    wfs11 = service(ogc, "1.1.0")  # OWSLib 1.1.0 sends propertyname=* unless told
    doc = json.loads(wfs11.getfeature(typename=[name], propertyname=["iso_a3", "geometry"],
                                      outputFormat="application/json").read())
    assert set(doc["features"][0]["properties"]) == {"iso_a3"} and doc["features"][0]["geometry"]["type"]


def test_hits_counts_without_features(ogc):
    name = ogc["countries"]["alternate"]
    r = get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, resulttype="hits")
    root = etree.fromstring(r.content)
    assert root.get("numberMatched") == "177" and root.get("numberReturned") == "0" and len(root) == 0
    r = get(ogc, service="WFS", version="1.1.0", request="GetFeature", typename=name, resulttype="hits")
    assert etree.fromstring(r.content).get("numberOfFeatures") == "177"
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, resulttype="hits",
                      outputformat="application/json"))
    assert doc["numberMatched"] == 177 and doc["features"] == []


def test_gml32_is_the_default_of_wfs_20(ogc):
    name = ogc["countries"]["alternate"]
    workspace, local = name.split(":")
    r = get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name)
    assert r.status_code == 200 and "gml" in r.headers["content-type"]
    root = etree.fromstring(r.content)
    assert root.tag == "{%s}FeatureCollection" % NS["wfs"]
    assert root.get("numberMatched") == root.get("numberReturned") == "177" and root.get("timeStamp")
    members = root.findall("wfs:member", NS)
    assert len(members) == 177
    uri = root.nsmap[workspace]
    feature = members[0][0]
    assert feature.tag == f"{{{uri}}}{local}" and feature.get("{%s}id" % NS["gml"]) == f"{local}.1"
    assert feature.find(f"{{{uri}}}name").text == COUNTRY_FIELDS["name"][0]
    surface = feature.find(f"{{{uri}}}geometry")[0]
    assert surface.tag == "{%s}MultiSurface" % NS["gml"] and surface.get("srsName") == "urn:ogc:def:crs:EPSG::4326"
    first = [float(v) for v in surface.find(".//gml:posList", NS).text.split()[:2]]
    lon, lat = shapely.get_coordinates(COUNTRY_SHAPES[0])[0]
    assert first == pytest.approx([lat, lon])  # the urn form is latitude first
    rings = [len(p.text.split()) // 2 for p in root.iterfind(".//gml:posList", NS)]
    assert sum(rings) == sum(len(shapely.get_coordinates(g)) for g in COUNTRY_SHAPES)


def test_gml311_is_the_default_of_wfs_11(ogc):
    name = ogc["cities"]["alternate"]
    wfs = service(ogc, "1.1.0")
    root = etree.fromstring(wfs.getfeature(typename=[name]).read())
    assert root.tag == "{%s}FeatureCollection" % NS["wfs11"]
    members = root.findall("gml3:featureMember", NS)
    assert len(members) == len(CITY_SHAPES) == int(root.get("numberOfFeatures"))
    point = members[0].find(".//gml3:Point", NS)
    lat, lon = (float(v) for v in point.find("gml3:pos", NS).text.split())
    assert (lon, lat) == pytest.approx(tuple(shapely.get_coordinates(CITY_SHAPES[0])[0]))


def test_wfs_10_basics(ogc):
    name = ogc["countries"]["alternate"]
    wfs = service(ogc, "1.0.0")
    root = etree.fromstring(wfs.getfeature(typename=[name], maxfeatures=3).read())
    assert len(root.findall("gml3:featureMember", NS)) == 3
    coordinates = root.find(".//gml3:coordinates", NS).text.split()[0].split(",")
    assert [float(v) for v in coordinates] == pytest.approx(list(shapely.get_coordinates(COUNTRY_SHAPES[0])[0]))
    r = get(ogc, service="WFS", version="1.0.0", request="DescribeFeatureType", typename=name)
    assert b"gml:MultiPolygonPropertyType" in r.content


def test_sortby_and_resourceid(ogc):
    name = ogc["countries"]["alternate"]
    local = name.split(":")[1]
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, outputformat="json",
                      sortby="name DESC", count="5"))
    assert [f["properties"]["name"] for f in doc["features"]] == sorted(COUNTRY_FIELDS["name"], reverse=True)[:5]
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", outputformat="json",
                      resourceid=f"{local}.3,{local}.5,{local}.9999"))
    assert [f["id"] for f in doc["features"]] == [f"{local}.3", f"{local}.5"]
    assert doc["features"][0]["properties"]["name"] == COUNTRY_FIELDS["name"][2]
    doc = as_json(get(ogc, service="WFS", version="1.1.0", request="GetFeature", typename=name, outputformat="json",
                      featureid=f"{local}.7"))
    assert [f["id"] for f in doc["features"]] == [f"{local}.7"]


def test_several_type_names_page_across_them(ogc):
    names = f'{ogc["countries"]["alternate"]},{ogc["cities"]["alternate"]}'
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=names, outputformat="json"))
    assert doc["numberMatched"] == 177 + len(CITY_SHAPES) == len(doc["features"])
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=names, outputformat="json",
                      count="5", startindex="175"))
    kinds = [f["id"].rsplit(".", 1)[0] for f in doc["features"]]
    local_countries, local_cities = (ogc[k]["alternate"].split(":")[1] for k in ("countries", "cities"))
    assert kinds == [local_countries] * 2 + [local_cities] * 3


def test_describe_feature_type(ogc):
    name = ogc["countries"]["alternate"]
    wfs = service(ogc, "2.0.0")
    schema = wfs.get_schema(name)
    assert set(schema["properties"]) == set(COUNTRY_FIELDS)
    assert schema["geometry_column"] == "geometry"
    r = get(ogc, service="WFS", version="2.0.0", request="DescribeFeatureType", typenames=name)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/xml; subtype=gml/3.2")
    root = etree.fromstring(r.content)
    workspace, local = name.split(":")
    assert root.get("targetNamespace") == root.nsmap[workspace]
    assert root.find("xsd:import", NS).get("namespace") == NS["gml"]
    elements = {e.get("name"): e.get("type") for e in root.iterfind(".//xsd:sequence/xsd:element", NS)}
    assert elements == {"geometry": "gml:MultiSurfacePropertyType", "pop_est": "xsd:double", "continent": "xsd:string",
                        "name": "xsd:string", "iso_a3": "xsd:string", "gdp_md_est": "xsd:long"}
    assert root.find("xsd:element", NS).get("name") == local
    r11 = get(ogc, service="WFS", version="1.1.0", request="DescribeFeatureType", typename=name)
    assert etree.fromstring(r11.content).find("xsd:import", NS).get("namespace") == NS["gml3"]
    described = as_json(get(ogc, service="WFS", version="2.0.0", request="DescribeFeatureType", typenames=name,
                            outputformat="application/json"))
    assert [p["name"] for p in described["featureTypes"][0]["properties"]][0] == "geometry"
    every = get(ogc, service="WFS", version="2.0.0", request="DescribeFeatureType")
    locals_ = [e.get("name") for e in etree.fromstring(every.content).findall("xsd:element", NS)]
    assert local in locals_ and ogc["private"]["alternate"].split(":")[1] not in locals_


def test_qgis_style_requests_through_gs(ogc):
    name = ogc["countries"]["alternate"]
    doc = as_json(get(ogc, root="/gs", SERVICE="WFS", VERSION="2.0.0", REQUEST="GetFeature", TYPENAMES=name,
                      SRSNAME="EPSG:4326", OUTPUTFORMAT="application/json"))
    assert len(doc["features"]) == 177
    r = get(ogc, root="/gs", SERVICE="WFS", REQUEST="GetFeature", VERSION="1.1.0", TYPENAME=name, SRSNAME="EPSG:4326",
            MAXFEATURES="5")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/xml; subtype=gml/3.1.1")
    root = etree.fromstring(r.content)
    assert len(root.findall("gml3:featureMember", NS)) == 5
    surface = root.find(".//gml3:MultiSurface", NS)
    assert surface.get("srsName") == "EPSG:4326"
    first = [float(v) for v in root.find(".//gml3:posList", NS).text.split()[:2]]
    assert first == pytest.approx(list(shapely.get_coordinates(COUNTRY_SHAPES[0])[0]))  # EPSG:4326: longitude first
    r = get(ogc, root="/gs", SERVICE="WFS", REQUEST="DescribeFeatureType", VERSION="1.1.0", TYPENAME=name)
    assert r.status_code == 200 and b'name="iso_a3"' in r.content
    with ogc["srv"].client() as client:  # a POSTed form, as some clients send
        r = client.post("/gs/wfs", data={"SERVICE": "WFS", "VERSION": "2.0.0", "REQUEST": "GetFeature",
                                         "TYPENAMES": name, "COUNT": "2", "OUTPUTFORMAT": "application/json"})
    assert len(as_json(r)["features"]) == 2


# --- permissions -----------------------------------------------------------------------------


def test_private_features_need_view_and_download(ogc):
    name = ogc["private"]["alternate"]
    exception(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name), 400,
              "InvalidParameterValue", "typeName")
    exception(get(ogc, service="WFS", version="2.0.0", request="DescribeFeatureType", typenames=name), 400,
              "InvalidParameterValue", "typeName")
    exception(get(ogc, root="/gs", SERVICE="WFS", VERSION="1.1.0", REQUEST="GetFeature", TYPENAME=name), 400,
              "InvalidParameterValue", "typeName")
    viewer = creds(ogc["viewer"])
    exception(get(ogc, auth=viewer, service="WFS", version="2.0.0", request="GetFeature", typenames=name,
                  outputformat="json"), 403, "NoApplicableCode")
    exception(get(ogc, auth=viewer, service="WFS", version="2.0.0", request="GetFeature", typenames=name,
                  resulttype="hits"), 403, "NoApplicableCode")
    described = get(ogc, auth=viewer, service="WFS", version="2.0.0", request="DescribeFeatureType", typenames=name)
    assert described.status_code == 200 and b'name="iso_a3"' in described.content
    with pytest.raises(ServiceException):
        service(ogc, "2.0.0", ogc["viewer"]).getfeature(typename=[name], outputFormat="application/json")
    for user in (ogc["owner"], {"username": "admin", "password": ADMIN_PASSWORD}):
        wfs = service(ogc, "2.0.0", user)
        doc = json.loads(wfs.getfeature(typename=[name], outputFormat="application/json").read())
        assert len(doc["features"]) == 177
    admin = as_json(ogc["admin"].get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0",
                                                                 "request": "GetFeature", "typenames": name,
                                                                 "outputformat": "json"}))
    assert admin["numberMatched"] == 177


# --- bad input -------------------------------------------------------------------------------


BAD = [
    ({"bbox": "1,2,3"}, "InvalidParameterValue", "bbox"),
    ({"bbox": "a,b,c,d"}, "InvalidParameterValue", "bbox"),
    ({"bbox": "10,0,0,10"}, "InvalidParameterValue", "bbox"),
    ({"bbox": "0,0,10,nan"}, "InvalidParameterValue", "bbox"),
    ({"bbox": "0,0,10,10,EPSG:0"}, "InvalidParameterValue", "bbox"),
    ({"count": "-1"}, "InvalidParameterValue", "count"),
    ({"count": "ten"}, "InvalidParameterValue", "count"),
    ({"maxfeatures": "-5"}, "InvalidParameterValue", "maxfeatures"),
    ({"startindex": "-3"}, "InvalidParameterValue", "startindex"),
    ({"propertyname": "name,nope"}, "InvalidParameterValue", "propertyName"),
    ({"outputformat": "image/png"}, "InvalidParameterValue", "outputFormat"),
    ({"srsname": "EPSG:999999"}, "InvalidParameterValue", "srsName"),
    ({"srsname": "somewhere"}, "InvalidParameterValue", "srsName"),
    ({"resulttype": "everything"}, "InvalidParameterValue", "resultType"),
    ({"sortby": "nope"}, "InvalidParameterValue", "sortBy"),
    ({"sortby": "name SIDEWAYS"}, "InvalidParameterValue", "sortBy"),
    ({"sortby": "geometry"}, "InvalidParameterValue", "sortBy"),
    ({"resourceid": "nodot"}, "InvalidParameterValue", "resourceId"),
    ({"filter": "<fes:Filter/>"}, "OptionNotSupported", "filter"),
    ({"typenames": "catalogue:no_such_layer"}, "InvalidParameterValue", "typeName"),
    ({"typenames": ""}, "MissingParameterValue", "typeNames"),
    ({"version": "9.9.9"}, "InvalidParameterValue", "version"),
    ({"request": "Transaction"}, "OperationNotSupported", "request"),
]


@pytest.mark.parametrize(("extra", "code", "locator"), BAD, ids=[f"{list(b[0])[0]}={list(b[0].values())[0]}" for b in BAD])
def test_bad_getfeature_parameters_get_exception_reports(ogc, extra, code, locator):
    params = {"service": "WFS", "version": "2.0.0", "request": "GetFeature", "typenames": ogc["countries"]["alternate"],
              **extra}
    exception(get(ogc, **params), 400, code, locator)


def test_raster_and_unknown_names_are_not_feature_types(ogc):
    exception(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=ogc["rgb"]["alternate"]),
              400, "InvalidParameterValue", "typeName")
    exception(get(ogc, service="WFS", version="2.0.0", request="DescribeFeatureType", typenames="nothing_here"),
              400, "InvalidParameterValue", "typeName")
    exception(get(ogc, service="WFS", version="2.0.0", request="DescribeFeatureType",
                  typenames=ogc["countries"]["alternate"], outputformat="text/html"), 400, "InvalidParameterValue",
              "outputFormat")
    exception(get(ogc, service="WFS", version="2.0.0"), 400, "MissingParameterValue", "request")
    r = get(ogc, service="WFS", version="1.1.0", request="GetFeature", typename="nothing_here")
    exception(r, 400, "InvalidParameterValue", "typeName")
    assert etree.fromstring(r.content).tag == "{%s}ExceptionReport" % NS["ows10"]


def test_huge_numbers_are_capped_not_errors(ogc):
    name = ogc["cities"]["alternate"]
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, outputformat="json",
                      count=str(10 ** 30), startindex=str(10 ** 30)))
    assert doc["features"] == [] and doc["numberMatched"] == len(CITY_SHAPES)
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, outputformat="json",
                      count=str(10 ** 30)))
    assert len(doc["features"]) == len(CITY_SHAPES)


# --- layers in other CRSs --------------------------------------------------------------------

# a conic projection on a sphere, centred on northern Italy: no EPSG code comes near it
CUSTOM_WKT = CRS.from_proj4("+proj=lcc +lat_1=41.123 +lat_2=47.321 +lat_0=44.25 +lon_0=10.77 +x_0=712345 +y_0=600000"
                            " +R=6371000 +units=m +no_defs").to_wkt("WKT1_GDAL")


def write_cities(folder, crs):
    """The Natural Earth cities of Europe, reprojected into ``crs``, as a Shapefile with a field
    whose name is no XML name ("pop 2020")."""
    folder.mkdir()
    europe = shapely.intersects(CITY_SHAPES, shapely.box(-10, 35, 30, 60))
    transformer = Transformer.from_crs(4326, crs, always_xy=True)
    points = shapely.transform(CITY_SHAPES[europe], lambda xy: np.column_stack(
        transformer.transform(xy[:, 0], xy[:, 1])))
    _, _, _, fields = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    ranks = np.arange(int(europe.sum()), dtype="int64") * 10
    pyogrio.raw.write(folder / f"{folder.name}.shp", shapely.to_wkb(points), field_data=[fields[0][europe], ranks],
                      fields=["name", "pop 2020"], geometry_type="Point", crs=crs, driver="ESRI Shapefile")
    return CITY_SHAPES[europe], points


@pytest.fixture(scope="module")
def projected(ogc, tmp_path_factory):
    """Two datasets uploaded for these tests: European cities in EPSG:3857 and in a CRS without
    an EPSG code."""
    root = tmp_path_factory.mktemp("wfs_crs")
    out = {}
    for key, crs in (("mercator", "EPSG:3857"), ("custom", CUSTOM_WKT)):
        lonlat, native = write_cities(root / f"wfs_{key}_cities", crs)
        out[key] = (upload_shapefile(ogc["admin"], root / f"wfs_{key}_cities"), lonlat, native)
    return out


def test_projected_layer_answers_in_its_own_crs_and_in_others(ogc, projected):
    dataset, lonlat, native = projected["mercator"]
    name = dataset["alternate"]
    wfs = service(ogc, "2.0.0")
    assert [c.code for c in wfs[name].crsOptions][:2] == [3857, 4326]
    doc = json.loads(wfs.getfeature(typename=[name], outputFormat="application/json").read())
    assert doc["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::3857"
    assert doc["features"][0]["geometry"]["coordinates"] == pytest.approx(list(shapely.get_coordinates(native[0])[0]))
    doc = json.loads(wfs.getfeature(typename=[name], srsname="EPSG:4326", outputFormat="application/json").read())
    assert "crs" not in doc
    assert doc["features"][0]["geometry"]["coordinates"] == pytest.approx(list(shapely.get_coordinates(lonlat[0])[0]))
    # a lon/lat box on a Mercator layer, and GML in the urn form (latitude first)
    expected = int(shapely.intersects(lonlat, shapely.box(0, 40, 20, 50)).sum())
    assert 0 < expected < len(lonlat)
    r = get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name,
            bbox="40,0,50,20,urn:ogc:def:crs:EPSG::4326", srsname="urn:ogc:def:crs:EPSG::4326")
    root = etree.fromstring(r.content)
    assert root.get("numberMatched") == str(expected)
    pos = root.find(".//gml:Point", NS)
    assert pos.get("srsName") == "urn:ogc:def:crs:EPSG::4326"
    lat, lon = (float(v) for v in pos.find("gml:pos", NS).text.split())
    assert -10 <= lon <= 30 and 35 <= lat <= 60 and 0 <= lon <= 20 and 40 <= lat <= 50


def test_layer_without_epsg_code(ogc, projected):
    dataset, lonlat, native = projected["custom"]
    name = dataset["alternate"]
    assert dataset["srid"] == "EPSG:404000"
    wfs = service(ogc, "1.1.0")
    assert wfs[name].crsOptions[0].code == 404000
    doc = json.loads(wfs.getfeature(typename=[name], outputFormat="application/json").read())
    assert doc["features"][0]["geometry"]["coordinates"] == pytest.approx(list(shapely.get_coordinates(native[0])[0]))
    doc = json.loads(wfs.getfeature(typename=[name], srsname="EPSG:4326", outputFormat="application/json").read())
    assert doc["features"][0]["geometry"]["coordinates"] == pytest.approx(list(shapely.get_coordinates(lonlat[0])[0]))
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, outputformat="json",
                      bbox="0,40,20,50,EPSG:4326"))
    assert doc["numberMatched"] == int(shapely.intersects(lonlat, shapely.box(0, 40, 20, 50)).sum())
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, outputformat="json",
                      srsname="EPSG:404000", count="1"))
    assert doc["features"][0]["geometry"]["coordinates"] == pytest.approx(list(shapely.get_coordinates(native[0])[0]))


def test_field_names_that_are_no_xml_names(ogc, projected):
    name = projected["mercator"][0]["alternate"]
    prefix, local = name.split(":")
    schema = get(ogc, service="WFS", version="2.0.0", request="DescribeFeatureType", typenames=name)
    root = etree.fromstring(schema.content)
    assert [e.get("name") for e in root.iterfind(".//xsd:sequence/xsd:element", NS)] == ["geometry", "name", "pop_2020"]
    doc = as_json(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name, outputformat="json",
                      propertyname="pop_2020", sortby="pop_2020 DESC", count="2"))
    values = [f["properties"] for f in doc["features"]]
    assert values[0]["pop 2020"] > values[1]["pop 2020"] and set(values[0]) == {"pop 2020"}
    gml = etree.fromstring(get(ogc, service="WFS", version="2.0.0", request="GetFeature", typenames=name,
                               count="1").content)
    feature = gml.find("wfs:member", NS)[0]
    assert feature.find(f"{{{gml.nsmap[prefix]}}}pop_2020").text == "0"


ODD = [
    {"resourceid": "x.99999999999999999999999"}, {"featureid": ",,,"}, {"typenames": "(a)(b)"},
    {"propertyname": "(name)(iso_a3)"}, {"propertyname": "catalogue:name,*"}, {"sortby": ",,"},
    {"bbox": "0,0,0,0"}, {"bbox": "-1e308,-1e308,1e308,1e308"}, {"bbox": "0,0,1,1,EPSG:404000"},
    {"bbox": "-180,-90,180,90,EPSG:32618"}, {"bbox": "1,2,3,4,EPSG:4326,extra"}, {"srsname": "EPSG:404000"},
    {"srsname": "CRS:84", "outputformat": "application/gml+xml; version=3.2"}, {"outputformat": "text/xml subtype=gml/3.1.1"},
    {"version": "2.0"}, {"version": "1.1"}, {"version": ""}, {"count": " 3 "}, {"count": "0"}, {"startindex": "1.5"},
    {"typenames": "catalogue:" + "x" * 5000}, {"typenames": "\u00e9\u00e8\u0000"}, {"resulttype": "HITS"},
]


@pytest.mark.parametrize("extra", ODD, ids=[str(list(o.items())[0])[:40] for o in ODD])
def test_odd_inputs_never_fail_the_server(ogc, extra):
    params = {"service": "WFS", "version": "2.0.0", "request": "GetFeature", "typenames": ogc["countries"]["alternate"],
              "outputformat": "json", **extra}
    r = get(ogc, **params)
    assert r.status_code == 200 or 400 <= r.status_code < 500, r.text[:500]
    if r.status_code != 200:  # a well-formed exception report
        root = etree.fromstring(r.content)
        assert root.tag.endswith("ExceptionReport") and root[0].get("exceptionCode") and root[0][0].text
