"""DCAT-AP of a resource whose every metadata field is filled in: each field carried (contacts
in their roles, named contacts with their organisation, regions, lineage, constraints, related
resources...), and still valid against the DCAT-AP 3.0.0 shapes."""

from __future__ import annotations

import pytest

from tests.linked_data.test_dcat import PUBLISHER, graph_of, shacl_violations
from tests.metadata_world import metadata_world


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with metadata_world(tmp_path_factory.mktemp("dcatmd") / "data", env=PUBLISHER) as found:
        yield found


def test_every_field_is_in_the_dcat_and_it_is_valid(world):
    client, full, body = world["client"], world["full"], world["body"]
    url = f"/dcat/resources/{full['uuid']}"
    graph = graph_of(client.get(url))
    assert shacl_violations(graph) == []
    from rdflib.compare import isomorphic

    assert isomorphic(graph, graph_of(client.get(url, params={"f": "ttl"}), "turtle"))
    node = client.get(url).json()["@graph"][1]
    assert node["dct:title"] == body["title"] and node["dct:description"] == body["abstract"]
    assert node["dct:language"]["@id"].endswith("/language/FRA")
    assert node["dct:accrualPeriodicity"]["@id"].endswith("/frequency/ANNUAL")
    assert node["dcat:version"] == "2nd" and node["adms:identifier"]["skos:notation"] == body["doi"]
    assert node["dct:license"]["@id"].startswith("https://creativecommons.org/licenses/by/4.0")
    assert node["dct:subject"]["@id"].endswith("/TopicCategory/inlandWaters")
    assert {"delta", "channels", "Rivers"} <= set(node["dcat:keyword"])
    places = [p for p in node["dct:spatial"] if "skos:prefLabel" in p]
    assert [p["dct:identifier"] for p in places] == ["FRA"]
    assert any("dcat:bbox" in p for p in node["dct:spatial"])
    assert node["dct:temporal"]["dcat:endDate"]["@value"].startswith("2023-12-31")
    assert node["dct:provenance"]["rdfs:label"] == body["data_quality_statement"]
    assert set(node["dct:accessRights"]["rdfs:label"]) == {"license", body["constraints_other"]}
    assert node["dct:rightsHolder"]["foaf:name"] == body["attribution"]
    assert node["skos:scopeNote"] == body["purpose"] and node["rdfs:comment"] == body["supplemental_information"]
    assert node["dct:created"]["@value"].startswith("2024-05-01T10:00:00")
    assert node["dct:relation"] == [{"@id": f"{world['srv'].url}/dcat/resources/{world['other']['uuid']}",
                                     "@type": "rdfs:Resource"}]
    points = node["dcat:contactPoint"]
    named = next(p for p in points if p["vcard:fn"] == "Ana Field")
    assert named["vcard:organization-name"] == "Delta Survey" and named["vcard:hasEmail"]["@id"] == "mailto:ana@delta.example"
    assert len(points) == 2
    roles = {(a["dcat:hadRole"]["@id"].rsplit("/", 1)[1], a["prov:agent"]["foaf:name"]) for a in node["prov:qualifiedAttribution"]}
    assert ("author", "Survey desk") in roles
    assert any(role == "publisher" for role, _ in roles)
    assert all(d["adms:representationTechnique"]["@id"].endswith("/SpatialRepresentationType/vector")
               for d in node["dcat:distribution"])


def test_the_catalogue_with_them_is_valid(world):
    assert shacl_violations(graph_of(world["client"].get("/dcat/catalog"))) == []
