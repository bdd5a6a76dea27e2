"""A map of the catalogue drawn by the WMS: LAYERS=catalogue:map_<pk> draws the map's visible
layers in order, with their opacity and style, and only those the caller may see."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import poll
from tests.ogc.conftest import upload_shapefile

DATA = Path(__file__).resolve().parents[1] / "data"
EUROPE = "-10,35,30,60"


def upload(client, stem: str) -> dict:
    """The dataset of one of the Shapefiles in tests/data (public), once imported."""
    return upload_shapefile(client, DATA / stem)


def get_map(client, layers: str, **extra) -> np.ndarray:
    params = {"service": "WMS", "version": "1.1.1", "request": "GetMap", "layers": layers, "styles": "",
              "srs": "EPSG:4326", "bbox": EUROPE, "width": 320, "height": 200, "format": "image/png",
              "transparent": "true", **extra}
    r = client.get("/geoserver/ows", params=params)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:300]
    return np.asarray(Image.open(io.BytesIO(r.content)).convert("RGBA"))


@pytest.fixture(scope="module")
def layers(admin):
    return upload(admin, "naturalearth_lowres"), upload(admin, "naturalearth_cities")


@pytest.fixture
def a_map(admin, layers):
    countries, cities = layers
    r = admin.post("/api/v2/maps", json={"resource_type": "map", "title": "Europe", "maplayers": [
        {"name": countries["alternate"], "order": 0, "visibility": True, "opacity": 1.0},
        {"name": cities["alternate"], "order": 1, "visibility": True, "opacity": 1.0}]})
    assert r.status_code in (200, 201), r.text
    return r.json()["map"]


def test_a_map_draws_its_layers_in_order(admin, layers, a_map):
    countries, cities = layers
    drawn = get_map(admin, f"catalogue:map_{a_map['pk']}")
    both = get_map(admin, f"{countries['alternate']},{cities['alternate']}")
    assert np.array_equal(drawn, both)
    assert (drawn[..., 3] > 0).sum() > 10_000  # countries fill most of it
    alone = get_map(admin, countries["alternate"])
    assert (drawn != alone).any(axis=-1).sum() > 50  # the cities are drawn over them
    assert np.array_equal(get_map(admin, f"map_{a_map['pk']}"), drawn)


def test_a_hidden_layer_draws_nothing_and_opacity_fades(admin, layers, a_map):
    countries, cities = layers
    maplayers = admin.get(f"/api/v2/maps/{a_map['pk']}").json()["map"]["maplayers"]
    by_name = {layer["name"]: layer for layer in maplayers}
    r = admin.patch(f"/api/v2/maps/{a_map['pk']}", json={"maplayers": [
        {"pk": by_name[countries["alternate"]]["pk"], "name": countries["alternate"], "order": 0, "visibility": True,
         "opacity": 0.5},
        {"pk": by_name[cities["alternate"]]["pk"], "name": cities["alternate"], "order": 1, "visibility": False,
         "opacity": 1.0}]})
    assert r.status_code == 200, r.text
    drawn = get_map(admin, f"catalogue:map_{a_map['pk']}")
    alone = get_map(admin, countries["alternate"])
    land = alone[..., 3] == 255
    assert land.sum() > 1000
    assert set(np.unique(drawn[land][:, 3])) <= {127, 128}  # half as opaque, no city on top


def test_the_map_shows_only_what_the_caller_may_see(server, admin, anon, layers, a_map):
    countries, cities = layers
    r = admin.put(f"/api/v2/resources/{cities['pk']}/permissions",
                  json={"users": [], "groups": [{"id": 1, "permissions": "none"}, {"id": 2, "permissions": "none"}],
                        "organizations": []})
    assert r.status_code == 200
    poll(admin, r.json()["status_url"])
    try:
        seen = get_map(anon, f"catalogue:map_{a_map['pk']}")
        assert np.array_equal(seen, get_map(anon, countries["alternate"]))
        assert not np.array_equal(get_map(admin, f"catalogue:map_{a_map['pk']}"), seen)
    finally:
        r = admin.put(f"/api/v2/resources/{cities['pk']}/permissions",
                      json={"users": [], "groups": [{"id": 1, "permissions": "download"}], "organizations": []})
        poll(admin, r.json()["status_url"])


@pytest.mark.parametrize("name", ["catalogue:map_999999", "map_0", "map_123456789012345678901"])
def test_an_unknown_map_is_not_defined(anon, name):
    r = anon.get("/geoserver/ows", params={"service": "WMS", "version": "1.1.1", "request": "GetMap", "layers": name,
                                           "styles": "", "srs": "EPSG:4326", "bbox": EUROPE, "width": 10,
                                           "height": 10, "format": "image/png"})
    assert r.status_code in (400, 404)
    assert "LayerNotDefined" in r.text or "InvalidParameterValue" in r.text


def test_a_private_map_is_not_drawn_for_others(admin, anon, a_map):
    r = admin.put(f"/api/v2/resources/{a_map['pk']}/permissions",
                  json={"users": [], "groups": [{"id": 1, "permissions": "none"}, {"id": 2, "permissions": "none"}],
                        "organizations": []})
    poll(admin, r.json()["status_url"])
    r = anon.get("/geoserver/ows", params={"service": "WMS", "version": "1.1.1", "request": "GetMap",
                                           "layers": f"catalogue:map_{a_map['pk']}", "styles": "", "srs": "EPSG:4326",
                                           "bbox": EUROPE, "width": 10, "height": 10, "format": "image/png"})
    assert r.status_code == 400 and "LayerNotDefined" in r.text


def test_saving_a_map_draws_its_thumbnail(admin, anon, layers, a_map):
    _countries, _ = layers
    url = admin.get(f"/api/v2/maps/{a_map['pk']}").json()["map"]["thumbnail_url"]
    assert url and "/uploaded/thumbs/" in url
    image = np.asarray(Image.open(io.BytesIO(anon.get(url).content)).convert("RGB"))
    assert image.shape == (200, 500, 3)
    colours = {tuple(c) for c in image.reshape(-1, 3)[::97]}
    assert (0xDC, 0xE7, 0xEE) in colours  # the sea of the basemap
    assert (0xD6, 0xD0, 0xC4) in colours  # the countries dataset's default fill, over the land
    r = admin.patch(f"/api/v2/maps/{a_map['pk']}", json={"maplayers": []})
    assert r.status_code == 200
    again = admin.get(f"/api/v2/maps/{a_map['pk']}").json()["map"]["thumbnail_url"]
    assert again != url
    redrawn = np.asarray(Image.open(io.BytesIO(anon.get(again).content)).convert("RGB"))
    assert (0xD6, 0xD0, 0xC4) not in {tuple(c) for c in redrawn.reshape(-1, 3)}


def test_a_map_links_to_the_wms_that_draws_it(admin, a_map):
    links = admin.get(f"/api/v2/maps/{a_map['pk']}").json()["map"]["links"]
    wms = [link for link in links if link["link_type"] == "OGC:WMS"]
    assert [(link["name"], link["url"].endswith("/geoserver/ows")) for link in wms] == \
        [(f"catalogue:map_{a_map['pk']}", True)]
    png = next(link for link in links if link["name"] == "PNG")
    r = admin.get(png["url"])
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"


def test_a_dataset_named_like_a_map_gets_another_name(admin, tmp_path):
    folder = tmp_path / "named"
    folder.mkdir()
    for part in (DATA / "naturalearth_cities").iterdir():
        (folder / f"map_1{part.suffix}").write_bytes(part.read_bytes())
    files = {key: (f"map_1.{ext}", (folder / f"map_1.{ext}").read_bytes())
             for key, ext in (("base_file", "shp"), ("dbf_file", "dbf"), ("shx_file", "shx"), ("prj_file", "prj"))}
    r = admin.post("/api/v2/uploads/upload", files=files)
    state = poll(admin, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")
    made = admin.get(f"/api/v2/datasets/{state['output_params']['resources'][0]['id']}").json()["dataset"]
    assert made["alternate"] == "catalogue:map_1_2"  # catalogue:map_1 names the map of pk 1


def test_the_embed_page_of_a_map_draws_it(admin, anon, a_map):
    page = anon.get(f"/maps/{a_map['pk']}/embed")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f'data-layer="catalogue:basemap,catalogue:map_{a_map["pk"]}"' in page.text
    assert 'data-wms="' in page.text and "/static/embed/viewer.js" in page.text
