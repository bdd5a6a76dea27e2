"""The people and things of the rule table (tests/rules/table.py), made on a running server
through its API: a user for every row, the resources' group with its member and manager, one
resource of each type owned by `owner` and shared as the table says, and more resources set up
alike for the cells that delete one. Only the rows that hold single permission names are written
into the database file: the API gives levels, never a name alone."""

from __future__ import annotations

import base64
import io
import json
import sqlite3
import time
from dataclasses import dataclass, field

import httpx
from PIL import Image

from tests.api.test_uploads import CITIES, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, make_group, make_user, unique
from tests.rules.table import DATASET_ONLY_ROWS, GROUP_LEVEL, HOLDERS, ROWS, TYPES

PRIVATE = '{"users": {"AnonymousUser": []}}'
ENDPOINTS = {"dataset": "datasets", "document": "documents", "map": "maps", "geoapp": "geoapps"}


def png(colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), colour).save(out, "PNG")
    return out.getvalue()


def data_uri(content: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(content).decode()


def finish(client: httpx.Client, exec_id: str, timeout: float = 60) -> dict:
    """The execution once it has ended (finished or failed)."""
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(f"/api/v2/resource-service/execution-status/{exec_id}")
        assert r.status_code == 200, r.text
        body = r.json()
        if body["status"] in ("finished", "failed"):
            return body
        assert time.monotonic() < deadline, f"{exec_id} still {body['status']} after {timeout} s"
        time.sleep(0.02)


@dataclass
class World:
    url: str
    database: str
    admin: httpx.Client
    users: dict[str, dict] = field(default_factory=dict)  # row -> user (with its password)
    group: dict = field(default_factory=dict)  # the resources' group profile
    resources: dict[str, dict] = field(default_factory=dict)  # type -> the owner's detail
    special: dict[str, int] = field(default_factory=dict)  # anonymous / registered-members -> group id
    upload_id: int = 0  # the owner's upload
    exec_id: str = ""  # a finished request of the owner's
    bystander: dict = field(default_factory=dict)  # a plain user that writes name (never a row)
    clients: dict[str, httpx.Client] = field(default_factory=dict)
    made: dict[tuple, object] = field(default_factory=dict)  # what the tests made or read once, by key

    def client(self, row: str) -> httpx.Client:
        """A client signed in as the row's user (anonymous: none), kept for the module."""
        if row not in self.clients:
            auth = None if row == "anonymous" else (self.users[row]["username"], self.users[row]["password"])
            self.clients[row] = httpx.Client(base_url=self.url, auth=auth, timeout=60)
        return self.clients[row]

    def close(self) -> None:
        for c in self.clients.values():
            c.close()

    # -- resources ---------------------------------------------------------------------------
    def create(self, kind: str) -> tuple[int | None, str | None]:
        """A new resource of the owner's: (pk, None), or (None, exec id) for a dataset, which is
        a copy of the owner's dataset (one upload only: it is slow)."""
        owner = self.client("owner")
        if kind == "dataset":
            r = owner.put(f"/api/v2/resources/{self.resources['dataset']['pk']}/copy",
                          data={"defaults": json.dumps({"title": unique("Cities ")})})
            assert r.status_code == 200, r.text
            return None, r.json()["execution_id"]
        if kind == "document":
            r = owner.post("/api/v2/documents", files={"doc_file": ("field.png", png(), "image/png")},
                           data={"title": unique("Field photograph ")})
        elif kind == "map":
            r = owner.post("/api/v2/maps", json={"title": unique("Survey map "), "maplayers": []})
        else:
            r = owner.post("/api/v2/geoapps", json={"name": unique("story-"), "title": unique("Story "),
                                                    "resource_type": "geostory"})
        assert r.status_code == 201, r.text
        return int(r.json()[kind]["pk"]), None

    def share(self, pks: list[int]) -> None:
        """Set up resources as the table says: in the group, the group at GROUP_LEVEL, nothing for
        everyone (API); the single permission names of the holder rows (database file)."""
        spec = {"organizations": [{"id": self.group["group"]["pk"], "permissions": GROUP_LEVEL}],
                "groups": [{"id": gid, "permissions": "none"} for gid in self.special.values()]}
        started = []
        for pk in pks:
            r = self.admin.patch(f"/api/v2/resources/{pk}", json={"group": self.group["group"]["pk"]})
            assert r.status_code == 200, r.text
            r = self.admin.put(f"/api/v2/resources/{pk}/permissions", json=spec)
            assert r.status_code == 200, r.text
            started.append(r.json()["execution_id"])
        for exec_id in started:
            assert finish(self.admin, exec_id)["status"] == "finished"
        kinds = {pk: self.admin.get(f"/api/v2/resources/{pk}").json()["resource"]["resource_type"] for pk in pks}
        grants = [(pk, self.users[row]["pk"], perm) for pk in pks for row, perms in HOLDERS.items()
                  if kinds[pk] == "dataset" or row not in DATASET_ONLY_ROWS for perm in perms]
        conn = sqlite3.connect(self.database, timeout=30)
        try:
            with conn:
                conn.executemany("INSERT INTO resource_perms (resource_id, user_id, group_id, perm)"
                                 " VALUES (?, ?, NULL, ?)", grants)
        finally:
            conn.close()

    def spares(self, kinds: list[str]) -> list[int]:
        """New resources of these types, each set up as the table says (for cells that delete
        one, or change one beyond repair)."""
        made: list[int | None] = []
        copies = []
        for kind in kinds:
            pk, exec_id = self.create(kind)
            made.append(pk)
            copies.append(exec_id)
        for i, exec_id in enumerate(copies):
            if exec_id is not None:
                status = finish(self.admin, exec_id)
                assert status["status"] == "finished", status
                made[i] = int(status["output_params"]["output"]["pk"])
        self.share([pk for pk in made if pk is not None])
        return [pk for pk in made if pk is not None]


def build(url: str, database: str) -> World:
    """Everything the table needs, on the server at ``url`` whose database file is ``database``."""
    admin = httpx.Client(base_url=url, auth=("admin", ADMIN_PASSWORD), timeout=60)
    world = World(url, database, admin)
    for row in ROWS:
        if row == "anonymous":
            continue
        extra = {"is_staff": True} if row == "staff" else {"is_superuser": True} if row == "superuser" else {}
        world.users[row] = make_user(admin, **extra)
    assert world.users["superuser"]["is_superuser"] and not world.users["staff"]["is_superuser"]
    world.bystander = make_user(admin)
    world.group = make_group(admin, title=unique("Surveyors "))
    for row, role in (("group member", "member"), ("group manager", "manager")):
        r = admin.post(f"/api/v2/groups/{world.group['pk']}/members",
                       json={"users": [world.users[row]["pk"]], "role": role})
        assert r.status_code == 200, r.text
    owner = world.client("owner")
    r = owner.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={"permissions": PRIVATE})
    assert r.status_code == 201, r.text
    status = finish(owner, r.json()["execution_id"])
    assert status["status"] == "finished", status
    dataset_pk = status["output_params"]["resources"][0]["id"]
    world.upload_id = next(u["id"] for u in owner.get("/api/v2/uploads/").json()["uploads"]
                           if u["execution_id"] == r.json()["execution_id"])
    world.resources["dataset"] = {"pk": dataset_pk}
    pks = {"dataset": dataset_pk}
    for kind in TYPES[1:]:
        pks[kind] = world.create(kind)[0]
    world.special = {g["name"]: g["id"] for g in admin.get(f"/api/v2/resources/{dataset_pk}/permissions").json()["groups"]}
    world.share(list(pks.values()))
    for kind, pk in pks.items():
        r = admin.get(f"/api/v2/{ENDPOINTS[kind]}/{pk}")
        assert r.status_code == 200, r.text
        world.resources[kind] = r.json()[kind]
    # a finished request of the owner's: a change of permissions that changes nothing
    world.exec_id = owner_request(world)
    return world


def owner_request(world: World) -> str:
    """A new finished execution request of the owner's."""
    owner = world.client("owner")
    pk = world.resources["map"]["pk"]
    r = owner.put(f"/api/v2/resources/{pk}/permissions",
                  json={"groups": [{"id": world.special["registered-members"], "permissions": "none"}]})
    assert r.status_code == 200, r.text
    assert finish(owner, r.json()["execution_id"])["status"] == "finished"
    return r.json()["execution_id"]

