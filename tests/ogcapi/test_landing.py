"""The OGC APIs' landing page, conformance and OpenAPI document: what clients read first."""

from __future__ import annotations

import pytest

from tests.conftest import in_process

RECORDS = "http://www.opengis.net/spec/ogcapi-records-1/1.0/conf"


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = in_process(tmp_path_factory.mktemp("landing") / "data")
    yield server
    server.stop()


@pytest.fixture
def c(srv):
    with srv.client() as client:
        yield client


def test_landing_page_links(srv, c):
    for path in ("/ogcapi/", "/ogcapi"):
        r = c.get(path, headers={"Accept": ""})
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/json")
    body = c.get("/ogcapi/").json()
    assert body["title"] and body["description"]
    by_rel = {}
    for lk in body["links"]:
        by_rel.setdefault(lk["rel"], []).append(lk)
    root = f"{srv.url}/ogcapi"
    assert by_rel["self"][0]["type"] == "application/json"
    assert any(lk["type"] == "text/html" for lk in by_rel["alternate"])
    assert by_rel["service-desc"][0] == {**by_rel["service-desc"][0], "href": f"{root}/openapi",
                                         "type": "application/vnd.oai.openapi+json;version=3.0"}
    assert by_rel["service-doc"][0]["type"] == "text/html"
    assert by_rel["conformance"][0]["href"] == f"{root}/conformance"
    assert by_rel["data"][0]["href"] == f"{root}/collections"
    assert by_rel["http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes"][0]["href"] == f"{root}/tileMatrixSets"
    assert by_rel["describedby"][0] == {"href": f"{srv.url}/dcat/catalog", "rel": "describedby",
                                        "type": "application/ld+json", "title": "DCAT-AP catalogue"}
    # every link of the landing page leads somewhere that answers (those of parts not yet here aside)
    for lk in body["links"]:
        if lk["rel"] in ("self", "alternate", "service-desc", "service-doc", "conformance"):
            assert c.get(lk["href"]).status_code == 200, lk


def test_landing_page_as_html(c):
    for kwargs in ({"params": {"f": "html"}}, {"headers": {"Accept": "text/html"}}):
        r = c.get("/ogcapi/", **kwargs)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "/ogcapi/openapi" in r.text and "/ogcapi/collections/metadata:main" in r.text


def test_conformance(c):
    r = c.get("/ogcapi/conformance")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    classes = r.json()["conformsTo"]
    assert len(classes) == len(set(classes))
    for name in ("core", "sorting", "json", "html", "record-core", "record-collection", "searchable-catalog"):
        assert f"{RECORDS}/{name}" in classes
    assert "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core" in classes
    assert "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/landing-page" in classes
    html = c.get("/ogcapi/conformance", params={"f": "html"})
    assert html.status_code == 200 and f"{RECORDS}/core" in html.text


def test_openapi_document_is_valid(srv, c):
    from openapi_spec_validator import validate

    r = c.get("/ogcapi/openapi")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/vnd.oai.openapi+json")
    doc = r.json()
    validate(doc)
    assert doc["openapi"].startswith("3.0")
    assert doc["servers"][0]["url"] == f"{srv.url}/ogcapi"
    for path in ("/", "/conformance", "/openapi", "/collections/metadata:main/items",
                 "/collections/metadata:main/items/{recordId}", "/collections/metadata:main/queryables"):
        assert path in doc["paths"], path
    names = {p["name"] for p in doc["paths"]["/collections/metadata:main/items"]["get"]["parameters"]}
    assert {"q", "bbox", "datetime", "type", "ids", "externalIds", "sortby", "filter", "filter-lang",
            "limit", "offset", "facets"} <= names


def test_openapi_as_a_page(c):
    r = c.get("/ogcapi/openapi", params={"f": "html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "/collections/metadata:main/items" in r.text and "<script" not in r.text


@pytest.mark.parametrize("path", ["/ogcapi/", "/ogcapi/conformance", "/ogcapi/openapi"])
def test_unknown_format_is_400(c, path):
    r = c.get(path, params={"f": "pdf"})
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"code", "description"} and "f" in body["description"]


def test_unknown_path_is_404_in_the_standards_shape(c):
    r = c.get("/ogcapi/no/such/thing")
    assert r.status_code == 404
    assert set(r.json()) == {"code", "description"}
