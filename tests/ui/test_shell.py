"""The web UI's shell in the browser: the choice of language (kept, and sent to the server), Arabic
right to left, the focus after a change of page, toasts out of the way, and the map's text
alternative. Screenshots go to test-output/ui/."""

from __future__ import annotations

import pytest

from tests.conftest import USER_PASSWORD
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA


def box(page, selector: str) -> dict:
    return page.evaluate(f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect(); "
                         "return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; })()")


def overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_switching_to_french_shows_french_and_survives_a_reload(tab):
    page = tab.go("/", wait="section.search[data-loaded]")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.inner_text("#nav a[href='#/']") == "Browse"
    options = page.locator("footer .languages button")
    assert options.all_inner_texts() == ["English", "Français", "Español", "Português", "العربية"]
    assert [options.nth(i).get_attribute("lang") for i in range(5)] == ["en", "fr", "es", "pt", "ar"]
    assert page.locator("footer .languages button[aria-current]").get_attribute("lang") == "en"

    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.headers.get("accept-language", "")) if "/api/v2/" in r.url else None)
    with page.expect_navigation():
        page.click("footer .languages button[lang=fr]")
    page.wait_for_selector("section.search[data-loaded]")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == ["fr", "ltr"]
    assert page.inner_text("#nav a[href='#/']") == "Parcourir"
    assert page.inner_text("#nav #sign-in") == "Se connecter"
    assert page.inner_text(".skip") == "Aller au contenu"
    assert page.title() == "Catalogue"
    assert page.locator("footer .languages button[aria-current]").get_attribute("lang") == "fr"
    assert asked and set(asked) == {"fr"}, asked  # the server is asked in French too

    page.reload()
    page.wait_for_selector("section.search[data-loaded]")
    assert page.evaluate("localStorage.getItem('catalogue.language')") == "fr"
    assert page.inner_text("#nav a[href='#/']") == "Parcourir"
    tab.shot("french")

    # an error: the UI's own sentence in French, the server's (English) message beside it
    tab.allow(r"status of 404")
    said = page.evaluate("""async () => {
      const { api } = await import('/ui/js/api.js');
      try { await api('/api/v2/resources/987654'); return null; } catch (error) { return [error.status, error.message, error.detail]; }
    }""")
    assert said[0] == 404
    assert said[1].startswith("Introuvable"), said
    assert said[2] and said[2] in said[1], said


def test_arabic_is_laid_out_right_to_left_with_the_map_left_to_right(tab):
    page = tab.go("/", wait="section.search[data-loaded]")
    with page.expect_navigation():
        page.click("footer .languages button[lang=ar]")
    page.wait_for_selector("section.search[data-loaded] .leaflet-container")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == ["ar", "rtl"]
    assert page.inner_text("#nav a[href='#/']") == "تصفّح"
    # mirrored: the brand at the right, the navigation at the left; the map keeps its own direction
    brand, nav = box(page, ".brand"), box(page, "#nav")
    assert brand["left"] > nav["right"], (brand, nav)
    assert page.evaluate("getComputedStyle(document.querySelector('.leaflet-container')).direction") == "ltr"
    zoom_in = box(page, ".leaflet-control-zoom-in")
    map_box = box(page, ".leaflet-container")
    assert zoom_in["left"] - map_box["left"] < 40  # Leaflet's controls stay at the map's top left
    assert page.get_attribute(".leaflet-control-zoom-in", "title") == "تكبير"
    tab.shot("arabic")


def test_the_focus_goes_to_the_new_page_and_is_shown(tab):
    page = tab.go("/", wait="section.search[data-loaded]")
    # a change of page by the keyboard: the new page's heading has the focus, with a visible ring
    page.evaluate("location.hash = '#/no/such/page'")
    page.wait_for_selector("main h1")
    page.focus("main a[href='#/']")
    page.keyboard.press("Enter")
    page.wait_for_selector("section.search[data-loaded]")
    tab.until("document.activeElement === document.querySelector('main h1')")
    page.evaluate("location.hash = '#/no/such/page'")
    tab.until("document.activeElement?.textContent === 'Page not found'")
    assert page.evaluate("document.activeElement.matches('main h1:focus-visible')")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"

    # a change of the search's query alone keeps the focus where the reader is
    tab.go("/", wait="section.search[data-loaded]")
    page.focus("select[name=type]")
    page.evaluate("document.querySelector('section.search').removeAttribute('data-loaded')")
    page.select_option("select[name=type]", "dataset")
    page.wait_for_selector("section.search[data-loaded]")
    assert page.evaluate("document.activeElement.name") == "type"

    # the header's "Skip to content" takes the keyboard to the page, and leaves the address alone
    page.focus(".skip")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    assert "type=dataset" in page.evaluate("location.hash")


def test_toasts_stay_out_of_the_way(tab, alice):
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.page
    page.wait_for_selector("#toast.show")
    assert "alice" in page.inner_text("#toast")
    page.wait_for_selector(".searchbar")  # back on the page one signed in from
    toast, header = box(page, "#toast"), box(page, "header.top")
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    assert not overlap(toast, header) and not overlap(toast, box(page, ".searchbar"))
    assert toast["bottom"] > height - 40 and toast["right"] > width - 40, toast  # the bottom corner at the line's end
    assert toast["right"] - toast["left"] < 400
    tab.shot("toast")
    # good news fades by itself, soon, or at the reader's next key
    tab.until("!document.getElementById('toast').classList.contains('show')", timeout=4)
    page.evaluate("import('/ui/js/dom.js').then(({ toast }) => toast('Saved.'))")
    page.wait_for_selector("#toast.show")
    page.keyboard.press("Tab")
    tab.until("!document.getElementById('toast').classList.contains('show')", timeout=1)
    # a toast can be closed at once (its button), by the keyboard too
    page.evaluate("import('/ui/js/dom.js').then(({ toast }) => toast('Something to read.', 'error'))")
    page.wait_for_selector("#toast.show.error")
    page.focus("#toast .toast-close")
    page.keyboard.press("Enter")
    tab.until("!document.getElementById('toast').classList.contains('show')", timeout=1)
    tab.until("getComputedStyle(document.getElementById('toast')).visibility === 'hidden'", timeout=1)  # its button no longer a tab stop


@pytest.fixture(scope="module")
def a_map(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        countries = upload_shapefile(as_alice, DATA / "naturalearth_lowres", dataset_title="Countries")
        made = as_alice.post("/api/v2/maps", json={
            "resource_type": "map", "title": "A map with a legend", "abstract": "One layer.",
            "maplayers": [{"name": countries["alternate"], "order": 0, "visibility": True, "opacity": 1,
                           "dataset": int(countries["pk"])}]})
        assert made.status_code == 201, made.text
        return made.json()["map"]["pk"]


def test_the_map_is_described_by_its_list_and_can_be_skipped(tab, a_map):
    page = tab.go(f"/map/{a_map}", wait=".layer-item")
    described = page.get_attribute("#map-view", "aria-describedby")
    about = page.inner_text(f"#{described}")
    assert "Countries" in about and "legend" in about, about
    assert page.get_attribute("#map-view", "aria-label") == "Map"
    assert page.get_attribute("#map-view", "dir") == "ltr"
    # the link before the map takes the keyboard past it (Leaflet's map and controls are many stops)
    skip = page.locator("a.skip-map")
    assert skip.count() == 1
    skip.focus()
    assert skip.is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("!document.getElementById('map-view').contains(document.activeElement)")
    assert page.evaluate("document.activeElement.closest('.layer-panel') !== null")
    # hiding the layer: the description says the map shows the basemap only
    page.uncheck(".layer-item input[type=checkbox]")
    assert "basemap only" in page.inner_text(f"#{described}")
