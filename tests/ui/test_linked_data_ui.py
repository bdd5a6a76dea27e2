"""Linked data in the web UI: a resource's page carries its schema.org description in the page's
head (a JSON-LD data block: the page's CSP, script-src 'self', lets it be, and the console shows
no violation), gone when another page opens; its metadata records name the DCAT one; the footer
of every page links to the OGC API landing page and the DCAT-AP catalogue."""

from __future__ import annotations

import json

import pytest

from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA

SCHEMA = "document.getElementById('schema-org')"


@pytest.fixture(scope="module")
def countries(ui_admin):
    return upload_shapefile(ui_admin, DATA / "naturalearth_lowres", dataset_title="Countries of the world")


def test_a_dataset_page_describes_itself_for_search_engines(tab, countries, ui_admin):
    r = ui_admin.post("/api/v2/resources/", json={"resource_type": "map", "title": "A map of the world"})
    assert r.status_code == 201, r.text
    a_map = r.json()["resource"]
    tab.go(f"/dataset/{countries['pk']}", wait=".records a:text('DCAT-AP (JSON-LD)')")
    tab.until(SCHEMA)
    block = tab.page.evaluate(f"({{type: {SCHEMA}.type, text: {SCHEMA}.textContent, "
                              f"inHead: {SCHEMA}.parentElement === document.head}})")
    assert block["type"] == "application/ld+json" and block["inHead"]
    described = json.loads(block["text"])
    assert described["@type"] == "Dataset" and described["name"] == "Countries of the world"
    assert described["url"] == countries["detail_url"] and countries["uuid"] in described["identifier"]
    assert described["spatialCoverage"]["geo"]["@type"] == "GeoShape"
    href = tab.page.get_attribute(".records a:text('DCAT-AP (JSON-LD)')", "href")
    assert href.endswith(f"/dcat/resources/{countries['uuid']}")
    tab.shot("dataset")
    # another resource's page: its own description, one block only
    tab.go(f"/map/{a_map['pk']}", wait="h1:text('A map of the world')")
    tab.until(f"{SCHEMA} && JSON.parse({SCHEMA}.textContent).name === 'A map of the world'")
    assert tab.page.evaluate("document.querySelectorAll('script[type=\"application/ld+json\"]').length") == 1
    assert json.loads(tab.page.evaluate(f"{SCHEMA}.textContent"))["@type"] == "Map"
    # the search page describes no resource
    tab.go("/", wait="section.search[data-loaded] .card")
    tab.until(f"!{SCHEMA}")


def test_every_page_links_to_the_open_standards(tab, countries):
    tab.go("/", wait="section.search[data-loaded] .card")
    links = tab.page.eval_on_selector_all("footer.site-footer a", "(els) => els.map((a) => [a.textContent, a.getAttribute('href')])")
    assert links == [["OGC API", "/ogcapi/"], ["DCAT-AP catalogue", "/dcat/catalog"]]
    tab.allow(r"/favicon\.ico")  # a JSON document names no icon: the browser asks for /favicon.ico
    tab.page.click("footer.site-footer a:text('DCAT-AP catalogue')")
    tab.page.wait_for_load_state()
    body = json.loads(tab.page.evaluate("document.body.innerText"))
    catalog = body["@graph"][0]
    assert catalog["@type"] == "dcat:Catalog"
    assert countries["uuid"] in [d["dct:identifier"] for d in catalog["dcat:dataset"]]
