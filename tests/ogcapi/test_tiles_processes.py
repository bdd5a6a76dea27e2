"""The tile cache with several server processes: each keeps its own tiles, and none serves a tile
drawn before an edit once the edit is made (the cache's key holds the data version, read from
the catalogue with each request)."""

from __future__ import annotations

import httpx
import mapbox_vector_tile
import pytest

from tests.api.test_uploads import COUNTRIES
from tests.conftest import ADMIN_PASSWORD, Server
from tests.ogc.conftest import PUBLIC, upload_shapefile
from tests.ogcapi.test_tiles import TMS, cid_of, lonlat_tile, pixel_of, png


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("tiles-procs") / "data", workers=2)
    yield srv
    srv.stop()


def test_no_worker_serves_a_tile_drawn_before_an_edit(two_workers):
    srv = two_workers
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        dataset = upload_shapefile(admin, COUNTRIES, PUBLIC, dataset_title="Countries in two workers")
        cid = cid_of(dataset)
        y, x = lonlat_tile(-52, -10, 3)
        col, row = pixel_of(-52, -10, 3)
        url = f"{srv.url}/ogcapi/collections/{cid}/map/tiles/{TMS}/3/{y}/{x}"
        for _ in range(30):  # a new connection each time: both workers draw and keep the tile
            r = httpx.get(url, headers={"Connection": "close"})
            assert png(r)[row, col, 3] == 255
        features = httpx.get(f"{srv.url}/ogcapi/collections/{cid}/tiles/{TMS}/3/{y}/{x}")
        brazil = next(f for f in mapbox_vector_tile.decode(features.content)[cid]["features"]
                      if f["properties"]["name"] == "Brazil")
        r = admin.post(f"/api/v2/datasets/{dataset['pk']}/edits", json={"delete": [brazil["id"]]})
        assert r.status_code in (200, 201), r.text
        for _ in range(30):
            r = httpx.get(url, headers={"Connection": "close"})
            assert png(r)[row, col, 3] == 0
