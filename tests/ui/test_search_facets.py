"""The search page's filters with counts (GeoNode's facets API), loaded only when wanted; the first
load of / and what it asks for; the list of results as the map's legend; the page in Arabic."""

from __future__ import annotations

import re

import pytest

from tests.conftest import unique
from tests.ui.conftest import OUTPUT, console_text

LOOKUPS = re.compile(r"/api/v2/(categories|owners|keywords|regions|groups)\b|/api/v2/facets/(?!resourcetype)")


@pytest.fixture(scope="module")
def world(ui_admin):
    """Three resources of one word: two documents of category biota with an extent, and a map of
category economy without one."""
    tag = unique("otterz")

    def create(title, resource_type, **fields):
        r = ui_admin.post("/api/v2/resources/", json={"resource_type": resource_type, "title": f"{tag} {title}", **fields})
        assert r.status_code == 201, r.text
        return r.json()["resource"]["pk"]

    pks = {
        "ponds": create("ponds", "document", category={"identifier": "biota"}, keywords=["Otters"],
                        extent={"coords": [8.4, 46.0, 8.9, 46.6], "srid": "EPSG:4326"}),
        "lakes": create("lakes", "document", category={"identifier": "biota"}, keywords=["Otters", "Lakes"],
                        extent={"coords": [5.9, 45.8, 10.5, 47.8], "srid": "EPSG:4326"}),
        "trade": create("trade", "map", category={"identifier": "economy"}),  # a map without an extent
    }
    return {"tag": tag, "pks": pks}


def wait_results(tab):
    tab.page.wait_for_selector("section.search[data-loaded]")


def type_options(page) -> dict[str, str]:
    return dict(page.eval_on_selector_all("select[name=type] option", "os => os.map((o) => [o.value, o.textContent])"))


def counts(page, key) -> dict[str, str]:
    return dict(page.eval_on_selector_all(
        f"details[data-facet={key}] .choice",
        "cs => cs.map((c) => [c.querySelector('input').value, c.querySelector('.count')?.textContent ?? null])"))


def test_filters_show_the_counts_of_each_choice(tab, world):
    page = tab.page
    asked = []
    page.on("request", lambda r: asked.append(r.url))
    tab.go(f"/?q={world['tag']}", wait="section.search[data-loaded]")
    assert page.inner_text(".summary") == "1–3 of 3 results"
    # the type's counts come once the results are shown, for this search (text included)
    tab.until("document.querySelector('select[name=type] option[value=document]').textContent.includes('(')")
    assert type_options(page) == {"": "All types (3)", "dataset": "Datasets (0)", "document": "Documents (2)",
                                  "map": "Maps (1)", "app": "Apps (0)"}
    # nothing else was looked up: no categories, keywords, regions, owners or their facets
    assert not [u for u in asked if LOOKUPS.search(u)], asked

    # the category's counts are asked for once its part of the filters is opened
    page.click("details[data-facet=category] > summary")
    page.wait_for_selector("details[data-facet=category] .choice .count")
    assert [u for u in asked if "/api/v2/facets/category" in u]
    assert counts(page, "category") == {"": None, "biota": "2", "economy": "1"}
    assert page.is_checked("details[data-facet=category] input[value='']")
    tab.shot("category-counts")

    # choosing one: the results, the type's counts and the chips follow; the category's own
    # counts stay those of the search without it (what each choice would give)
    page.check("details[data-facet=category] input[value=biota]")
    tab.until("location.hash.includes('category=biota')")
    wait_results(tab)
    assert page.inner_text(".summary") == "1–2 of 2 results"
    tab.until("document.querySelector('select[name=type] option[value=map]').textContent === 'Maps (0)'")
    assert type_options(page)["document"] == "Documents (2)"
    assert counts(page, "category") == {"": None, "biota": "2", "economy": "1"}
    assert page.is_checked("details[data-facet=category] input[value=biota]")
    page.wait_for_selector(".chip:text('Category: Biota')")
    assert page.inner_text("details[data-facet=category] .facet-chosen") == "Biota"

    # the keywords of what is left, found by a part of their name
    page.click("details[data-facet=keyword] > summary")
    page.wait_for_selector("details[data-facet=keyword] .choice .count")
    assert counts(page, "keyword") == {"": None, "otters": "2", "lakes": "1"}
    page.fill("details[data-facet=keyword] .facet-find", "lak")
    tab.until("document.querySelectorAll('details[data-facet=keyword] .choice').length === 2")
    assert counts(page, "keyword") == {"": None, "lakes": "1"}
    page.check("details[data-facet=keyword] input[value=lakes]")
    tab.until("location.hash.includes('keyword=lakes')")
    wait_results(tab)
    assert page.locator(".card").count() == 1
    assert page.get_attribute(".card", "data-pk") == str(world["pks"]["lakes"])
    tab.shot("keyword-chosen")

    # the chip takes the filter off again
    page.click(".chip:text('Keyword: lakes')")
    tab.until("!location.hash.includes('keyword=')")
    wait_results(tab)
    assert page.locator(".card").count() == 2


def test_a_shared_address_names_its_choices(tab, world):
    page = tab.page
    tab.go(f"/?q={world['tag']}&category=economy", wait="section.search[data-loaded]")
    # the chip says the category's name, asked of its facet (the part of the filters stays closed)
    page.wait_for_selector(".chip:text('Category: Economy')")
    assert not page.eval_on_selector("details[data-facet=category]", "d => d.open")
    # a change of another filter keeps the category that was never shown
    page.select_option("select[name=sort]", "title")
    tab.until("location.hash.includes('sort=title')")
    assert "category=economy" in page.url


def test_first_load_is_small_and_asks_for_no_lookups(tab, world):
    page = tab.page
    asked = []
    page.on("request", lambda r: asked.append(r.url))
    tab.go("/", wait="section.search[data-loaded]")
    received = page.evaluate("""() => {
      const until = performance.getEntriesByName('results-shown')[0].startTime;
      const all = [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')];
      return all.filter((e) => e.responseEnd <= until).reduce((n, e) => n + e.transferSize, 0);
    }""")
    assert 0 < received < 150_000, received
    assert not [u for u in asked if LOOKUPS.search(u)], asked
    # the map is made after the results: its tiles come then
    tab.until("document.querySelectorAll('.basemap-tiles img.leaflet-tile-loaded').length > 0")


def test_the_list_is_the_maps_legend(tab, world):
    page = tab.page
    tab.go(f"/?q={world['tag']}", wait="section.search[data-loaded]")
    the_map = page.locator("#search-map")
    assert the_map.get_attribute("aria-details") == "search-results"
    described = the_map.get_attribute("aria-describedby").split()
    assert "search-map-legend" in described
    assert "extent of a result in the list" in page.inner_text("#search-map-legend")
    assert page.get_attribute("#search-results", "aria-label") == "Results"
    # each footprint on the map is one entry of the list, and a result without one says so
    tab.until("document.querySelectorAll('#search-map path.footprint').length === 2")
    drawn = page.eval_on_selector_all("#search-map path.footprint", "ps => ps.map((p) => p.dataset.pk).sort()")
    assert drawn == sorted(str(world["pks"][k]) for k in ("ponds", "lakes"))
    listed = page.eval_on_selector_all(".card", "cs => cs.map((c) => c.dataset.pk)")
    assert set(drawn) <= set(listed)
    trade = f".card[data-pk='{world['pks']['trade']}']"
    assert page.inner_text(f"{trade} .not-on-map") == "Not on the map"
    assert page.locator(".card .not-on-map").count() == 1
    # the focus on an entry of the list shows its footprint on the map
    page.focus(f".card[data-pk='{world['pks']['ponds']}'] h2 a")
    page.wait_for_selector(f"path.footprint-{world['pks']['ponds']}.highlighted", state="attached")


def test_the_page_in_arabic(browser, ui_server, world):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ar")
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(console_text(m)) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{ui_server.url}/#/?q={world['tag']}")
        page.wait_for_selector("section.search[data-loaded]")
        assert page.evaluate("document.documentElement.dir") == "rtl"
        n = dict(page.evaluate("[1, 2, 3].map((n) => [n, new Intl.NumberFormat('ar').format(n)])"))
        assert page.inner_text(".summary") == f"{n[1]}–{n[3]} من {n[3]} نتائج"  # 3 to 10: the plural of "few"
        assert page.get_attribute("#search-map", "aria-label") == "خريطة النتائج"
        page.click("details[data-facet=category] > summary")
        page.wait_for_selector("details[data-facet=category] .choice .count")
        assert page.inner_text("details[data-facet=category] .choice:has(input[value=biota]) .count") == n[2]
        assert page.inner_text("details[data-facet=category] .choice:has(input[value='']) .choice-label") == "جميع الفئات"
        OUTPUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUTPUT / "test_the_page_in_arabic-facets.png"), full_page=True)
    finally:
        context.close()
    assert not errors, errors
