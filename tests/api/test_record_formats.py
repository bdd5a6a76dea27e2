"""Metadata records at /catalogue/csw (the metadata links of every resource): ISO 19139 read back
by OWSLib's MD_Metadata and by this catalogue's own ISO upload, Dublin Core read by OWSLib's
CSW client, Atom; records of private resources only for those who may see them; every bad
request an OWS exception report."""

from __future__ import annotations

from urllib.parse import quote

import pytest
import requests
from lxml import etree
from owslib.catalogue.csw2 import CatalogueServiceWeb
from owslib.iso import MD_Metadata
from owslib.util import ServiceException

from tests.api.test_documents import pdf
from tests.api.test_links import build_site, by_name, close_site, wait_for
from tests.conftest import login

GMD = "http://www.isotc211.org/2005/gmd"
CSW = "http://www.opengis.net/cat/csw/2.0.2"
ATOM = "http://www.w3.org/2005/Atom"
OWS = "http://www.opengis.net/ows"
NS = {"gmd": GMD, "gco": "http://www.isotc211.org/2005/gco", "csw": CSW, "dc": "http://purl.org/dc/elements/1.1/",
      "dct": "http://purl.org/dc/terms/", "ows": OWS, "atom": ATOM, "georss": "http://www.georss.org/georss"}
ANONYMOUS_GROUP, MEMBERS_GROUP = 1, 2
ABSTRACT_HTML = "<p>Country borders from <b>Natural Earth</b> &amp; friends.</p>"
ABSTRACT = "Country borders from Natural Earth & friends."  # records hold text


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    built = build_site(tmp_path_factory, "records", real_server=True)  # OWSLib's CSW client connects itself
    admin, pk = built["admin"], built["vector"]["pk"]
    r = admin.patch(f"/api/v2/datasets/{pk}", json={
        "title": "World countries", "abstract": ABSTRACT_HTML, "keywords": ["borders", "countries"],
        "category": {"identifier": "boundaries"}, "license": "cc-by", "purpose": "Testing the records",
        "data_quality_statement": "Generalised at 1:110m.", "constraints_other": "Cite Natural Earth.",
        "temporal_extent_start": "2020-01-01T00:00:00Z", "temporal_extent_end": "2021-01-01T00:00:00Z",
        "attribution": "Natural Earth"})
    assert r.status_code == 200, r.text
    built["vector"] = r.json()["dataset"]
    yield built
    close_site(built)


def record(client, uuid: str, schema: str, element_set: str = "full"):
    return client.get("/catalogue/csw", params={"service": "CSW", "version": "2.0.2", "request": "GetRecordById",
                                                "id": uuid, "elementsetname": element_set, "outputschema": schema})


def first_record(response) -> etree._Element:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(("application/xml", "text/xml"))
    root = etree.fromstring(response.content)
    assert root.tag == f"{{{CSW}}}GetRecordByIdResponse"
    return root[0]


def exception(response, status: int, code: str, locator: str | None = None) -> None:
    assert response.status_code == status, response.text
    root = etree.fromstring(response.content)
    assert root.tag == f"{{{OWS}}}ExceptionReport"
    item = root.find("ows:Exception", NS)
    assert item.get("exceptionCode") == code and item.findtext("ows:ExceptionText", namespaces=NS)
    if locator is not None:
        assert item.get("locator") == locator


def test_the_iso_link_answers_a_record_owslib_reads(site):
    vector = site["vector"]
    with site["srv"].client() as anon:
        r = anon.get(by_name(vector)["ISO"]["url"])
    md = MD_Metadata(first_record(r))
    assert md.identifier == vector["uuid"] and md.hierarchy == "dataset" and md.languagecode == "eng"
    ident = md.identification[0]
    assert ident.title == "World countries" and ident.abstract == ABSTRACT
    assert {k.name for group in ident.keywords for k in group.keywords} >= {"borders", "countries"}
    assert ident.topiccategory == ["boundaries"]
    west, south, east, north = vector["extent"]["coords"]
    box = ident.bbox
    assert [float(box.minx), float(box.miny), float(box.maxx), float(box.maxy)] == pytest.approx(
        [west, south, east, north])
    assert ident.temporalextent_start.startswith("2020-01-01") and ident.temporalextent_end.startswith("2021-01-01")
    assert "cc-by" in ident.uselimitation and "Cite Natural Earth." in ident.otherconstraints
    assert md.referencesystem.code == "EPSG:4326"
    assert md.contact[0].name == "admin" and md.dataquality.lineage == "Generalised at 1:110m."
    online = {o.protocol: o.url for o in md.distribution.online}
    assert online["OGC:WMS"] == online["OGC:WFS"] == f"{site['srv'].url}/geoserver/ows"
    assert vector["download_url"] in {o.url for o in md.distribution.online}


def test_an_iso_record_uploaded_again_gives_the_same_fields(site):
    """The record is a document the catalogue's own ISO upload reads back."""
    vector, raster = site["vector"], site["raster"]
    with site["srv"].client() as anon:
        element = first_record(record(anon, vector["uuid"], GMD))
    xml = etree.tostring(element, xml_declaration=True, encoding="UTF-8")
    admin = site["admin"]
    r = admin.put(f"/api/v2/datasets/{raster['pk']}/metadata", files={"metadata_file": ("r.xml", xml, "text/xml")})
    assert r.status_code == 200, r.text
    copy = admin.get(f"/api/v2/datasets/{raster['pk']}").json()["dataset"]
    assert (copy["title"], copy["abstract"], copy["purpose"]) == ("World countries", ABSTRACT, "Testing the records")
    assert copy["extent"]["coords"] == raster["extent"]["coords"]  # a dataset keeps the extent of its data
    assert {"borders", "countries"} <= {k["name"] for k in copy["keywords"]}
    assert copy["category"]["identifier"] == "boundaries"
    assert copy["temporal_extent_start"].startswith("2020-01-01")


def test_owslib_csw_client_reads_dublin_core_and_iso(site):
    vector = site["vector"]
    csw = CatalogueServiceWeb(f"{site['srv'].url}/catalogue/csw")  # reads GetCapabilities first
    assert csw.identification.type == "CSW" and "GetRecordById" in [op.name for op in csw.operations]
    csw.getrecordbyid([vector["uuid"]])  # Dublin Core, summary
    summary = csw.records[vector["uuid"]]
    assert summary.title == "World countries" and summary.type == "dataset" and summary.abstract == ABSTRACT
    csw.getrecordbyid([vector["uuid"]], esn="full")
    full = csw.records[vector["uuid"]]
    assert {"borders", "countries", "boundaries"} <= set(full.subjects) and full.creator == "admin"
    assert "cc-by" in full.rights
    west, south, east, north = vector["extent"]["coords"]
    assert [float(full.bbox.minx), float(full.bbox.miny), float(full.bbox.maxx), float(full.bbox.maxy)] == (
        pytest.approx([west, south, east, north]))
    schemes = {ref["scheme"]: ref["url"] for ref in full.references}
    assert schemes["OGC:WMS"] == f"{site['srv'].url}/geoserver/ows" and schemes["html"] == vector["detail_url"]
    csw.getrecordbyid([vector["uuid"]], esn="brief")
    assert csw.records[vector["uuid"]].title == "World countries"
    csw.getrecordbyid([vector["uuid"]], outputschema=GMD)
    assert csw.records[vector["uuid"]].identification[0].title == "World countries"


def test_owslib_with_basic_auth_reads_a_private_record(site):
    private, owner = site["private"], site["owner"]
    csw = CatalogueServiceWeb(f"{site['srv'].url}/catalogue/csw", username=owner["username"],
                              password=owner["password"])
    csw.getrecordbyid([private["uuid"]], outputschema=GMD)
    assert csw.records[private["uuid"]].identification[0].title == "Private <cities> & towns"
    anonymous = CatalogueServiceWeb(f"{site['srv'].url}/catalogue/csw")
    with pytest.raises((ServiceException, requests.HTTPError)):  # a 404
        anonymous.getrecordbyid([private["uuid"]], outputschema=GMD)


def test_the_atom_entry(site):
    vector = site["vector"]
    with site["srv"].client() as anon:
        entry = first_record(anon.get(by_name(vector)["Atom"]["url"]))
    assert entry.tag == f"{{{ATOM}}}entry"
    assert entry.findtext("atom:title", namespaces=NS) == "World countries"
    assert entry.findtext("atom:id", namespaces=NS) == f"urn:uuid:{vector['uuid']}"
    assert entry.findtext("atom:summary", namespaces=NS) == ABSTRACT
    alternate = entry.find("atom:link[@rel='alternate']", NS)
    assert alternate.get("href") == vector["detail_url"] and alternate.get("type") == "text/html"
    enclosures = {link.get("href") for link in entry.findall("atom:link[@rel='enclosure']", NS)}
    assert vector["download_url"] in enclosures
    south, west, north, east = map(float, entry.findtext("georss:box", namespaces=NS).split())
    assert [west, south, east, north] == pytest.approx(vector["extent"]["coords"])


def test_who_may_read_the_records_of_a_private_dataset(site):
    private = site["private"]
    for schema in (GMD, CSW, ATOM):
        statuses = {who: record(c, private["uuid"], schema).status_code for who, c in site["clients"].items()}
        assert statuses == {"anonymous": 404, "other": 404, "viewer": 200, "owner": 200, "admin": 200}, schema
    exception(record(site["clients"]["anonymous"], private["uuid"], GMD), 404, "InvalidParameterValue", "id")
    # several ids: only the visible ones come back
    both = ",".join((site["vector"]["uuid"], private["uuid"]))
    root = etree.fromstring(record(site["clients"]["anonymous"], both, CSW, "brief").content)
    assert [r.findtext("dc:identifier", namespaces=NS) for r in root] == [site["vector"]["uuid"]]
    root = etree.fromstring(record(site["clients"]["owner"], both, CSW, "brief").content)
    assert len(root) == 2


def test_a_private_document_record(site):
    with login(site["srv"], site["owner"]) as c:
        r = c.post("/api/v2/documents", files={"doc_file": ("report.pdf", pdf(), "application/octet-stream")},
                   data={"title": "Annual report"})
        doc = r.json()["document"]
        wait_for(c, c.put(f"/api/v2/resources/{doc['pk']}/permissions", json={
            "groups": [{"id": ANONYMOUS_GROUP, "permissions": "none"}, {"id": MEMBERS_GROUP, "permissions": "none"}]}))
        md = MD_Metadata(first_record(c.get(by_name(doc)["ISO"]["url"])))
        assert md.identification[0].title == "Annual report" and md.hierarchy == "nonGeographicDataset"
        assert doc["download_url"] in {o.url for o in md.distribution.online}
        dc = first_record(record(c, doc["uuid"], CSW))
        assert dc.findtext("dc:type", namespaces=NS) == "document"
        assert dc.findtext("dc:format", namespaces=NS) == "application/pdf"
    with site["srv"].client() as anon:
        exception(record(anon, doc["uuid"], GMD), 404, "InvalidParameterValue", "id")


def test_bad_requests_get_exception_reports(site):
    anon, uuid = site["clients"]["anonymous"], site["vector"]["uuid"]
    good = {"service": "CSW", "version": "2.0.2", "request": "GetRecordById", "id": uuid}
    cases = [
        ({"service": None}, "MissingParameterValue", "service"),
        ({"service": "WMS"}, "InvalidParameterValue", "service"),
        ({"request": None}, "MissingParameterValue", "request"),
        ({"request": "Harvest"}, "OperationNotSupported", "request"),
        ({"version": None}, "MissingParameterValue", "version"),
        ({"version": "3.0.0"}, "VersionNegotiationFailed", "version"),
        ({"id": None}, "MissingParameterValue", "id"),
        ({"id": " , "}, "MissingParameterValue", "id"),
        ({"id": ",".join([uuid] * 51)}, "InvalidParameterValue", "id"),
        ({"id": "x" * 500}, "InvalidParameterValue", "id"),
        ({"outputschema": "http://www.opengis.net/cat/csw/3.0"}, "InvalidParameterValue", "outputschema"),
        ({"elementsetname": "everything"}, "InvalidParameterValue", "elementsetname"),
        ({"outputformat": "application/json"}, "InvalidParameterValue", "outputformat"),
    ]
    for change, code, locator in cases:
        params = {k: v for k, v in {**good, **change}.items() if v is not None}
        exception(anon.get("/catalogue/csw", params=params), 400, code, locator)
    exception(anon.get("/catalogue/csw?" + "a" * 9000), 400, "NoApplicableCode")
    # keys of other operations and cache-busters are left out, as other catalogues do
    assert anon.get("/catalogue/csw", params={**good, "maxrecords": "-1", "_": "1700000000"}).status_code == 200
    # what a client sent is quoted in the report even when XML cannot hold it
    exception(anon.get("/catalogue/csw", params={**good, "request": "Get\x01Records"}), 400, "OperationNotSupported",
              "request")
    exception(anon.get("/catalogue/csw", params={**good, "id": "00000000-0000-0000-0000-000000000000"}), 404,
              "InvalidParameterValue", "id")
    # keys and the service name in any case, as OGC clients send them
    r = anon.get(f"/catalogue/csw?SERVICE=csw&VERSION=2.0.2&REQUEST=GetRecordById&ID={uuid}"
                 f"&OUTPUTSCHEMA={quote(GMD, safe='')}&ELEMENTSETNAME=FULL&OutputFormat=text/xml")
    assert r.headers["content-type"].startswith("text/xml") and MD_Metadata(first_record(r)).identifier == uuid
    # the same key-value pairs may come in a form POST
    assert MD_Metadata(first_record(anon.post("/catalogue/csw", data={**good, "outputschema": GMD}))).identifier == uuid


def test_a_title_with_control_characters_still_gives_a_record(site):
    """Titles may hold characters XML cannot (a stray \x01 pasted from elsewhere): the record
    replaces them instead of failing."""
    owner = site["clients"]["owner"]
    r = owner.post("/api/v2/resources/", json={"resource_type": "document", "title": "Survey \x01 notes"})
    assert r.status_code == 201, r.text
    uuid = r.json()["resource"]["uuid"]
    for schema in (GMD, "http://www.opengis.net/cat/csw/2.0.2", "http://www.w3.org/2005/Atom"):
        got = owner.get("/catalogue/csw", params={"service": "CSW", "version": "2.0.2", "request": "GetRecordById",
                                                  "id": uuid, "outputschema": schema})
        assert got.status_code == 200 and "Survey \ufffd notes" in got.text, got.text[:300]
