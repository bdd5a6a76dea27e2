"""Maps in the browser: compose one from uploaded datasets, save it, look at it, change it."""

from __future__ import annotations

from tests.conftest import USER_PASSWORD
from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA

DRAWN = """() => [...document.querySelectorAll('#map-view .dataset-tiles')].map((pane) => {
  let drawn = 0;
  for (const img of pane.querySelectorAll('img.leaflet-tile-loaded')) {
    const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) drawn++;
  }
  return drawn;
})"""


def upload(client, stem: str) -> dict:
    """The dataset of one of the Shapefiles in tests/data (public), once imported."""
    return upload_shapefile(client, DATA / stem)


def add(page, text: str, title: str) -> None:
    page.fill("input[name=q]", text)
    page.click("form[role=search] button[type=submit]")
    page.click(f"button[aria-label='Add {title}']")
    page.wait_for_selector(f".layer-item[data-name] label:text('{title}')")


def test_compose_save_look_and_change_a_map(tab, ui_server, alice):
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        cities, countries = upload(as_alice, "naturalearth_cities"), upload(as_alice, "naturalearth_lowres")
    tab.sign_in("alice", USER_PASSWORD)
    page = tab.go("/map/new", wait="form[aria-label='Map']")
    add(page, "lowres", countries["title"])
    add(page, "cities", cities["title"])  # added on top
    page.evaluate("""() => { const r = document.querySelectorAll('.layer-item input[type=range]')[1];
      r.value = '0.5'; r.dispatchEvent(new Event('change')); }""")
    page.fill("form[aria-label='Map'] input[name=title]", "Capitals over countries")
    page.fill("form[aria-label='Map'] textarea[name=abstract]", "Where the capitals are.")
    tab.shot("composer")
    page.click("form[aria-label='Map'] button[type=submit]")
    page.wait_for_selector("article.detail h1:text('Capitals over countries')")
    pk = page.evaluate("location.hash").rsplit("/", 1)[1]

    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        saved = as_alice.get(f"/api/v2/maps/{pk}", params={"include[]": "data"}).json()["map"]
    layers = sorted(saved["maplayers"], key=lambda layer: layer["order"])
    assert [layer["name"] for layer in layers] == [countries["alternate"], cities["alternate"]]  # bottom first
    assert layers[0]["opacity"] == 0.5 and layers[1]["opacity"] == 1
    assert [layer["dataset"]["pk"] for layer in layers] == [int(countries["pk"]), int(cities["pk"])]
    assert saved["data"]["map"]["layers"][0]["name"] == "catalogue:basemap"

    # the map page: both layers drawn, the panel lists the top one first, with legends
    tab.until(f"({DRAWN})().length === 2 && ({DRAWN})().every((n) => n > 0)")
    assert page.locator(".layer-item label").all_inner_texts() == [cities["title"], countries["title"]]
    tab.until("[...document.querySelectorAll('img.legend')].every((i) => i.complete && i.naturalWidth > 0)")
    # QGIS users are told which layer of the WMS is this map
    assert page.locator("section.services code").inner_text() == f"catalogue:map_{pk}"
    tab.shot("map-page")
    page.uncheck(".layer-item >> nth=0 >> input[type=checkbox]")  # hide the cities
    tab.until(f"({DRAWN})().length === 1")

    # change it in the composer: remove the countries, save
    page.click("a:text('Open in the composer')")
    page.wait_for_selector("form[aria-label='Map']")
    page.click(f"button[aria-label='Remove {countries['title']}']")
    page.click("form[aria-label='Map'] button[type=submit]")
    page.wait_for_selector("article.detail h1:text('Capitals over countries')")
    with ui_server.client(auth=("alice", USER_PASSWORD)) as as_alice:
        after = as_alice.get(f"/api/v2/maps/{pk}").json()["map"]
    assert [layer["name"] for layer in after["maplayers"]] == [cities["alternate"]]
