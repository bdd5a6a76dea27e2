"""OGC API - Records: the record of a resource whose every metadata field is filled in carries
each (contacts in their roles, named contacts with organisation and email, regions and thesaurus
keywords as themes, the DOI, related records...), and its HTML page shows it."""

from __future__ import annotations

import pytest

from tests.metadata_world import metadata_world


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with metadata_world(tmp_path_factory.mktemp("recmd") / "data") as found:
        yield found


def test_the_record_carries_every_field(world):
    client, body, full, other = world["client"], world["body"], world["full"], world["other"]
    url = f"/ogcapi/collections/metadata:main/items/{full['uuid']}"
    r = client.get(url, params={"f": "json"})
    assert r.status_code == 200, r.text
    rec = r.json()
    p = rec["properties"]
    assert p["title"] == body["title"] and p["description"] == body["abstract"]
    assert p["language"] == {"code": "fra"} and p["license"] == "cc-by"
    assert p["externalIds"] == [{"scheme": "https://doi.org", "value": body["doi"]}]
    for name in ("edition", "purpose", "attribution", "data_quality_statement", "supplemental_information",
                 "maintenance_frequency", "restriction_code_type", "constraints_other", "spatial_representation_type",
                 "date_type"):
        assert p[name] == body[name], name
    assert p["date"].startswith("2024-05-01T10:00:00")
    assert rec["time"]["interval"][0].startswith("2023-01-01") and rec["time"]["interval"][1].startswith("2023-12-31")
    concepts = {c["id"] for theme in p["themes"] for c in theme["concepts"]}
    assert {"inlandWaters", "http://t/themes/rivers", "FRA"} <= concepts
    assert {"delta", "channels"} <= set(p["keywords"])
    named = next(c for c in p["contacts"] if c.get("organization") == "Delta Survey" and c.get("name") == "Ana Field")
    assert named["roles"] == ["poc"] and named["emails"] == [{"value": "ana@delta.example"}]
    roles = {role for c in p["contacts"] for role in c["roles"]}
    assert {"owner", "poc", "metadata_author", "publisher"} <= roles
    related = [link for link in rec["links"] if link["rel"] == "related"]
    assert related == [{"href": f"{world['srv'].url}/ogcapi/collections/metadata:main/items/{other['uuid']}",
                        "rel": "related", "type": "application/geo+json", "title": "Delta photos"}]
    page = client.get(url, params={"f": "html"})
    assert page.status_code == 200 and "Ana Field" in page.text
    items = client.get("/ogcapi/collections/metadata:main/items", params={"f": "json", "q": "Delta"}).json()
    assert full["uuid"] in {f["id"] for f in items["features"]}
