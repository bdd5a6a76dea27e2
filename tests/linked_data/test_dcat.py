"""DCAT-AP 3 of the catalogue (/dcat/catalog) and of each resource (/dcat/resources/{uuid}), as
portals harvest it: JSON-LD and Turtle that rdflib reads alike, valid against the DCAT-AP 3.0.0
SHACL shapes (tests/data/dcat-ap/), every resource kind with and without its optional fields;
only what the caller may view, a page of 100 at a time with hydra paging links; the publisher
from the settings; bad input answered with a clear JSON error; and the schema.org of a resource
(f=schemaorg), which the web UI puts in the resource's page."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.test_documents import png, upload
from tests.api.test_uploads import COUNTRIES
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, insert_resource, login, make_group, make_user
from tests.ogc.conftest import upload_shapefile, upload_tif

SHAPES = Path(__file__).resolve().parents[1] / "data" / "dcat-ap" / "dcat-ap-SHACL.ttl"
DCAT = "http://www.w3.org/ns/dcat#"
DCT = "http://purl.org/dc/terms/"
PUBLISHER = {"CATALOGUE_PUBLISHER_NAME": "Ministry of Maps", "CATALOGUE_PUBLISHER_URL": "https://maps.example.org/",
             "CATALOGUE_PUBLISHER_EMAIL": "maps@example.org"}
EVERYONE = [(None, 1, "view_resourcebase")]  # the anonymous group's view: public
WHO = ("anonymous", "other", "member", "owner", "admin")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A catalogue with each kind of resource: a vector dataset with every optional field, a
    raster without them, a document, a map and a geoapp (public); a private document of
    `owner`, and one `owner` shares with a group `member` belongs to; `other` holds nothing."""
    srv = in_process(tmp_path_factory.mktemp("dcat") / "data", env=PUBLISHER)
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, member = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin)
    assert admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]]}).status_code < 300
    vector = upload_shapefile(admin, COUNTRIES, dataset_title="Countries")
    r = admin.patch(f"/api/v2/resources/{vector['pk']}", json={
        "abstract": "<p>The countries of the world, <b>2020</b>.</p>", "category": {"identifier": "environment"},
        "license": {"identifier": "cc-by"}, "keywords": [{"name": "world"}, {"name": "borders"}],
        "temporal_extent_start": "2020-01-01T00:00:00Z", "temporal_extent_end": "2020-12-31T00:00:00Z",
        "maintenance_frequency": "annually", "edition": "2020", "doi": "10.1234/countries"})
    assert r.status_code == 200, r.text
    raster = upload_tif(admin, "RGB.byte.tif")
    r = upload(admin, "note.png", png(), title="A public note")
    assert r.status_code == 201, r.text
    document = admin.get(f"/api/v2/resources/{r.json()['document']['pk']}").json()["resource"]
    r = admin.post("/api/v2/resources/", json={"resource_type": "map", "title": "A map"})
    assert r.status_code == 201, r.text
    a_map = r.json()["resource"]
    ids = {"geoapp": insert_resource(srv, owner["pk"], "A story", EVERYONE, resource_type="geostory"),
           "private": insert_resource(srv, owner["pk"], "Private plan"),
           "shared": insert_resource(srv, owner["pk"], "Group plan", [(None, group["group"]["pk"], "view_resourcebase")])}
    found = {"vector": admin.get(f"/api/v2/resources/{vector['pk']}").json()["resource"], "raster": raster,
             "document": document, "map": a_map}
    for name, rid in ids.items():
        found[name] = admin.get(f"/api/v2/resources/{rid}").json()["resource"]
    clients = {"anonymous": srv.client(), "other": login(srv, other), "member": login(srv, member),
               "owner": login(srv, owner), "admin": admin}
    yield {"srv": srv, "clients": clients, **found}
    for client in clients.values():
        client.close()
    srv.stop()


def graph_of(response, fmt: str = "json-ld"):
    import rdflib

    assert response.status_code == 200, response.text
    return rdflib.Graph().parse(data=response.content, format=fmt)


def shacl_violations(graph) -> list[str]:
    """What the DCAT-AP 3.0.0 shapes find wrong in the graph, as messages. One shape of that file
    is left out: DatasetInSeriesShape, which targets every dcat:Dataset with sh:minCount 1 on
    dcat:inSeries, though the specification asks it only of the datasets that are members of a
    dataset series (DCAT-AP 3.0.0 §"Dataset member of a Dataset Series"); the catalogue has no
    series. Every other shape counts, and any violation of them fails."""
    import pyshacl
    import rdflib
    from rdflib.namespace import SH

    shapes = rdflib.Graph().parse(SHAPES)
    in_series = rdflib.URIRef("https://semiceu.github.io//DCAT-AP/releases/3.0.0#DatasetInSeriesShape")
    assert (in_series, SH.targetClass, rdflib.URIRef(DCAT + "Dataset")) in shapes
    shapes.remove((in_series, SH.targetClass, None))
    conforms, report, _text = pyshacl.validate(graph, shacl_graph=shapes, inference="none")
    messages = [f"{report.value(r, SH.focusNode)} {report.value(r, SH.resultPath)}: {report.value(r, SH.resultMessage)}"
                for r in report.subjects(SH.resultSeverity, SH.Violation)]
    assert conforms == (not messages)
    return messages


def whole_catalog(client) -> list[dict]:
    """Every page of the catalogue, following hydra:nextPage: its datasets."""
    url, datasets = "/dcat/catalog", []
    while url:
        r = client.get(url)
        assert r.status_code == 200, r.text
        graph = r.json()["@graph"]
        datasets += graph[0]["dcat:dataset"]
        url = graph[1].get("hydra:nextPage")
    return datasets


def identifiers(datasets: list[dict]) -> set[str]:
    return {d["dct:identifier"] for d in datasets}


def test_the_catalogue_is_valid_dcat_ap_in_json_ld_and_turtle(site):
    admin = site["clients"]["admin"]
    json_ld = graph_of(admin.get("/dcat/catalog"))
    turtle = graph_of(admin.get("/dcat/catalog", params={"f": "ttl"}), "turtle")
    by_accept = admin.get("/dcat/catalog", headers={"Accept": "text/turtle"})
    assert by_accept.headers["content-type"].startswith("text/turtle") and by_accept.headers["vary"] == "Accept"
    from rdflib.compare import isomorphic

    assert isomorphic(json_ld, turtle) and len(json_ld) > 100
    assert shacl_violations(json_ld) == []
    # every kind, with and without the optional fields, is in it
    import rdflib

    kinds = {"vector", "raster", "document", "map", "geoapp", "private", "shared"}
    assert {site[k]["uuid"] for k in kinds} <= {str(o) for o in json_ld.objects(None, rdflib.URIRef(DCT + "identifier"))}
    # and the anonymous catalogue too
    assert shacl_violations(graph_of(site["clients"]["anonymous"].get("/dcat/catalog"))) == []


@pytest.mark.parametrize("kind", ["vector", "raster", "document", "map", "geoapp"])
def test_each_resource_is_valid_dcat_ap(site, kind):
    anon = site["clients"]["anonymous"]
    url = f"/dcat/resources/{site[kind]['uuid']}"
    graph = graph_of(anon.get(url))
    assert shacl_violations(graph) == []
    from rdflib.compare import isomorphic

    assert isomorphic(graph, graph_of(anon.get(url, params={"f": "ttl"}), "turtle"))


def test_what_a_dataset_says(site):
    vector = site["vector"]
    graph = site["clients"]["anonymous"].get(f"/dcat/resources/{vector['uuid']}").json()["@graph"]
    publisher, node = graph
    assert publisher == {"@id": publisher["@id"], "@type": "foaf:Agent", "foaf:name": "Ministry of Maps",
                         "foaf:homepage": {"@id": "https://maps.example.org/", "@type": "foaf:Document"},
                         "foaf:mbox": {"@id": "mailto:maps@example.org"}}
    assert node["@type"] == "dcat:Dataset" and node["dct:identifier"] == vector["uuid"]
    assert node["dct:title"] == "Countries" and node["dct:description"] == "The countries of the world, 2020 ."
    assert node["dcat:landingPage"]["@id"] == vector["detail_url"]
    assert node["dct:publisher"] == {"@id": publisher["@id"]}
    assert set(node["dcat:keyword"]) >= {"world", "borders"}
    assert node["dcat:theme"]["@id"] == "http://publications.europa.eu/resource/authority/data-theme/ENVI"
    assert node["dct:license"]["@id"].startswith("https://creativecommons.org/licenses/by/4.0")
    assert node["dct:temporal"]["dcat:startDate"]["@value"] == "2020-01-01T00:00:00Z"
    assert node["dct:accrualPeriodicity"]["@id"].endswith("/frequency/ANNUAL")
    assert node["dcat:version"] == "2020" and node["adms:identifier"]["skos:notation"] == "10.1234/countries"
    assert node["dct:modified"]["@type"] == "xsd:dateTime" and node["dct:issued"]["@type"] == "xsd:dateTime"
    bbox = node["dct:spatial"]["dcat:bbox"]
    assert bbox["@type"] == "gsp:wktLiteral" and bbox["@value"].startswith("POLYGON((-180")
    assert node["dct:spatial"]["locn:geometry"]["gsp:asWKT"] == bbox
    assert node["dcat:contactPoint"][0]["@type"] == ["vcard:Kind", "vcard:Individual"]
    services = {d["dcat:accessService"]["dct:title"] for d in node["dcat:distribution"] if "dcat:accessService" in d}
    assert services == {"OGC WMS", "OGC WFS", "OGC API - Features"}
    features = next(d for d in node["dcat:distribution"] if d["dct:title"] == "OGC API - Features")
    layer = vector["alternate"].split(":")[-1]
    assert features["dcat:accessURL"]["@id"] == f"{site['srv'].url}/ogcapi/collections/{layer}/items"
    downloads = {d["dcat:downloadURL"]["@id"]: d["dcat:mediaType"]["@id"] for d in node["dcat:distribution"]
                 if "dcat:downloadURL" in d}
    assert vector["download_url"] in downloads
    # the raster: WMS and WCS, its GeoTIFF; nothing it does not have
    raster = site["clients"]["anonymous"].get(f"/dcat/resources/{site['raster']['uuid']}").json()["@graph"][1]
    assert {d["dcat:accessService"]["dct:title"] for d in raster["dcat:distribution"] if "dcat:accessService" in d} \
        == {"OGC WMS", "OGC WCS"}
    assert not {"dcat:theme", "dct:temporal", "dct:license", "adms:identifier"} & set(raster)
    assert raster["dct:description"] == raster["dct:title"]  # DCAT-AP asks for a description: the title stands in


def test_the_catalogue_lists_what_each_caller_may_view(site):
    public = {site[k]["uuid"] for k in ("vector", "raster", "document", "map", "geoapp")}
    private, shared = site["private"]["uuid"], site["shared"]["uuid"]
    seen = {who: identifiers(whole_catalog(c)) for who, c in site["clients"].items()}
    for who in WHO:
        assert public <= seen[who], who
    assert {who: private in seen[who] for who in WHO} == {
        "anonymous": False, "other": False, "member": False, "owner": True, "admin": True}
    assert {who: shared in seen[who] for who in WHO} == {
        "anonymous": False, "other": False, "member": True, "owner": True, "admin": True}
    # one resource: 404 for those who may not view it, in every format
    for uuid, allowed in ((private, {"owner", "admin"}), (shared, {"member", "owner", "admin"})):
        for fmt in ("jsonld", "ttl", "schemaorg"):
            statuses = {who: c.get(f"/dcat/resources/{uuid}", params={"f": fmt}).status_code
                        for who, c in site["clients"].items()}
            assert statuses == {who: 200 if who in allowed else 404 for who in WHO}, (uuid, fmt)


def test_the_catalogue_is_paged_like_ckan(site):
    srv, admin = site["srv"], site["clients"]["admin"]
    made = {insert_resource(srv, site["vector"]["owner"]["pk"], f"Filler {n}", EVERYONE) for n in range(150)}
    assert len(made) == 150
    anon = site["clients"]["anonymous"]
    first = anon.get("/dcat/catalog").json()["@graph"]
    total = first[1]["hydra:totalItems"]
    assert total >= 155 and len(first[0]["dcat:dataset"]) == 100
    here = f"{srv.url}/dcat/catalog"
    last = (total + 99) // 100
    assert first[1] == {"@id": f"{here}?page=1", "@type": "hydra:PagedCollection", "hydra:totalItems": total,
                        "hydra:itemsPerPage": 100, "hydra:firstPage": f"{here}?page=1",
                        "hydra:lastPage": f"{here}?page={last}", "hydra:nextPage": f"{here}?page=2"}
    end = anon.get("/dcat/catalog", params={"page": last}).json()["@graph"]
    assert len(end[0]["dcat:dataset"]) == total - 100 * (last - 1) and "hydra:nextPage" not in end[1]
    assert end[1]["hydra:previousPage"] == f"{here}?page={last - 1}"
    everything = whole_catalog(anon)
    assert len(everything) == total == len(identifiers(everything))
    assert admin.get("/dcat/catalog", params={"page": 2, "f": "ttl"}).status_code == 200


def test_bad_input_gets_a_clear_json_error(site):
    anon = site["clients"]["anonymous"]
    assert_envelope(anon.get("/dcat/resources/no-such-uuid"), 404, "not_found")
    assert_envelope(anon.get("/dcat/resources/00000000-0000-0000-0000-000000000000"), 404, "not_found")
    for page in ("abc", "0", "-1", "1.5", ""):
        r = anon.get("/dcat/catalog", params={"page": page})
        assert_envelope(r, 400, "invalid")
        assert "page" in r.json()["errors"][0]
    for page in ("999", "9" * 40):
        r = anon.get("/dcat/catalog", params={"page": page})
        assert_envelope(r, 404, "not_found")
        assert "past the last page" in r.json()["errors"][0]
    for url in ("/dcat/catalog", f"/dcat/resources/{site['vector']['uuid']}"):
        r = anon.get(url, params={"f": "xml"})
        assert_envelope(r, 400, "invalid")
        assert "f:" in r.json()["errors"][0]
    # an Accept it cannot answer: JSON-LD, as for no Accept at all
    r = anon.get("/dcat/catalog", headers={"Accept": "image/png"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/ld+json")


def test_schema_org_of_a_dataset(site):
    vector = site["vector"]
    r = site["clients"]["anonymous"].get(f"/dcat/resources/{vector['uuid']}", params={"f": "schemaorg"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/ld+json")
    body = r.json()
    assert body["@context"] == "https://schema.org" and body["@type"] == "Dataset"
    assert body["name"] == "Countries" and body["url"] == vector["detail_url"]
    assert body["identifier"] == [vector["uuid"], "https://doi.org/10.1234/countries"]
    assert set(body["keywords"]) >= {"world", "borders"}
    assert body["license"].startswith("https://creativecommons.org/licenses/by/4.0")
    assert body["publisher"] == {"@type": "Organization", "name": "Ministry of Maps"}
    assert body["creator"][0]["@type"] == "Person" and body["dateModified"]
    assert body["spatialCoverage"]["geo"]["box"].split()[:2] == ["-90.0", "-180.0"]
    assert vector["download_url"] in {d["contentUrl"] for d in body["distribution"]}
    kinds = {k: site["clients"]["admin"].get(f"/dcat/resources/{site[k]['uuid']}", params={"f": "schemaorg"}).json()["@type"]
             for k in ("document", "map", "geoapp")}
    assert kinds == {"document": "DigitalDocument", "map": "Map", "geoapp": "CreativeWork"}
