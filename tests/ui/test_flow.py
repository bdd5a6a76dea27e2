"""The whole path of a person's data, in the browser: sign in, upload a Shapefile and watch it
arrive, find it by text and by drawing an area, look at it on the map, rename it, make it
private, sign out, and see that nobody else finds it any more."""

from __future__ import annotations

from tests.conftest import USER_PASSWORD
from tests.ui.conftest import DATA

CITIES = DATA / "naturalearth_cities"
TILE_PIXELS = """() => {
  const tiles = [...document.querySelectorAll('.dataset-tiles img.leaflet-tile-loaded')];
  let drawn = 0;
  for (const img of tiles) {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) drawn++;
  }
  return { tiles: tiles.length, drawn };
}"""


def test_upload_find_look_edit_hide(tab, ui_admin, alice):
    page = tab.page
    # a document far in the south, which the area drawn over Europe must leave out
    southern = ui_admin.post("/api/v2/documents", files={"doc_file": ("south.txt", b"notes", "text/plain")},
                             data={"title": "Southern station notes"}).json()["document"]
    assert ui_admin.patch(f"/api/v2/resources/{southern['pk']}",
                          json={"extent": {"coords": [0, -89, 10, -85], "srid": "EPSG:4326"}}).status_code == 200

    tab.sign_in("alice", USER_PASSWORD)
    tab.shot("signed-in")

    # upload: the four parts of a Shapefile, the bytes' progress, then the import
    tab.go("/upload", wait=".dropzone")
    tab.shot("upload-empty")
    page.set_input_files("#upload-files", [str(CITIES / f"naturalearth_cities.{e}") for e in ("shp", "dbf", "shx", "prj")])
    item = page.wait_for_selector(".upload")
    assert item.query_selector("progress") is not None
    page.wait_for_selector(".upload.done a", timeout=30_000)
    tab.shot("upload-done")
    link = page.get_attribute(".upload.done a", "href")
    assert link.startswith("#/dataset/")
    pk = link.rsplit("/", 1)[1]

    # find it by text
    tab.go("/?q=naturalearth_cities", wait="[data-loaded]")
    page.wait_for_selector(f".card[data-pk='{pk}']")
    assert "1–1 of 1 result" in page.inner_text(".summary")
    tab.shot("search-text")

    # find it by drawing an area over Europe on the map
    tab.go("/", wait="[data-loaded]")
    page.wait_for_selector(f".card[data-pk='{southern['pk']}']")
    page.click("#draw-area")
    box = page.locator("#search-map").bounding_box()
    x0, y0 = box["x"] + box["width"] * 0.50, box["y"] + box["height"] * 0.30
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + 60, y0 + 40, steps=5)
    page.mouse.up()
    tab.until("location.hash.includes('extent=')")
    page.wait_for_selector(".chips :text('Area: drawn on the map')")
    page.wait_for_selector("section.search[data-loaded]")
    page.wait_for_selector(f".card[data-pk='{pk}']")
    assert page.query_selector(f".card[data-pk='{southern['pk']}']") is None
    assert "Area: drawn on the map" in page.inner_text(".chips")
    tab.shot("search-area")
    page.go_back()  # the address holds the state: back shows the whole list again
    page.wait_for_selector(f".card[data-pk='{southern['pk']}']")

    # open it: the preview map draws the cities
    page.goto(f"{tab.server.url}/#/?q=naturalearth_cities")
    page.click(f".card[data-pk='{pk}'] h2 a")
    page.wait_for_selector("#preview-map")
    tab.until("document.querySelectorAll('.dataset-tiles img.leaflet-tile-loaded').length > 0")
    page.wait_for_timeout(300)
    pixels = page.evaluate(TILE_PIXELS)
    assert pixels["tiles"] > 0 and pixels["drawn"] > 50, pixels
    page.wait_for_selector(".attributes table")
    assert page.locator(".attributes tbody tr").count() == 100
    assert "WMS" in page.inner_text(".services")
    tab.shot("detail")

    # rename it
    page.click("a:text('Edit and share')")
    page.wait_for_selector("form[aria-label='Metadata']")
    page.fill("form[aria-label='Metadata'] input[name=title]", "Cities of the field survey")
    page.click("form[aria-label='Metadata'] button[type=submit]")
    page.wait_for_selector("form[aria-label='Metadata'] [role=status]:text('Saved.')")
    assert page.inner_text("section.edit h1") == "Edit dataset: Cities of the field survey"
    page.wait_for_selector("form[aria-label='Sharing'] select")
    tab.shot("edit")

    # make it private: everyone and every signed-in user get nothing
    page.select_option("select[aria-label='Access for Everyone, signed in or not']", "none")
    page.select_option("select[aria-label='Access for Every signed-in user']", "none")
    page.click("form[aria-label='Sharing'] button[type=submit]")
    page.wait_for_selector("form[aria-label='Sharing'] [role=status]:text('Sharing saved.')")
    tab.go(f"/dataset/{pk}", wait="h1:text('Cities of the field survey')")

    # signed out, nobody finds it or opens it
    tab.sign_out()
    tab.go("/?q=field survey", wait="[data-loaded]")
    # the page signed out of may draw its own results last: the search's answer is waited for
    tab.until("document.querySelector('.summary')?.textContent === 'Nothing found.'")
    tab.allow("Failed to load resource: the server responded with a status of 404")
    tab.go(f"/dataset/{pk}", wait="h1:text('Not found')")
    assert "sign in" in page.inner_text("main")
    tab.shot("anonymous-not-found")
