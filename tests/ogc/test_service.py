"""The OGC endpoint as a whole: its addresses, the service found from the key, the path or the
operation, case-insensitive keys, per-workspace and per-layer addresses, POSTed forms, Basic and
Bearer credentials, and exception reports for requests that name no service."""

import pytest
from lxml import etree

from tests.conftest import USER_PASSWORD, login

OWS = "{http://www.opengis.net/ows/1.1}"


def names_in(xml: bytes, tag: str) -> list[str]:
    root = etree.fromstring(xml)
    return [el.text for el in root.iter() if isinstance(el.tag, str) and etree.QName(el).localname == tag]


@pytest.mark.parametrize("path", ["/geoserver/ows", "/geoserver/wms", "/gs/ows", "/gs/wms", "/geoserver/catalogue/ows",
                                  "/gs/catalogue/wms"])
def test_every_address_answers_wms_capabilities(ogc, path):
    with ogc["srv"].client() as anon:
        r = anon.get(f"{path}?service=WMS&request=GetCapabilities&version=1.3.0")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith(("text/xml", "application/xml"))
    assert ogc["countries"]["alternate"] in names_in(r.content, "Name")
    # the operations point back at the address the request came to, absolute
    assert f'xlink:href="{ogc["srv"].url}{path}' in r.text


def test_the_service_comes_from_the_path_or_the_operation(ogc):
    with ogc["srv"].client() as anon:
        assert "WFS_Capabilities" in anon.get("/geoserver/wfs?request=GetCapabilities").text
        assert "Capabilities" in anon.get("/gs/wcs?REQUEST=GetCapabilities").text
        r = anon.get("/geoserver/ows?request=GetFeature&typenames=" + ogc["cities"]["alternate"]
                     + "&count=2&outputformat=application/json&version=2.0.0")
        assert r.status_code == 200 and len(r.json()["features"]) == 2


def test_keys_are_case_insensitive(ogc):
    with ogc["srv"].client() as anon:
        lower = anon.get("/gs/ows?service=wms&request=getcapabilities&version=1.3.0")
        upper = anon.get("/gs/ows?SERVICE=WMS&REQUEST=GetCapabilities&VERSION=1.3.0")
        mixed = anon.get("/gs/ows?Service=WMS&Request=GetCapabilities&Version=1.3.0")
    assert lower.status_code == upper.status_code == mixed.status_code == 200
    assert names_in(lower.content, "Name") == names_in(upper.content, "Name") == names_in(mixed.content, "Name")


def test_a_layer_address_lists_that_layer_only(ogc):
    name = ogc["countries"]["alternate"].split(":")[1]
    with ogc["srv"].client() as anon:
        r = anon.get(f"/geoserver/catalogue/{name}/ows?service=WMS&request=GetCapabilities")
        assert r.status_code == 200
        layers = [n for n in names_in(r.content, "Name") if n and n.startswith("catalogue:")]
        assert layers == [ogc["countries"]["alternate"]]
        # another layer through that address is not there
        r = anon.get(f"/geoserver/catalogue/{name}/ows?service=WFS&version=2.0.0&request=GetFeature"
                     f"&typenames={ogc['cities']['alternate']}&count=1")
        assert r.status_code == 400 and "ExceptionReport" in r.text


def test_the_capabilities_url_of_a_dataset_answers(ogc):
    detail = ogc["admin"].get(f"/api/v2/datasets/{ogc['countries']['pk']}").json()["dataset"]
    base = ogc["srv"].url
    for key in ("capabilities_url", "ows_url", "dataset_ows_url"):
        assert detail[key].startswith(base)
        url = detail[key] if "?" in detail[key] else detail[key] + "?service=WMS&request=GetCapabilities"
        with ogc["srv"].client() as anon:
            r = anon.get(url[len(base):])
        assert r.status_code == 200, (key, r.text[:300])
        assert detail["alternate"] in names_in(r.content, "Name")


def test_posted_forms_are_read_like_query_strings(ogc):
    with ogc["srv"].client() as anon:
        r = anon.post("/geoserver/ows", data={"SERVICE": "WFS", "VERSION": "2.0.0", "REQUEST": "GetFeature",
                                              "TYPENAMES": ogc["cities"]["alternate"], "COUNT": "3",
                                              "OUTPUTFORMAT": "application/json"})
        assert r.status_code == 200 and len(r.json()["features"]) == 3
        r = anon.post("/geoserver/ows", content=b"<GetFeature/>", headers={"content-type": "text/xml"})
        assert r.status_code == 400 and "OperationNotSupported" in r.text


def test_requests_without_a_service_get_an_exception_report(ogc):
    with ogc["srv"].client() as anon:
        r = anon.get("/geoserver/ows")
        assert r.status_code == 400 and "MissingParameterValue" in r.text
        r = anon.get("/geoserver/ows?service=WPS&request=GetCapabilities")
        assert r.status_code == 400 and "InvalidParameterValue" in r.text
        r = anon.get("/geoserver/ows?service=WMS&request=%ff%fe&version=1.3.0")
        assert 400 <= r.status_code < 500


def test_bearer_and_basic_both_open_a_private_layer(ogc):
    private = ogc["private"]["alternate"]
    owner = ogc["owner"]
    url = ("/geoserver/ows?service=WFS&version=2.0.0&request=GetFeature&count=1&outputformat=application/json"
           f"&typenames={private}")
    with ogc["srv"].client() as anon:
        assert anon.get(url).status_code == 400
        token = anon.post("/o/token/", data={"grant_type": "password", "username": owner["username"],
                                             "password": USER_PASSWORD}).json()["access_token"]
    with ogc["srv"].client(token=token) as bearer:
        assert bearer.get(url).status_code == 200
    with login(ogc["srv"], owner) as basic:
        assert basic.get(url).status_code == 200
    with ogc["srv"].client(auth=(owner["username"], "wrong")) as wrong:
        assert wrong.get(url).status_code == 401
