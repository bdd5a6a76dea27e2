"""One server for the OGC tests, holding datasets uploaded from tests/data: countries and cities
(public: anyone may view and download), RGB.byte.tif (public, UTM 18N), a private copy of the
countries owned by `owner`, which `viewer` may view but not download. Tests that change a
dataset (its style, its thumbnail) upload their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.test_uploads import CITIES, COUNTRIES, DATA, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, login, make_user

PUBLIC = '{"users": {"AnonymousUser": ["view_resourcebase", "download_resourcebase"]}}'
PRIVATE = '{"users": {"AnonymousUser": []}}'


def upload_shapefile(client, folder: Path, permissions: str = PUBLIC, **fields) -> dict:
    """Upload a Shapefile folder; the finished dataset's detail."""
    r = client.post("/api/v2/uploads/upload", files=shapefile_parts(folder),
                    data={"permissions": permissions, **fields})
    return imported(client, r)


def upload_tif(client, name: str, permissions: str = PUBLIC, **fields) -> dict:
    path = DATA / name
    r = client.post("/api/v2/uploads/upload", files={"base_file": (path.name, path.read_bytes(), "image/tiff")},
                    data={"permissions": permissions, **fields})
    return imported(client, r)


@pytest.fixture(scope="session")
def ogc(tmp_path_factory):
    """{"srv", "admin", "owner", "viewer" (user dicts with passwords), "countries", "cities",
    "rgb", "private" (dataset details)}."""
    srv = Server(tmp_path_factory.mktemp("ogc") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, viewer = make_user(admin), make_user(admin)
    out = {"srv": srv, "admin": admin, "owner": owner, "viewer": viewer}
    out["countries"] = upload_shapefile(admin, COUNTRIES)
    out["cities"] = upload_shapefile(admin, CITIES)
    out["rgb"] = upload_tif(admin, "RGB.byte.tif")
    with login(srv, owner) as c:
        out["private"] = upload_shapefile(c, COUNTRIES, PRIVATE, dataset_title="Private countries")
        r = c.put(f"/api/v2/resources/{out['private']['pk']}/permissions",
                  json={"users": [{"id": viewer["pk"], "permissions": "view"}]})
        assert r.status_code == 200, r.text
    yield out
    admin.close()
    srv.stop()
