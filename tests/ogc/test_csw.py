"""CSW 2.0.2 at /catalogue/csw, read by OWSLib's client (which opens its own connections: a real
server process) and by plain HTTP: GetCapabilities, DescribeRecord, GetRecords by KVP (CQL_TEXT,
FILTER) and by POST (OGC Filter 1.1, as OWSLib's getrecords2 sends it), paging, sorting, the
three element sets, Dublin Core and ISO output; records the caller may not view never counted."""

from __future__ import annotations

import pytest
from lxml import etree
from owslib import fes
from owslib.catalogue.csw2 import CatalogueServiceWeb

from tests.api.test_documents import pdf
from tests.conftest import ADMIN_PASSWORD, Server, insert_resource, login, make_group, make_user

CSW = "http://www.opengis.net/cat/csw/2.0.2"
GMD = "http://www.isotc211.org/2005/gmd"
OWS = "http://www.opengis.net/ows"
NS = {"csw": CSW, "dc": "http://purl.org/dc/elements/1.1/", "dct": "http://purl.org/dc/terms/", "ows": OWS,
      "gmd": GMD, "xs": "http://www.w3.org/2001/XMLSchema", "ogc": "http://www.opengis.net/ogc"}
ANONYMOUS_GROUP = 1
VIEW = "view_resourcebase"
# (title, lon/lat box, public, last_updated, keywords); every title holds "zebrafish" but the last
RECORDS = {
    "north": ("Zebrafish habitats north", (10, 50, 20, 60), True, "2025-03-01T10:00:00.000000Z", ["fish"]),
    "south": ("Zebrafish survey south", (10, -40, 20, -30), True, "2025-05-01T10:00:00.000000Z", []),
    "private": ("Zebrafish private study", (12, 52, 18, 58), False, "2025-07-01T10:00:00.000000Z", []),
    "east1": ("Zebrafish east one", (100, 0, 110, 10), True, "2025-01-01T10:00:00.000000Z", []),
    "east2": ("Zebrafish east two", (100, 0, 110, 10), True, "2025-02-01T10:00:00.000000Z", []),
    "east3": ("Zebrafish east three", (100, 0, 110, 10), True, "2025-04-01T10:00:00.000000Z", []),
    "pacific": ("Zebrafish across the date line", (170, -20, -170, -10), True, "2025-06-01T10:00:00.000000Z", []),
    "reef": ("Coral reefs", (140, -20, 150, -10), True, "2025-08-01T10:00:00.000000Z", ["zebrafish"]),
}
PUBLIC_ZEBRAFISH = {"north", "south", "east1", "east2", "east3", "pacific", "reef"}  # reef by its keyword


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("csw") / "cat")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, member = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin)
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]]})
    assert r.status_code < 300, r.text
    uuids, group_id = {}, group["group"]["pk"] if "group" in group else group["pk"]
    for key, (title, (x0, y0, x1, y1), public, changed, keywords) in RECORDS.items():
        grants = [(None, ANONYMOUS_GROUP, VIEW)] if public else [(None, group_id, VIEW)]
        rid = insert_resource(srv, owner["pk"], title, grants, keywords=keywords, ll_x0=x0, ll_y0=y0, ll_x1=x1,
                              ll_y1=y1, last_updated=changed, advertised=1,
                              resource_type="dataset" if key != "reef" else "map",
                              abstract="A <b>study</b> of fish." if key == "north" else "")
        uuids[key] = admin.get(f"/api/v2/resources/{rid}").json()["resource"]["uuid"]
    with login(srv, owner) as c:  # a document made through the API (no extent: the whole world)
        r = c.post("/api/v2/documents", files={"doc_file": ("report.pdf", pdf(), "application/octet-stream")},
                   data={"title": "Annual quagga report"})
        assert r.status_code == 201, r.text
        uuids["document"] = r.json()["document"]["uuid"]
    yield {"srv": srv, "url": f"{srv.url}/catalogue/csw", "admin": admin, "owner": owner, "other": other,
           "member": member, "uuids": uuids}
    admin.close()
    srv.stop()


def keys_of(site, identifiers) -> set[str]:
    by_uuid = {v: k for k, v in site["uuids"].items()}
    return {by_uuid.get(i, i) for i in identifiers}


def owslib(site, who: str | None = None) -> CatalogueServiceWeb:
    if who is None:
        return CatalogueServiceWeb(site["url"])
    if who == "admin":
        return CatalogueServiceWeb(site["url"], username="admin", password=ADMIN_PASSWORD)
    user = site[who]
    return CatalogueServiceWeb(site["url"], username=user["username"], password=user["password"])


TEXT = fes.PropertyIsLike("csw:AnyText", "%zebrafish%")


def test_owslib_reads_the_capabilities(site):
    csw = owslib(site)
    assert csw.identification.type == "CSW" and csw.identification.version == "2.0.2"
    names = [op.name for op in csw.operations]
    assert {"GetCapabilities", "DescribeRecord", "GetRecords", "GetRecordById"} <= set(names)
    getrecords = csw.get_operation_by_name("GetRecords")
    assert {m["type"] for m in getrecords.methods} == {"Get", "Post"}
    assert all(m["url"] == site["url"] for m in getrecords.methods)
    assert set(getrecords.parameters["typeNames"]["values"]) == {"csw:Record", "gmd:MD_Metadata"}
    assert set(getrecords.parameters["CONSTRAINTLANGUAGE"]["values"]) == {"FILTER", "CQL_TEXT"}
    assert set(getrecords.parameters["resultType"]["values"]) == {"hits", "results", "validate"}
    assert set(getrecords.parameters["outputSchema"]["values"]) >= {CSW, GMD}
    queryables = set(getrecords.constraints[0].values) if getrecords.constraints else set()
    assert {"csw:AnyText", "dc:title", "dc:subject", "dc:type", "ows:BoundingBox", "dct:modified",
            "dc:identifier", "dct:abstract", "dc:format"} <= queryables
    assert csw.filters.spatial_operators == ["BBOX"]
    assert "Like" in csw.filters.scalar_comparison_operators
    root = etree.fromstring(site["admin"].get(site["url"], params={"service": "CSW", "request": "GetCapabilities"})
                            .content)
    assert {e.tag.split("}")[1] for e in root.find("ogc:Filter_Capabilities/ogc:Scalar_Capabilities"
                                                   "/ogc:LogicalOperators", NS).getparent()} >= {"LogicalOperators"}


@pytest.mark.parametrize("who, expected", [
    (None, {"north"}), ("other", {"north"}), ("owner", {"north", "private"}), ("member", {"north", "private"}),
    ("admin", {"north", "private"})])
def test_text_and_box_give_exactly_the_visible_records(site, who, expected):
    csw = owslib(site, who)
    csw.getrecords2([fes.And([TEXT, fes.BBox([5, 45, 25, 65])])], esn="full", maxrecords=50)
    assert keys_of(site, csw.records) == expected
    assert csw.results["matches"] == csw.results["returned"] == len(expected) and csw.results["nextrecord"] == 0
    north = csw.records[site["uuids"]["north"]]
    assert north.title == "Zebrafish habitats north" and north.identifier == site["uuids"]["north"]
    box = north.bbox
    assert [float(box.minx), float(box.miny), float(box.maxx), float(box.maxy)] == [10, 50, 20, 60]
    # hits: the same count, no records
    csw.getrecords2([fes.And([TEXT, fes.BBox([5, 45, 25, 65])])], resulttype="hits")
    assert csw.results["matches"] == len(expected) and csw.results["returned"] == 0 and not csw.records


@pytest.mark.parametrize("box, crs", [
    ([5, 45, 25, 65], None), ([5, 45, 25, 65], "EPSG:4326"), ([5, 45, 25, 65], "urn:ogc:def:crs:OGC:1.3:CRS84"),
    ([45, 5, 65, 25], "urn:ogc:def:crs:EPSG::4326"), ([45, 5, 65, 25], "http://www.opengis.net/def/crs/EPSG/0/4326")])
def test_the_axis_order_of_each_crs(site, box, crs):
    csw = owslib(site, "owner")
    csw.getrecords2([fes.And([TEXT, fes.BBox(box, crs)])], maxrecords=50)
    assert keys_of(site, csw.records) == {"north", "private"}


def test_a_box_across_the_antimeridian(site):
    csw = owslib(site)
    csw.getrecords2([fes.And([TEXT, fes.BBox([175, -25, -175, -5])])], maxrecords=50)
    assert keys_of(site, csw.records) == {"pacific"}
    csw.getrecords2([fes.And([TEXT, fes.BBox([-179, -25, -175, -5])])], maxrecords=50)
    assert keys_of(site, csw.records) == {"pacific"}


def test_paging_through_sorted_records(site):
    csw = owslib(site)
    titles, position = [], 1
    for _ in range(10):
        csw.getrecords2([TEXT], sortby=fes.SortBy([fes.SortProperty("dc:title", "ASC")]), startposition=position,
                        maxrecords=3, esn="brief")
        assert csw.results["matches"] == len(PUBLIC_ZEBRAFISH)
        titles += [r.title for r in csw.records.values()]
        position = csw.results["nextrecord"]
        if position == 0:
            break
    assert titles == sorted((RECORDS[k][0] for k in PUBLIC_ZEBRAFISH), key=str.lower)
    csw.getrecords2([TEXT], sortby=fes.SortBy([fes.SortProperty("dct:modified", "DESC")]), maxrecords=2)
    assert list(keys_of(site, [r for r in csw.records])) and [csw.records[u].title for u in csw.records] == [
        "Coral reefs", "Zebrafish across the date line"]
    # past the end: no records, the count still
    csw.getrecords2([TEXT], startposition=50, maxrecords=5)
    assert csw.results["matches"] == len(PUBLIC_ZEBRAFISH) and csw.results["returned"] == 0
    assert csw.results["nextrecord"] == 0


def test_element_sets_and_schemas(site):
    csw, uuid = owslib(site), site["uuids"]["north"]
    only_north = [fes.PropertyIsEqualTo("dc:identifier", uuid)]
    csw.getrecords2(only_north, esn="brief")
    brief = csw.records[uuid]
    assert brief.title == "Zebrafish habitats north" and brief.type == "dataset" and brief.abstract is None
    csw.getrecords2(only_north, esn="summary")
    summary = csw.records[uuid]
    assert summary.abstract == "A study of fish." and "fish" in summary.subjects and summary.creator is None
    csw.getrecords2(only_north, esn="full")
    full = csw.records[uuid]
    assert full.creator and full.modified.startswith("2025-03-01") and full.bbox is not None
    csw.getrecords2(only_north, outputschema=GMD, esn="full")
    md = csw.records[uuid]
    ident = md.identification[0]
    assert md.identifier == uuid and ident.title == "Zebrafish habitats north"
    assert [float(ident.bbox.minx), float(ident.bbox.miny), float(ident.bbox.maxx), float(ident.bbox.maxy)] == [
        10, 50, 20, 60]
    csw.getrecords2(only_north, typenames="gmd:MD_Metadata", outputschema=GMD)
    assert list(csw.records) == [uuid]
    # the record is the one GetRecordById writes
    with site["srv"].client() as anon:
        by_id = etree.fromstring(anon.get(site["url"], params={
            "service": "CSW", "version": "2.0.2", "request": "GetRecordById", "id": uuid,
            "elementsetname": "full"}).content)[0]
        found = etree.fromstring(anon.get(site["url"], params={
            "service": "CSW", "version": "2.0.2", "request": "GetRecords", "resultType": "results",
            "typeNames": "csw:Record", "elementSetName": "full", "constraintLanguage": "CQL_TEXT",
            "constraint": f"dc:identifier = '{uuid}'"}).content).find("csw:SearchResults", NS)[0]
    assert bare(by_id) == bare(found)


def bare(element: etree._Element) -> bytes:
    """The element without the whitespace that indents it."""
    for item in element.iter():
        item.tail = None
        if item.text is not None and not item.text.strip():
            item.text = None
    return etree.tostring(element)


def kvp(client, url, cql: str | None = None, **params):
    asked = {"service": "CSW", "version": "2.0.2", "request": "GetRecords", "typeNames": "csw:Record",
             "resultType": "results", "maxRecords": "50", "elementSetName": "brief", **params}
    if cql is not None:
        asked.update(constraintLanguage="CQL_TEXT", constraint=cql)
    r = client.get(url, params=asked)
    assert r.status_code == 200, r.text
    results = etree.fromstring(r.content).find("csw:SearchResults", NS)
    return int(results.get("numberOfRecordsMatched")), [e.findtext("dc:identifier", namespaces=NS) for e in results]


@pytest.mark.parametrize("cql, expected", [
    ("AnyText LIKE '%zebrafish%'", PUBLIC_ZEBRAFISH),
    ("csw:AnyText ILIKE '%ZEBRA%'", PUBLIC_ZEBRAFISH),
    ("AnyText LIKE '%of fish%'", {"north"}),  # the abstract, as text
    ("dc:title = 'Zebrafish survey south'", {"south"}),
    ("dc:title = 'zebrafish survey south'", set()),
    ("Title LIKE 'Zebrafish east%'", {"east1", "east2", "east3"}),
    ("Title LIKE 'Zebrafish east t__'", {"east2"}),
    ("BBOX(ows:BoundingBox, 5, 45, 25, 65) AND AnyText LIKE '%zebrafish%'", {"north"}),
    ("BBOX(ows:BoundingBox, 45, 5, 65, 25, 'urn:ogc:def:crs:EPSG::4326') AND AnyText LIKE '%zebrafish%'", {"north"}),
    ("dc:subject = 'fish'", {"north"}),
    ("dc:subject = 'zebrafish' OR dc:title = 'Zebrafish east one'", {"reef", "east1"}),
    ("dc:type = 'map'", {"reef"}),
    ("dc:type = 'document'", {"document"}),
    ("dc:type = 'document' AND dc:format = 'application/pdf'", {"document"}),
    ("dct:modified >= '2025-05-01' AND AnyText LIKE '%zebrafish%'", {"south", "pacific", "reef"}),
    ("dct:modified > '2025-05-01' AND dct:modified < '2025-08-01'", {"pacific"}),
    ("dct:modified = '2025-04-01'", {"east3"}),
    ("dct:modified BETWEEN '2025-01-01' AND '2025-02-01'", {"east1", "east2"}),
    ("AnyText LIKE '%zebrafish%' AND NOT (Title LIKE '%east%' OR Title LIKE '%south%')", {"north", "pacific", "reef"}),
    ("dct:abstract LIKE '%study%'", {"north"}),
])
def test_cql_constraints(site, cql, expected):
    with site["srv"].client() as anon:
        total, found = kvp(anon, site["url"], cql)
    assert keys_of(site, found) == expected and total == len(expected)


def test_the_private_record_by_kvp_and_cql(site):
    cql = "AnyText LIKE '%private%'"
    with site["srv"].client() as anon:
        assert kvp(anon, site["url"], cql) == (0, [])
    for who in ("owner", "member"):
        with login(site["srv"], site[who]) as c:
            assert kvp(c, site["url"], cql)[1] == [site["uuids"]["private"]]
    with login(site["srv"], site["other"]) as c:
        assert kvp(c, site["url"], cql) == (0, [])


def test_a_filter_in_kvp(site):
    flt = ('<ogc:Filter xmlns:ogc="http://www.opengis.net/ogc" xmlns:gml="http://www.opengis.net/gml"><ogc:And>'
           '<ogc:PropertyIsLike wildCard="*" singleChar="?" escapeChar="!"><ogc:PropertyName>Title</ogc:PropertyName>'
           '<ogc:Literal>*east t*</ogc:Literal></ogc:PropertyIsLike>'
           '<ogc:Not><ogc:PropertyIsEqualTo matchCase="false"><ogc:PropertyName>dc:title</ogc:PropertyName>'
           '<ogc:Literal>ZEBRAFISH EAST TWO</ogc:Literal></ogc:PropertyIsEqualTo></ogc:Not>'
           '<ogc:BBOX><ogc:PropertyName>ows:BoundingBox</ogc:PropertyName><gml:Envelope srsName="EPSG:4326">'
           '<gml:lowerCorner>90 -5</gml:lowerCorner><gml:upperCorner>120 15</gml:upperCorner></gml:Envelope>'
           '</ogc:BBOX></ogc:And></ogc:Filter>')
    with site["srv"].client() as anon:
        total, found = kvp(anon, site["url"], constraintLanguage="FILTER", constraint=flt)
    assert keys_of(site, found) == {"east3"} and total == 1


def test_hits_validate_and_zero_records(site):
    with site["srv"].client() as anon:
        r = anon.get(site["url"], params={"service": "CSW", "version": "2.0.2", "request": "GetRecords",
                                          "typeNames": "csw:Record", "constraintLanguage": "CQL_TEXT",
                                          "constraint": "AnyText LIKE '%zebrafish%'"})  # resultType: hits
        results = etree.fromstring(r.content).find("csw:SearchResults", NS)
        assert results.get("numberOfRecordsMatched") == str(len(PUBLIC_ZEBRAFISH))
        assert results.get("numberOfRecordsReturned") == "0" and len(results) == 0
        total, found = kvp(anon, site["url"], "AnyText LIKE '%zebrafish%'", maxRecords="0")
        assert total == len(PUBLIC_ZEBRAFISH) and found == []
        r = anon.get(site["url"], params={"service": "CSW", "version": "2.0.2", "request": "GetRecords",
                                          "typeNames": "csw:Record", "resultType": "validate"})
        root = etree.fromstring(r.content)
        assert root.tag == f"{{{CSW}}}Acknowledgement" and root.find("csw:EchoedRequest/csw:GetRecords", NS) is not None


def test_describe_record(site):
    csw = owslib(site)
    csw.describerecord("csw:Record")
    root = etree.fromstring(csw.response)
    assert root.tag == f"{{{CSW}}}DescribeRecordResponse"
    components = root.findall("csw:SchemaComponent", NS)
    assert [c.get("targetNamespace") for c in components] == [CSW]
    etree.XMLSchema(components[0].find("xs:schema", NS))  # a schema that compiles
    assert {e.get("name") for e in components[0].findall("xs:schema/xs:element", NS)} >= {"Record", "BriefRecord"}
    with site["srv"].client() as anon:
        r = anon.get(site["url"], params={"service": "CSW", "version": "2.0.2", "request": "DescribeRecord",
                                          "typeName": "gmd:MD_Metadata"})
        components = etree.fromstring(r.content).findall("csw:SchemaComponent", NS)
        assert [c.get("targetNamespace") for c in components] == [GMD]
        etree.XMLSchema(components[0].find("xs:schema", NS))
        r = anon.get(site["url"], params={"service": "CSW", "version": "2.0.2", "request": "DescribeRecord"})
        assert len(etree.fromstring(r.content).findall("csw:SchemaComponent", NS)) == 2


def test_a_session_cookie_counts_for_post_without_a_csrf_token(site):
    body = (f'<csw:GetRecords xmlns:csw="{CSW}" xmlns:ogc="http://www.opengis.net/ogc" service="CSW" '
            'version="2.0.2" resultType="hits"><csw:Query typeNames="csw:Record"><csw:Constraint version="1.1.0">'
            "<csw:CqlText>AnyText LIKE '%private%'</csw:CqlText></csw:Constraint></csw:Query></csw:GetRecords>")
    owner = site["owner"]
    with site["srv"].client() as c:
        r = c.post("/account/login/", json={"username": owner["username"], "password": owner["password"]})
        assert r.status_code == 200, r.text
        r = c.post("/catalogue/csw", content=body, headers={"Content-Type": "application/xml"})
        assert r.status_code == 200, r.text
        assert etree.fromstring(r.content).find("csw:SearchResults", NS).get("numberOfRecordsMatched") == "1"
    with site["srv"].client() as anon:
        r = anon.post("/catalogue/csw", content=body, headers={"Content-Type": "application/xml"})
        assert etree.fromstring(r.content).find("csw:SearchResults", NS).get("numberOfRecordsMatched") == "0"
        # key-value pairs in a form work as well
        r = anon.post("/catalogue/csw", data={"service": "CSW", "version": "2.0.2", "request": "GetRecords",
                                              "typenames": "csw:Record", "constraintlanguage": "CQL_TEXT",
                                              "constraint": "AnyText LIKE '%zebrafish%'"})
        assert etree.fromstring(r.content).find("csw:SearchResults", NS).get("numberOfRecordsMatched") == str(
            len(PUBLIC_ZEBRAFISH))


def test_a_bearer_token_counts(site):
    member = site["member"]
    with site["srv"].client() as c:
        r = c.post("/o/token/", data={"grant_type": "password", "username": member["username"],
                                      "password": member["password"]})
        assert r.status_code == 200, r.text
    with site["srv"].client(token=r.json()["access_token"]) as c:
        assert kvp(c, site["url"], "AnyText LIKE '%private%'")[1] == [site["uuids"]["private"]]
        r = c.get(site["url"], params={"service": "CSW", "version": "2.0.2", "request": "GetRecordById",
                                       "id": site["uuids"]["private"]})
        assert r.status_code == 200
