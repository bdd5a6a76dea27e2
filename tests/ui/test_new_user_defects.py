"""What a new user hit in the web UI (issue 28), each in the browser as they met it: the metadata
link, favorites, paragraphs of an abstract, downloads, empty states, upload cards, sharing's
levels, identify, the legend and footprints, the composer keeping work, the Copy button."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from tests.conftest import USER_PASSWORD, Server
from tests.ogc.conftest import upload_shapefile, upload_tif
from tests.ui.conftest import DATA

CITIES = DATA / "naturalearth_cities"
COUNTRIES = DATA / "naturalearth_lowres"


@pytest.fixture(scope="module")
def countries(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        return upload_shapefile(as_alice, COUNTRIES)


@pytest.fixture(scope="module")
def cities(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        return upload_shapefile(as_alice, CITIES)


@pytest.fixture(scope="module")
def raster(ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        return upload_tif(as_alice, "RGB.byte.tif")


def test_iso_metadata_link_gives_the_generated_record(tab, ui_admin, countries):
    doc = ui_admin.post("/api/v2/documents", files={"doc_file": ("iso.txt", b"iso", "text/plain")},
                        data={"title": "Record me"}).json()["document"]
    for pk, path in ((countries["pk"], f"/dataset/{countries['pk']}"), (doc["pk"], f"/document/{doc['pk']}")):
        page = tab.go(path, wait=f"article[data-pk='{pk}'] .records a")
        link = page.locator(".records a", has_text="ISO 19139 metadata (XML)")
        href = link.get_attribute("href")
        answer = ui_admin.get(href)
        assert answer.status_code == 200, (path, href, answer.text[:200])
        assert "MD_Metadata" in answer.text and "GetRecordById" in href
    tab.shot("records")


def test_my_favorites_are_listed(tab, ui_server, alice, countries):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        assert as_alice.post(f"/api/v2/resources/{countries['pk']}/favorite").status_code in (200, 201)
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go("/me", wait="h2:has-text('My favorites')")
    favorites = page.locator("section.panel", has=page.locator("h2:has-text('My favorites')"))
    assert favorites.locator(f"a[href='#/dataset/{countries['pk']}']").count() == 1
    assert "Mark resources with" not in favorites.inner_text()
    tab.shot("favorites")


ABSTRACT = ("First paragraph with <b>bold</b> words.\nA second line of it.\n\n"
            "Second paragraph <script>window.__x = 1</script><a href=\"javascript:window.__x = 2\">no</a> "
            "<a href=\"https://example.org/more\">more</a> <img src=x onerror=\"window.__x = 3\">")


def test_abstract_keeps_paragraphs_and_simple_markup(tab, ui_server, alice, countries):
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go(f"/dataset/{countries['pk']}/edit", wait="form[aria-label='Metadata']")
    page.fill("form[aria-label='Metadata'] textarea[name=abstract]", ABSTRACT)
    page.click("form[aria-label='Metadata'] button[type=submit]")
    page.wait_for_selector("form[aria-label='Metadata'] [role=status]:text('Saved.')")
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        assert as_alice.get(f"/api/v2/resources/{countries['pk']}").json()["resource"]["abstract"] == ABSTRACT

    page = tab.go(f"/dataset/{countries['pk']}", wait=".abstract .rich")
    paragraphs = page.locator(".abstract .rich > p")
    assert paragraphs.count() == 2
    assert paragraphs.nth(0).inner_text() == "First paragraph with bold words.\nA second line of it."
    assert page.locator(".abstract b").inner_text() == "bold"
    assert page.locator(".abstract a[href='https://example.org/more']").inner_text() == "more"
    assert page.locator(".abstract a", has_text="no").get_attribute("href") is None
    assert page.locator(".abstract script, .abstract img").count() == 0
    page.wait_for_timeout(200)
    assert page.evaluate("window.__x") is None
    tab.shot("abstract")
    # the card's snippet is the text alone: no markup, nothing a script held
    page = tab.go(f"/?q={countries['title']}", wait=f".card[data-pk='{countries['pk']}'] .snippet")
    snippet = page.inner_text(f".card[data-pk='{countries['pk']}'] .snippet")
    assert snippet.startswith("First paragraph with bold words.") and "window" not in snippet and "<" not in snippet
    # editing again starts from the abstract as written, not a flattened copy
    page = tab.go(f"/dataset/{countries['pk']}/edit", wait="form[aria-label='Metadata']")
    assert page.input_value("form[aria-label='Metadata'] textarea[name=abstract]") == ABSTRACT


def test_every_download_format_is_offered(tab, ui_admin, countries, raster):
    page = tab.go(f"/dataset/{countries['pk']}", wait=".downloads a.button")
    labels = page.locator(".downloads a.button").all_inner_texts()
    assert labels == ["Zipped Shapefile", "GeoJSON", "GML 3.2"], labels
    with page.expect_download() as got:
        page.click(".downloads a.button:text('GeoJSON')")
    download = got.value
    assert download.suggested_filename == "naturalearth_lowres.json"
    data = json.loads(open(download.path(), "rb").read())
    assert data["type"] == "FeatureCollection" and len(data["features"]) == 177
    tab.shot("downloads-vector")

    page = tab.go(f"/dataset/{raster['pk']}", wait=f"article[data-pk='{raster['pk']}'] .downloads a.button")
    labels = page.locator(".downloads a.button").all_inner_texts()
    assert labels[0] == "GeoTIFF", labels
    with page.expect_download() as got:
        page.click(".downloads a.button >> nth=0")
    assert open(got.value.path(), "rb").read(4) in (b"II*\x00", b"MM\x00*")
    # a raster has no features: no attribute table, and its legend
    assert page.locator(".attributes").count() == 0
    tab.shot("downloads-raster")


def test_an_empty_catalogue_says_what_it_is(browser, tmp_path, ui_env):
    from tests.ui.conftest import Browsing

    server = Server(tmp_path / "empty", env=ui_env)
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        tab = Browsing(context.new_page(), server, "empty-catalogue")
        page = tab.go("/", wait="[data-loaded]")
        text = page.inner_text(".results")
        assert "clear the filters" not in text
        assert "Nothing is shared with everyone yet" in text and "Sign in" in text
        tab.shot("anonymous")
        from tests.conftest import ADMIN_PASSWORD

        tab.sign_in("admin", ADMIN_PASSWORD)  # back on Browse, signed in
        page.wait_for_selector(".welcome a.button:text('Upload data')")
        tab.shot("signed-in")
        page.click(".welcome a.button:text('Upload data')")
        page.wait_for_selector(".dropzone")
        assert not tab.unexpected_errors()
        context.close()
    finally:
        server.stop()


def test_kind_of_data_is_dropped_for_documents(tab, ui_admin, countries):
    ui_admin.post("/api/v2/documents", files={"doc_file": ("kind.txt", b"kind", "text/plain")}, data={"title": "Kind notes"})
    page = tab.go("/?subtype=vector", wait="section.search[data-loaded]")
    page.wait_for_selector("select[name=type]")
    page.select_option("select[name=type]", "document")
    tab.until("location.hash.includes('type=document')")
    page.wait_for_selector("section.search[data-loaded]")
    assert "subtype" not in page.evaluate("location.hash")
    assert page.locator(".card").count() >= 1
    assert "Kind:" not in page.inner_text(".chips")
    # an address that names both still finds the documents
    page = tab.go("/?type=document&subtype=vector", wait="section.search[data-loaded]")
    assert page.locator(".card").count() >= 1


def shapefile_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for part in CITIES.glob("naturalearth_cities.*"):
            archive.write(part, part.name)
    return out.getvalue()


def test_upload_sets_aside_what_is_not_data(tab, alice):
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go("/upload", wait=".dropzone")
    page.set_input_files("#upload-files", [
        {"name": "city-export.zip", "mimeType": "application/zip", "buffer": shapefile_zip()},
        {"name": "README.html", "mimeType": "text/html", "buffer": b"<h1>About</h1>"},
        {"name": "VERSION.txt", "mimeType": "text/plain", "buffer": b"5.1.0"},
    ])
    page.wait_for_selector(".upload.done a", timeout=30_000)
    assert page.locator(".upload.failed").count() == 0
    aside = page.inner_text(".upload.aside")
    assert "README.html" in aside and "VERSION.txt" in aside and "Left aside" in aside
    assert page.inner_text(".upload.done a") == "Open “naturalearth_cities”"
    tab.shot("upload-aside")
    said = page.evaluate("""async () => {
      const m = await import('/ui/js/pages/upload.js');
      return [m.describeState({ status: 'ready' }), m.describeState({ status: 'running', progress: 40 })];
    }""")
    assert said == ["Received; waiting for its turn to be imported…", "Importing (40%)…"]
    page.check("input[name=kind][value=document]")
    assert "Shapefile" not in page.inner_text(".dropzone")


def test_sharing_says_what_signed_in_users_may_do(tab, alice, countries):
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go(f"/dataset/{countries['pk']}/edit", wait="form[aria-label='Sharing'] select")
    levels = page.inner_text("form[aria-label='Sharing'] .levels")
    assert "Download: also get its data" in levels
    anyone = "select[aria-label='Access for Everyone, signed in or not']"
    members = "select[aria-label='Access for Every signed-in user']"
    page.select_option(anyone, "download")
    page.select_option(members, "none")
    assert page.inner_text(".effective") == "In effect: Download, as everyone may."
    page.select_option(anyone, "view")
    assert page.inner_text(".effective") == "In effect: View, as everyone may."
    page.select_option(members, "download")
    assert page.inner_text(".effective") == "In effect: Download."
    tab.shot("sharing")


def test_identify_legend_and_footprints(tab, countries, cities):
    page = tab.go(f"/dataset/{countries['pk']}", wait="#preview-map")
    tab.until("document.querySelectorAll('.dataset-tiles img.leaflet-tile-loaded').length > 0")
    tab.until("(() => { const i = document.querySelector('.legend-box img.legend'); return i && i.complete && i.naturalWidth > 0; })()")
    point = page.evaluate("(() => { const p = document.getElementById('preview-map').leafletMap.latLngToContainerPoint([47, 2.5]); return [p.x, p.y]; })()")
    page.locator("#preview-map").click(position={"x": point[0], "y": point[1]})
    page.wait_for_selector(".identify-popup .identify-feature table")
    assert "France" in page.inner_text(".identify-popup")
    tab.shot("identify")

    # the browse map draws the world-wide footprint too, and the hovered card's stands out
    page = tab.go("/", wait="section.search[data-loaded]")
    page.wait_for_selector(f"path.footprint-{countries['pk']}.wide")
    page.hover(f".card[data-pk='{countries['pk']}'] h2")
    page.wait_for_selector(f"path.footprint-{countries['pk']}.highlighted")
    assert page.get_attribute(f"path.footprint-{countries['pk']}", "stroke-width") == "3"
    page.hover(".searchbar input")
    tab.until(f"!document.querySelector('path.footprint-{countries['pk']}').classList.contains('highlighted')")
    tab.shot("footprints")


def add(page, text: str, title: str) -> None:
    page.fill("input[name=q]", text)
    page.click("form[role=search] button[type=submit]")
    page.click(f"button[aria-label='Add {title}']")
    page.wait_for_selector(f".layer-item[data-name] label:text('{title}')")


def test_the_composer_keeps_work(tab, ui_server, alice, countries, cities):
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go("/map/new", wait="form[aria-label='Map']")
    add(page, "lowres", countries["title"])
    # the same dataset twice is refused: its button says it is on the map
    page.fill("input[name=q]", "lowres")
    page.click("form[role=search] button[type=submit]")
    page.wait_for_selector(f"button[aria-label='On the map: {countries['title']}'][disabled]")
    assert page.locator(".layer-item").count() == 1
    add(page, "cities", cities["title"])

    # leaving with unsaved changes asks first; staying keeps everything
    page.click("#nav a:text('Browse')")
    page.wait_for_selector("dialog.confirm[open]")
    assert "not saved" in page.inner_text("dialog.confirm")
    tab.shot("composer-leave")
    page.click("dialog.confirm button:text('Cancel')")
    assert page.evaluate("location.hash") == "#/map/new"
    assert page.locator(".layer-item").count() == 2

    # a saved map reopens at its saved view
    page.evaluate("document.getElementById('map-view').leafletMap.setView([10, 20], 5)")
    page.fill("form[aria-label='Map'] input[name=title]", "Kept work")
    page.click("form[aria-label='Map'] button[type=submit]")
    page.wait_for_selector("article.detail h1:text('Kept work')")
    assert page.locator("dialog.confirm[open]").count() == 0
    tab.until("document.getElementById('map-view').leafletMap.getZoom() === 5")
    centre = page.evaluate("(() => { const c = document.getElementById('map-view').leafletMap.getCenter(); return [c.lat, c.lng]; })()")
    assert abs(centre[0] - 10) < 0.05 and abs(centre[1] - 20) < 0.05, centre  # within a pixel
    # a click on the map page says what is there, in each layer shown (10° N 20° E is in Chad)
    box = page.locator("#map-view").bounding_box()
    page.locator("#map-view").click(position={"x": box["width"] / 2, "y": box["height"] / 2})
    page.wait_for_selector(".identify-popup .identify-feature table")
    assert "Chad" in page.inner_text(".identify-popup")
    assert countries["title"] in page.locator(".identify-popup h3").all_inner_texts()

    # order and opacity set on the map page go into the composer
    page.click(f"button[aria-label='Move {countries['title']} up']")
    page.evaluate("""() => { const r = document.querySelectorAll('.layer-item input[type=range]')[0];
      r.value = '0.3'; r.dispatchEvent(new Event('change')); }""")
    page.click("a:text('Open in the composer')")
    page.wait_for_selector("form[aria-label='Map']")
    assert page.locator(".layer-item label").all_inner_texts() == [countries["title"], cities["title"]]
    assert page.eval_on_selector(".layer-item input[type=range]", "e => e.value") == "0.3"
    assert "arranged them on the map page" in page.inner_text("main")
    tab.shot("composer-from-map")
    # those are unsaved changes: leaving asks, and leaving is allowed
    page.click("#nav a:text('Browse')")
    page.wait_for_selector("dialog.confirm[open]")
    page.click("dialog.confirm button:text('Leave without saving')")
    page.wait_for_selector("section.search[data-loaded]")


def test_copy_button_says_copied_and_documents_name_no_crs(tab, ui_admin, countries):
    tab.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = tab.go(f"/dataset/{countries['pk']}", wait="section.services button.copy")
    button = page.locator("section.services button.copy").first
    button.click()
    page.wait_for_selector("section.services button.copy.copied")  # the clipboard answers asynchronously
    assert button.inner_text() == "Copied ✓"
    assert page.evaluate("navigator.clipboard.readText()").endswith("/geoserver/ows")
    page.wait_for_timeout(2300)
    assert button.inner_text() == "Copy"
    assert "Coordinate system" in page.inner_text(".metadata")
    doc = ui_admin.post("/api/v2/documents", files={"doc_file": ("crs.txt", b"crs", "text/plain")},
                        data={"title": "No place"}).json()["document"]
    page = tab.go(f"/document/{doc['pk']}", wait=f"article[data-pk='{doc['pk']}'] .metadata dl")
    assert "Coordinate system" not in page.inner_text(".metadata")
