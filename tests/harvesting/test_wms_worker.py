"""The WMS harvester's worker against a running catalogue's own WMS, holding two uploaded
Shapefiles and a GeoTIFF."""

from __future__ import annotations

import httpx
import msgspec
import pytest

from catalogue_app.harvesting import http, registry
from catalogue_app.harvesting.types import HarvestError, RemoteLayer
from catalogue_app.harvesting.wms import Config, WmsWorker
from tests.api.test_uploads import CITIES, COUNTRIES
from tests.conftest import ADMIN_PASSWORD, Server, free_port
from tests.ogc.conftest import upload_shapefile, upload_tif


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("wms-worker") / "data")
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
        countries = upload_shapefile(c, COUNTRIES, dataset_title="Countries of the world")
        cities = upload_shapefile(c, CITIES, dataset_title="Populated places")
        rgb = upload_tif(c, "RGB.byte.tif", dataset_title="An RGB image")
    with http.client() as client:
        yield {"srv": srv, "ows": f"{srv.url}/geoserver/ows", "countries": countries, "cities": cities, "rgb": rgb,
               "http": client}
    srv.stop()


def worker(site, url: str | None = None, **config) -> WmsWorker:
    return registry.worker(registry.WMS, url or site["ows"], registry.checked_config(registry.WMS, config),
                           site["http"])


def test_offered_lists_every_named_layer(site):
    w = worker(site)
    assert w.available()
    items = {i.unique_identifier: i for i in w.offered()}
    for key in ("countries", "cities", "rgb"):
        alternate = site[key]["alternate"]
        assert items[alternate].title == site[key]["title"] and items[alternate].resource_type == "dataset"
    assert "catalogue:basemap" in items  # the catalogue's own basemap is a layer of its WMS too


def test_harvest_gives_a_remote_layer(site):
    w = worker(site)
    item = next(i for i in w.offered() if i.unique_identifier == site["countries"]["alternate"])
    got = w.harvest(item)
    assert got.resource_type == "dataset"
    assert got.values == {"title": "Countries of the world", "abstract": site["countries"]["abstract"]}
    assert isinstance(got.data, RemoteLayer)
    assert got.data.service_url == site["ows"] and got.data.layer_name == site["countries"]["alternate"]
    x0, y0, x1, y1 = got.ll_bbox
    assert x0 == pytest.approx(-180, abs=0.01) and x1 == pytest.approx(180, abs=0.01) and y0 < -80 and y1 > 80
    assert [(link.link_type, link.name) for link in got.links] == [("OGC:WMS", site["countries"]["alternate"])]
    assert "request=GetCapabilities" in got.links[0].url
    thumb = httpx.get(got.thumbnail_url, timeout=30)
    assert thumb.status_code == 200 and thumb.content.startswith(b"\x89PNG"), thumb.text
    raster = w.harvest(next(i for i in w.offered() if i.unique_identifier == site["rgb"]["alternate"]))
    rx0, ry0, rx1, ry1 = raster.ll_bbox
    assert -80 < rx0 < rx1 < -70 and 15 < ry0 < ry1 < 30  # RGB.byte.tif lies off the Bahamas


def test_the_title_filter_is_honoured(site):
    w = worker(site, dataset_title_filter="PLACES")
    assert [i.unique_identifier for i in w.offered()] == [site["cities"]["alternate"]]
    assert list(worker(site, dataset_title_filter="nothing like it").offered()) == []


def test_config_is_checked(site):
    with pytest.raises(registry.BadConfiguration):
        registry.checked_config(registry.WMS, {"title_filter": "x"})
    assert registry.checked_config(registry.WMS, {}) == {"dataset_title_filter": None}
    assert msgspec.convert({"dataset_title_filter": "a"}, Config).dataset_title_filter == "a"


def test_a_per_layer_address_and_a_query_are_read(site):
    alternate = site["cities"]["alternate"]
    workspace, _, name = alternate.partition(":")
    w = worker(site, f"{site['srv'].url}/geoserver/{workspace}/{name}/wms?service=WMS&request=GetCapabilities")
    assert [i.unique_identifier for i in w.offered()] == [alternate]


def test_a_dead_address_is_a_clear_error(site):
    url = f"http://127.0.0.1:{free_port()}/wms"
    w = worker(site, url)
    assert w.available() is False
    with pytest.raises(HarvestError, match="could not be reached"):
        list(w.offered())
    not_wms = worker(site, f"{site['srv'].url}/api/v2/")
    with pytest.raises(HarvestError, match="no WMS capabilities"):
        list(not_wms.offered())
