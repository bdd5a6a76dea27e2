"""A catalogue for the tests of package conflicts, with its people: the superuser ``admin``, the
``owner`` of the resources, a ``member`` of a group that may edit the shared ones, ``other``, who
holds nothing, and ``staff``.

A conflict is made on a real catalogue: a resource is changed here through the API, then a
package's incoming copy of it (a record as the package carries it, and its files in a folder under
tmp/) is set aside by packages/conflicts.py ``set_aside``, in a write on the server's own SQLite
file, as the import does.
"""

from __future__ import annotations

import json
import uuid as uuids
from pathlib import Path
from typing import Any

import httpx

from catalogue_app.clock import now
from catalogue_app.packages import conflicts
from catalogue_app.store.db import Database
from tests.conftest import make_group, make_user, unique
from tests.history.conftest import World, finish

MADE_BY = "fieldworker"


class ConflictWorld(World):
    """The history tests' world (a client per person), with what conflicts need besides."""

    @property
    def files(self) -> Path:
        return self.srv.settings.files_dir

    def new_document(self, who: str = "owner", **fields) -> dict:
        r = self.client(who).post("/api/v2/documents", files={"doc_file": ("notes.txt", b"field notes\n", "text/plain")},
                                  data={"title": unique("Field notes "), **fields})
        assert r.status_code == 201, r.text
        return self.resource(int(r.json()["document"]["pk"]))

    def resource(self, pk: int, who: str = "admin") -> dict:
        r = self.client(who).get(f"/api/v2/resources/{pk}")
        assert r.status_code == 200, r.text
        return r.json()["resource"]

    def patch(self, pk: int, who: str = "owner", **fields) -> None:
        r = self.client(who).patch(f"/api/v2/resources/{pk}", json=fields)
        assert r.status_code == 200, r.text

    def versions(self, pk: int, who: str = "admin") -> list[dict]:
        r = self.client(who).get(f"/api/v2/resources/{pk}/versions", params={"page_size": 100})
        assert r.status_code == 200, r.text
        return r.json()["versions"]

    def share(self, pk: int, level: str = "edit", public: bool = True) -> None:
        """The world's group gets ``level`` on the resource; everyone else may view it (or, not
        ``public``, nothing)."""
        spec: dict[str, Any] = {"organizations": [{"id": self.group["group"]["pk"], "permissions": level}]}
        if not public:
            spec["groups"] = [{"id": gid, "permissions": "none"} for gid in self.special]
        r = self.client("admin").put(f"/api/v2/resources/{pk}/permissions", json=spec)
        assert r.status_code == 200, r.text
        assert finish(self.client("admin"), r.json()["execution_id"])["status"] == "finished"

    def package(self, importer: str = "owner") -> str:
        """A packages row for an imported package made by ``MADE_BY`` in another catalogue."""
        return add_package(self.db, None if importer == "admin" else self.users[importer]["pk"])

    def incoming(self, resource: dict, **fields) -> dict:
        return incoming_record(resource, **fields)

    def files_under_tmp(self, name: str = "notes.txt", data: bytes = b"notes from the field\n") -> Path:
        """A folder of incoming files under tmp/, as the import extracts them."""
        folder = self.srv.settings.tmp_dir / unique("incoming-")
        (folder / "data").mkdir(parents=True)
        (folder / "data" / name).write_bytes(data)
        return folder

    def set_aside(self, resource: dict | None, record: dict, *, kind: str = "changed_both", importer: str = "owner",
                  folder: Path | None = None) -> int:
        package_id = self.package(importer)
        rid = resource["pk"] if resource is not None else None
        return self.db.write_sync(lambda conn: conflicts.set_aside(
            conn, package_id, record, int(rid) if rid is not None else None, kind, folder, files_dir=self.files))

    def conflict(self, cid: int, who: str = "owner") -> httpx.Response:
        return self.client(who).get(f"/api/v2/packages/conflicts/{cid}")

    def resolve(self, cid: int, keep: Any, who: str = "owner") -> httpx.Response:
        return self.client(who).post(f"/api/v2/packages/conflicts/{cid}", json={"keep": keep})

    def listed(self, who: str = "owner") -> list[dict]:
        r = self.client(who).get("/api/v2/packages/conflicts")
        assert r.status_code == 200, r.text
        return r.json()["conflicts"]


def add_package(db: Database, user_id: int | None) -> str:
    """A packages row for a package made by ``MADE_BY`` in another catalogue and imported here by
    the user ``user_id``; returns its id."""
    package_id = str(uuids.uuid4())
    manifest = {"format": "catalogue-package", "format_version": 1, "id": package_id, "made_by": MADE_BY,
                "catalogue": {"id": "field-laptop", "url": "http://laptop.invalid", "key": None}}

    def write(conn):
        conn.execute("INSERT INTO packages (id, direction, created, user_id, maker, manifest)"
                     " VALUES (?, 'import', ?, ?, 'field-laptop', ?)", (package_id, now(), user_id, json.dumps(manifest)))

    db.write_sync(write)
    return package_id


def incoming_record(resource: dict, **fields) -> dict:
    """The package's record of ``resource`` (its API JSON) as changed in the field: ``fields``
    over its own, the keyword "field", and version 7 made there by ``MADE_BY``."""
    own = {k: resource.get(k) for k in ("title", "abstract", "purpose", "supplemental_information", "language",
                                         "date", "date_type", "last_updated", "created", "subtype", "is_published",
                                         "is_approved", "advertised", "featured", "metadata_only")}
    own.update(fields)
    version = {"number": 7, "data_version": 0, "last_updated": "2026-11-01T10:00:00.000000Z"}
    return {"uuid": resource["uuid"], "resource_type": resource["resource_type"], "fields": own, "blob": None,
            "owner": resource["owner"]["username"], "group": None, "category": None, "license": None,
            "keywords": ["field"], "tkeywords": [], "regions": [], "contacts": [], "extra_metadata": [],
            "links": [], "linked_resources": [], "permissions": {"users": {}, "groups": {}},
            "thumbnail": None, "iso_metadata": None, "styles": [], "dataset": None, "remote_layer": None,
            "document": None, "map": None, "geoapp": None, "origin": None, "version": version,
            "history": [{"uuid": str(uuids.uuid4()), "number": 6, "username": "someone"},
                        {"uuid": str(uuids.uuid4()), "number": 7, "username": MADE_BY}]}


def make_world(tmp_path_factory) -> ConflictWorld:
    from tests.conftest import in_process

    srv = in_process(tmp_path_factory.mktemp("conflicts") / "data")
    w = ConflictWorld(srv=srv, clients={}, users={}, db=Database(srv.settings.database_path))
    admin = w.client("admin")
    for who in ("owner", "other", "member"):
        w.users[who] = make_user(admin)
    w.users["staff"] = make_user(admin, is_staff=True)
    w.group = make_group(admin, title=unique("Field team "))
    r = admin.post(f"/api/v2/groups/{w.group['pk']}/members", json={"users": [w.users["member"]["pk"]], "role": "member"})
    assert r.status_code == 200, r.text
    probe = w.new_document()
    w.special = [g["id"] for g in admin.get(f"/api/v2/resources/{probe['pk']}/permissions").json()["groups"]]
    return w


def close_world(w: ConflictWorld) -> None:
    for c in w.clients.values():
        c.close()
    w.db.close()
    w.srv.stop()
