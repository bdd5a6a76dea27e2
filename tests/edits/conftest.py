"""One server (a real `catalogue serve` process with two workers) for the edit tests, holding
Natural Earth's countries (owned by `owner`) and a point layer made here. Tests that need data
of their own upload it (``upload_countries``, ``upload_points``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.test_uploads import COUNTRIES, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, login, make_group, make_user

PUBLIC = '{"users": {"AnonymousUser": ["view_resourcebase", "download_resourcebase"]}}'
PRIVATE = '{"users": {"AnonymousUser": []}}'


def upload_countries(client, title: str = "Countries") -> dict:
    r = client.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES),
                    data={"permissions": PUBLIC, "dataset_title": title})
    return imported(client, r)


def points_gpkg(folder: Path, n: int = 20, name: str = "points") -> Path:
    """A GeoPackage of ``n`` points (EPSG:4326) with a text, an integer, a real, a boolean and a
    date field, written with pyogrio."""
    import numpy as np
    import shapely

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.gpkg"
    path.unlink(missing_ok=True)
    xs = np.linspace(-10, 10, n)
    ys = np.linspace(40, 50, n)
    geometry = shapely.to_wkb(shapely.points(xs, ys))
    fields = {"label": np.array([f"p{i}" for i in range(n)], dtype=object),
              "n": np.arange(n, dtype=np.int32),
              "height": np.arange(n, dtype=np.float64) * 1.5,
              "ok": np.array([i % 2 == 0 for i in range(n)]),
              "day": np.array([f"2024-01-{1 + i % 28:02d}" for i in range(n)], dtype="datetime64[D]")}
    import pyogrio.raw

    pyogrio.raw.write(path, geometry, list(fields.values()), list(fields), layer=name, driver="GPKG",
                      geometry_type="Point", crs="EPSG:4326")
    return path


def upload_points(client, folder: Path, n: int = 20, name: str = "points", title: str = "Points",
                  permissions: str = PUBLIC) -> dict:
    path = points_gpkg(folder, n, name)
    r = client.post("/api/v2/uploads/upload", files={"base_file": (path.name, path.read_bytes(), "application/geopackage+sqlite3")},
                    data={"permissions": permissions, "dataset_title": title})
    return imported(client, r)


@pytest.fixture(scope="session")
def ed(tmp_path_factory):
    """{"srv", "admin", "owner", "other", "member" (users with passwords; `member` is in `group`,
    which may edit both datasets), "group", "countries", "points" (dataset details)}."""
    root = tmp_path_factory.mktemp("edits")
    srv = Server(root / "data", workers=2)
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, member = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin)
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]]})
    assert r.status_code == 200, r.text
    out = {"srv": srv, "admin": admin, "owner": owner, "other": other, "member": member, "group": group,
           "root": root, "admin_user": {"username": "admin", "password": ADMIN_PASSWORD}}
    with login(srv, owner) as c:
        out["countries"] = upload_countries(c)
        out["points"] = upload_points(c, root / "src")
        for name in ("countries", "points"):
            r = c.patch(f"/api/v2/resources/{out[name]['pk']}/permissions",
                        json={"groups": [{"id": group["group"]["pk"], "permissions": "edit"}]})
            assert r.status_code == 200, r.text
    yield out
    admin.close()
    srv.stop()


def features(client, dataset: dict, **params) -> dict:
    """The dataset's features through WFS GetFeature as GeoJSON, by fid."""
    r = client.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typeNames": dataset["alternate"], "outputFormat": "application/json",
                                             **params})
    assert r.status_code == 200, r.text
    return {int(f["id"].rsplit(".", 1)[1]): f for f in r.json()["features"]}
