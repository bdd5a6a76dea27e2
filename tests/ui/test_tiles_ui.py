"""The web UI's maps on OGC API tiles: the basemap and a dataset's preview are drawn by Leaflet
from /ogcapi/.../tiles/... (PNG, 200), the tile images load and show the data, a map's layers
come as tiles too, and nothing fails in the console."""

from __future__ import annotations

from tests.ogc.conftest import upload_shapefile
from tests.ui.conftest import DATA

DRAWN = """(selector) => {
  const tiles = [...document.querySelectorAll(selector + ' img.leaflet-tile-loaded')];
  let drawn = 0;
  for (const img of tiles) {
    const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) drawn++;
  }
  return { tiles: tiles.length, drawn, sources: tiles.map((img) => img.src) };
}"""


def watch(page) -> list:
    """The answers to tile requests the page makes, as (url, status, content type)."""
    seen: list = []
    page.on("response", lambda r: seen.append((r.url, r.status, r.headers.get("content-type", "")))
            if "/tiles/" in r.url or "/geoserver/" in r.url else None)
    return seen


def test_the_dataset_preview_and_the_basemap_are_tiles(tab, ui_admin):
    dataset = upload_shapefile(ui_admin, DATA / "naturalearth_lowres", dataset_title="Tiled countries")
    name = dataset["alternate"].split(":", 1)[1]
    page = tab.page
    answers = watch(page)
    tab.go(f"/dataset/{dataset['pk']}", wait="#preview-map")
    tab.until("document.querySelectorAll('#preview-map .dataset-tiles img.leaflet-tile-loaded').length > 0")
    tab.until("document.querySelectorAll('#preview-map .basemap-tiles img.leaflet-tile-loaded').length > 0")
    page.wait_for_timeout(500)
    data = page.evaluate(DRAWN, "#preview-map .dataset-tiles")
    assert data["tiles"] > 0 and data["drawn"] > 5000, data
    assert all(f"/ogcapi/collections/{name}/map/tiles/WebMercatorQuad/" in src for src in data["sources"])
    base = page.evaluate(DRAWN, "#preview-map .basemap-tiles")
    assert base["tiles"] > 0 and all("/ogcapi/map/tiles/WebMercatorQuad/" in src for src in base["sources"])
    tiles = [a for a in answers if "/ogcapi/" in a[0]]
    assert tiles and all(status in (200, 304) and (status == 304 or media == "image/png") for _, status, media in tiles), tiles
    assert not [a for a in answers if "request=GetMap" in a[0]]  # no WMS GetMap for the map itself
    # the page gives the OGC API and XYZ addresses to copy into QGIS, and they answer
    ogcapi = page.input_value("section.services input[aria-label='OGC API – Features address']")
    xyz = page.input_value("section.services input[aria-label='XYZ tiles address']")
    assert ogcapi == f"{tab.server.url}/ogcapi/"
    assert xyz == f"{tab.server.url}/ogcapi/collections/{name}/map/tiles/WebMercatorQuad/{{z}}/{{y}}/{{x}}"
    assert ui_admin.get(ogcapi).status_code == 200
    tile = ui_admin.get(xyz.format(z=1, y=0, x=1))
    assert tile.status_code == 200 and tile.headers["content-type"] == "image/png"
    tab.shot("preview")


def test_a_map_and_the_search_page_draw_tiles(tab, ui_admin):
    countries = upload_shapefile(ui_admin, DATA / "naturalearth_lowres", dataset_title="Countries for a map")
    cities = upload_shapefile(ui_admin, DATA / "naturalearth_cities", dataset_title="Cities for a map")
    r = ui_admin.post("/api/v2/maps", json={"resource_type": "map", "title": "Tiled map", "maplayers": [
        {"name": countries["alternate"], "order": 0, "visibility": True, "opacity": 0.8},
        {"name": cities["alternate"], "order": 1, "visibility": True, "opacity": 1.0}]})
    assert r.status_code in (200, 201), r.text
    the_map = r.json()["map"]
    page = tab.page
    answers = watch(page)
    tab.go(f"/map/{the_map['pk']}", wait="#map-view")
    tab.until("document.querySelectorAll('#map-view .dataset-tiles img.leaflet-tile-loaded').length > 1")
    page.wait_for_timeout(500)
    drawn = page.evaluate(DRAWN, "#map-view .dataset-tiles")
    assert drawn["drawn"] > 1000, drawn
    names = {a[0].split("/collections/")[1].split("/")[0] for a in answers if "/collections/" in a[0]}
    assert {countries["alternate"].split(":")[1], cities["alternate"].split(":")[1]} <= names
    assert all(status in (200, 304) for url, status, _ in answers if "/ogcapi/" in url)
    tab.shot("map")
    tab.go("/", wait="section.search[data-loaded]")
    tab.until("document.querySelectorAll('.basemap-tiles img.leaflet-tile-loaded').length > 0")
    tab.shot("search")
