"""A server for the history tests, with its people: the superuser ``admin``, a staff member, the
``owner`` of the resources, a ``member`` of the group their resources are shared with (at view
level), and ``other``, who holds nothing. Bulk updates are on (PATCH of a list, and of all a query finds); a user who owns resources may be
deleted (they go to the principal superuser)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import httpx
import pytest

from tests.api.test_uploads import CITIES, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, in_process, make_group, make_user, unique
from tests.edits.conftest import points_gpkg

PRIVATE = '{"users": {"AnonymousUser": []}}'


def finish(client: httpx.Client, exec_id: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(f"/api/v2/resource-service/execution-status/{exec_id}")
        assert r.status_code == 200, r.text
        body = r.json()
        if body["status"] in ("finished", "failed"):
            return body
        assert time.monotonic() < deadline, f"{exec_id} still {body['status']} after {timeout} s"
        time.sleep(0.02)


class World(SimpleNamespace):
    def client(self, who: str) -> httpx.Client:
        """A client signed in as ``who`` (anonymous: none), kept for the package."""
        if who not in self.clients:
            auth = None if who == "anonymous" else (
                ("admin", ADMIN_PASSWORD) if who == "admin" else (self.users[who]["username"], self.users[who]["password"]))
            self.clients[who] = self.srv.client(auth=auth)
        return self.clients[who]

    def versions(self, pk: int, who: str = "admin", **params) -> dict:
        r = self.client(who).get(f"/api/v2/resources/{pk}/versions", params={"page_size": 100, **params})
        assert r.status_code == 200, r.text
        return r.json()

    def latest(self, pk: int) -> dict | None:
        found = self.versions(pk)["versions"]
        return found[0] if found else None

    def count(self, pk: int) -> int:
        return self.versions(pk)["total"]

    def new_map(self, who: str = "owner", **fields) -> int:
        r = self.client(who).post("/api/v2/maps", json={"title": unique("Survey map "), "maplayers": [], **fields})
        assert r.status_code == 201, r.text
        return int(r.json()["map"]["pk"])

    def new_document(self, who: str = "owner", **fields) -> int:
        r = self.client(who).post("/api/v2/documents", files={"doc_file": ("notes.txt", b"field notes\n", "text/plain")},
                                  data={"title": unique("Field notes "), **fields})
        assert r.status_code == 201, r.text
        return int(r.json()["document"]["pk"])

    def new_dataset(self, who: str = "owner") -> int:
        r = self.client(who).post("/api/v2/uploads/upload", files=shapefile_parts(CITIES))
        assert r.status_code == 201, r.text
        status = finish(self.client(who), r.json()["execution_id"])
        assert status["status"] == "finished", status
        return int(status["output_params"]["resources"][0]["id"])

    def new_points(self, who: str = "owner", n: int = 10) -> int:
        """A vector dataset of ``n`` points (fields label, n, height, ok, day), edited in place."""
        path = points_gpkg(self.folder, n, unique("points"))
        r = self.client(who).post("/api/v2/uploads/upload", files={
            "base_file": (path.name, path.read_bytes(), "application/geopackage+sqlite3")})
        assert r.status_code == 201, r.text
        status = finish(self.client(who), r.json()["execution_id"])
        assert status["status"] == "finished", status
        return int(status["output_params"]["resources"][0]["id"])

    def share(self, pk: int) -> None:
        """Private to everyone but the owner and the group (which may view it)."""
        spec = {"organizations": [{"id": self.group["group"]["pk"], "permissions": "view"}],
                "groups": [{"id": gid, "permissions": "none"} for gid in self.special]}
        r = self.client("admin").put(f"/api/v2/resources/{pk}/permissions", json=spec)
        assert r.status_code == 200, r.text
        assert finish(self.client("admin"), r.json()["execution_id"])["status"] == "finished"


@pytest.fixture(scope="package")
def world(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("history") / "data", env={"ENABLE_BULK_UPDATE": "true", "ENABLE_PATCH_ALL": "true", "USER_DELETION_RULES": "user_is_manager"})
    w = World(srv=srv, clients={}, users={}, folder=tmp_path_factory.mktemp("history-sources"))
    admin = w.client("admin")
    for who in ("owner", "other", "member", "heir"):
        w.users[who] = make_user(admin)
    w.users["staff"] = make_user(admin, is_staff=True)
    w.users["superuser"] = make_user(admin, is_superuser=True)
    w.group = make_group(admin, title=unique("Surveyors "))
    r = admin.post(f"/api/v2/groups/{w.group['pk']}/members", json={"users": [w.users["member"]["pk"]], "role": "member"})
    assert r.status_code == 200, r.text
    probe = w.new_map()
    w.special = [g["id"] for g in admin.get(f"/api/v2/resources/{probe}/permissions").json()["groups"]]
    yield w
    for c in w.clients.values():
        c.close()
    srv.stop()
