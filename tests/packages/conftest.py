"""Two catalogues (an office and a field laptop), each an app in this process with a data folder
of its own, and nothing between them but package files. The office holds Natural Earth's
countries (owned by `owner`), a document and a map of the countries."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.test_uploads import COUNTRIES, finished, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, in_process, login, make_user, poll

PUBLIC = '{"users": {"AnonymousUser": ["view_resourcebase", "download_resourcebase"]}}'


def upload_countries(client, title: str = "Countries") -> dict:
    status = finished(client, client.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES),
                                          data={"dataset_title": title, "permissions": PUBLIC}))
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    return client.get(f"/api/v2/datasets/{pk}").json()["dataset"]


def upload_document(client, title: str = "Field notes") -> dict:
    r = client.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"notes from the office\n", "text/plain")},
                    data={"title": title})
    assert r.status_code == 201, r.text
    return r.json()["document"]


def make_map(client, dataset: dict, title: str = "Countries map") -> dict:
    blob = client.get("/static/mapstore/configs/map.json").json()
    r = client.post("/api/v2/maps/", json={"title": title, "blob": blob, "maplayers": [
        {"name": dataset["alternate"], "order": 0, "visibility": True, "opacity": 1, "current_style": None,
         "extra_params": {"msId": f"{dataset['alternate']}__0"}}]})
    assert r.status_code == 201, r.text
    return r.json()["map"]


def import_over_http(client, path: Path, dry_run: bool = False, timeout: float = 60) -> dict:
    """POST the package, wait for its execution; returns the final status."""
    r = client.post("/api/v2/packages/imports", files={"file": (path.name, path.read_bytes(), "application/zip")},
                    data={"dry_run": "true" if dry_run else "false"})
    assert r.status_code == 201, r.text
    receipt = r.json()
    assert receipt["status"] == "ready" and receipt["execution_id"]
    return poll(client, receipt["status_url"], timeout=timeout)


def import_cli(data_dir: Path, path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "catalogue_app", "package", "import", str(path), "--data-dir",
                           str(data_dir), *args], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD})


def counts(data_dir: Path) -> dict:
    """What a refused import must leave as it was: rows and files."""
    conn = sqlite3.connect(data_dir / "catalogue.sqlite3", timeout=30)
    try:
        out = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
               for t in ("resources", "resource_files", "resource_versions", "packages", "package_members",
                         "resource_tombstones")}
    finally:
        conn.close()
    out["files"] = sorted(p.relative_to(data_dir).as_posix() for p in (data_dir / "files").rglob("*") if p.is_file())
    return out


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    root = tmp_path_factory.mktemp("office")
    srv = in_process(root / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner = make_user(admin)
    c = login(srv, owner)
    out = {"srv": srv, "dir": root / "data", "admin": admin, "owner": owner, "c": c, "root": root}
    out["countries"] = upload_countries(c)
    out["document"] = upload_document(c)
    out["map"] = make_map(c, out["countries"])
    yield out
    c.close()
    admin.close()
    srv.stop()


@pytest.fixture
def field(tmp_path):
    """A fresh catalogue for each test (the laptop)."""
    srv = in_process(tmp_path / "field")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    yield {"srv": srv, "dir": tmp_path / "field", "admin": admin, "tmp": tmp_path}
    admin.close()
    srv.stop()
