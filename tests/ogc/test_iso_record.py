"""The ISO 19139 record of a resource (the "ISO" metadata link, CSW GetRecordById and GetRecords
in the gmd schema) carries every metadata field and validates against the ISO 19139 XML
schemas, checked offline with lxml (tests/data/iso19139)."""

from __future__ import annotations

import pytest
from lxml import etree

from tests.api.test_uploads import COUNTRIES
from tests.iso_schema import errors_of
from tests.ogc.conftest import upload_shapefile, upload_tif
from tests.metadata_world import metadata_world

GMD = "http://www.isotc211.org/2005/gmd"
NS = {"gmd": GMD, "gco": "http://www.isotc211.org/2005/gco", "gml": "http://www.opengis.net/gml",
      "csw": "http://www.opengis.net/cat/csw/2.0.2"}


@pytest.fixture(scope="module")
def iso_site(tmp_path_factory):
    with metadata_world(tmp_path_factory.mktemp("iso") / "data") as world:
        client = world["client"]
        vector = upload_shapefile(client, COUNTRIES, dataset_title="Countries")
        raster = upload_tif(client, "RGB.byte.tif")
        r = client.post("/api/v2/resources/", json={"resource_type": "map", "title": "A map"})
        assert r.status_code == 201, r.text
        a_map = r.json()["resource"]
        r = client.patch(f"/api/v2/metadata/instance/{vector['pk']}", json={
            "category": {"id": "boundaries"}, "maintenance_frequency": "daily", "restriction_code_type": "restricted",
            "contacts": {"pointOfContact": [{"organization": "Border office"}]}})
        assert r.status_code == 200, r.text
        yield {**world, "vector": vector, "raster": raster, "map": a_map}


def iso_of(client, pk: str) -> etree._Element:
    resource = client.get(f"/api/v2/resources/{pk}").json()["resource"]
    link = next(link for link in resource["links"] if link["name"] == "ISO")
    r = client.get(link["url"])
    assert r.status_code == 200, r.text
    root = etree.fromstring(r.content)
    found = root if root.tag == f"{{{GMD}}}MD_Metadata" else root.find(f"{{{GMD}}}MD_Metadata")
    assert found is not None
    return found


def texts(root: etree._Element, xpath: str) -> list[str]:
    return [(e.text or "").strip() if isinstance(e, etree._Element) else str(e) for e in root.xpath(xpath, namespaces=NS)]


def test_the_record_of_every_field_validates_and_carries_each(iso_site):
    root = iso_of(iso_site["client"], iso_site["full"]["pk"])
    assert errors_of(root) == []
    body, md = iso_site["body"], iso_site["md"]
    ident = "gmd:identificationInfo/gmd:MD_DataIdentification"
    cit = f"{ident}/gmd:citation/gmd:CI_Citation"
    assert texts(root, "gmd:fileIdentifier/gco:CharacterString") == [iso_site["full"]["uuid"]]
    assert texts(root, f"{cit}/gmd:title/gco:CharacterString") == [body["title"]]
    assert texts(root, f"{cit}/gmd:date/gmd:CI_Date/gmd:date/gco:DateTime")[0].startswith("2024-05-01T10:00:00")
    assert texts(root, f"{cit}/gmd:date/gmd:CI_Date/gmd:dateType/gmd:CI_DateTypeCode/@codeListValue") == ["creation"]
    assert texts(root, f"{cit}/gmd:edition/gco:CharacterString") == ["2nd"]
    assert texts(root, f"{cit}/gmd:identifier/gmd:MD_Identifier/gmd:code/gco:CharacterString") == [body["doi"]]
    assert texts(root, f"{ident}/gmd:abstract/gco:CharacterString") == [body["abstract"]]
    assert texts(root, f"{ident}/gmd:purpose/gco:CharacterString") == [body["purpose"]]
    assert texts(root, f"{ident}/gmd:credit/gco:CharacterString") == [body["attribution"]]
    assert texts(root, f"{ident}/gmd:resourceMaintenance//gmd:MD_MaintenanceFrequencyCode/@codeListValue") == ["annually"]
    assert texts(root, f"{ident}/gmd:spatialRepresentationType/*/@codeListValue") == ["vector"]
    assert texts(root, f"{ident}/gmd:topicCategory/gmd:MD_TopicCategoryCode") == ["inlandWaters"]
    assert texts(root, f"{ident}/gmd:language/gmd:LanguageCode/@codeListValue") == ["fra"]
    assert texts(root, "gmd:language/gmd:LanguageCode/@codeListValue") == ["fra"]
    assert texts(root, f"{ident}/gmd:supplementalInformation/gco:CharacterString") == [body["supplemental_information"]]
    legal = f"{ident}/gmd:resourceConstraints/gmd:MD_LegalConstraints"
    assert texts(root, f"{legal}/gmd:accessConstraints/*/@codeListValue") == ["license"]
    assert texts(root, f"{legal}/gmd:useLimitation/gco:CharacterString") == [body["license"]["id"]]
    assert body["constraints_other"] in texts(root, f"{legal}/gmd:otherConstraints/gco:CharacterString")
    keywords = texts(root, f"{ident}/gmd:descriptiveKeywords/gmd:MD_Keywords/gmd:keyword/gco:CharacterString")
    assert {"delta", "channels", "Rivers", "France"} <= set(keywords)
    assert texts(root, f"{ident}//gmd:thesaurusName/gmd:CI_Citation/gmd:title/gco:CharacterString") == ["Themes"]
    period = f"{ident}/gmd:extent/gmd:EX_Extent/gmd:temporalElement//gml:TimePeriod"
    assert texts(root, f"{period}/gml:beginPosition")[0].startswith("2023-01-01")
    assert texts(root, f"{period}/gml:endPosition")[0].startswith("2023-12-31")
    assert texts(root, f"{ident}/gmd:extent//gmd:westBoundLongitude/gco:Decimal") == ["4.5"]
    assert texts(root, "gmd:dataQualityInfo//gmd:LI_Lineage/gmd:statement/gco:CharacterString") == \
        [body["data_quality_statement"]]
    assert texts(root, f"{ident}/gmd:aggregationInfo//gmd:aggregateDataSetIdentifier//gmd:code/gco:CharacterString") \
        == [iso_site["other"]["uuid"]]
    # the parties, each in its role: users and contacts that are no users
    parties = {(texts(p, "gmd:role/*/@codeListValue")[0], (texts(p, "gmd:individualName/gco:CharacterString") or [""])[0],
                (texts(p, "gmd:organisationName/gco:CharacterString") or [""])[0])
               for p in root.xpath(f"{ident}/gmd:pointOfContact/gmd:CI_ResponsibleParty", namespaces=NS)}
    assert ("owner", md["alice"]["username"], "") in parties or any(r == "owner" for r, _, _ in parties)
    assert ("pointOfContact", "Ana Field", "Delta Survey") in parties
    assert any(r == "pointOfContact" and n for r, n, _ in parties if n != "Ana Field")
    assert any(r == "publisher" for r, _, _ in parties)
    emails = texts(root, "//gmd:electronicMailAddress/gco:CharacterString")
    assert "ana@delta.example" in emails
    authors = root.xpath("gmd:contact/gmd:CI_ResponsibleParty", namespaces=NS)
    assert [texts(a, "gmd:organisationName/gco:CharacterString") for a in authors] == [["Delta Survey"]]
    assert texts(authors[0], "gmd:role/*/@codeListValue") == ["author"]


def test_a_record_with_nothing_filled_in_validates(iso_site):
    assert errors_of(iso_of(iso_site["client"], iso_site["bare"]["pk"])) == []


@pytest.mark.parametrize("kind", ["vector", "raster"])
def test_the_records_of_datasets_validate(iso_site, kind):
    root = iso_of(iso_site["client"], iso_site[kind]["pk"])
    assert errors_of(root) == []
    ident = "gmd:identificationInfo/gmd:MD_DataIdentification"
    assert texts(root, f"{ident}/gmd:spatialRepresentationType/*/@codeListValue") == \
        ["vector" if kind == "vector" else "grid"]
    if kind == "vector":
        assert texts(root, f"{ident}/gmd:pointOfContact/*/gmd:organisationName/gco:CharacterString") == ["Border office"]


def test_csw_answers_the_same_valid_records(iso_site):
    client = iso_site["client"]
    for pk in (iso_site["full"]["pk"], iso_site["bare"]["pk"], iso_site["other"]["pk"]):
        uuid = client.get(f"/api/v2/resources/{pk}").json()["resource"]["uuid"]
        r = client.get("/catalogue/csw", params={"service": "CSW", "version": "2.0.2", "request": "GetRecordById",
                                                 "id": uuid, "outputschema": GMD, "elementsetname": "full"})
        assert r.status_code == 200, r.text
        records = etree.fromstring(r.content).findall(f"{{{GMD}}}MD_Metadata")
        assert len(records) == 1 and errors_of(records[0]) == []
    r = client.get("/catalogue/csw", params={"service": "CSW", "version": "2.0.2", "request": "GetRecords",
                                             "typenames": "csw:Record", "resulttype": "results", "maxrecords": "50",
                                             "outputschema": GMD, "elementsetname": "full"})
    assert r.status_code == 200, r.text
    found = etree.fromstring(r.content).iter(f"{{{GMD}}}MD_Metadata")
    checked = 0
    for record in found:
        assert errors_of(record) == [], texts(record, "gmd:fileIdentifier/gco:CharacterString")
        checked += 1
    assert checked >= 6
