"""The groups that stand for everyone (anonymous, registered members) may only be given read
levels. Every way of writing permissions refuses more with a 400 naming the entry and changes
nothing; after each refused grant, every write endpoint still refuses anonymous callers,
unrelated users and group members, and the resource stays as it was."""

import base64
import json
import sqlite3
import time
import uuid
from pathlib import Path

import pytest

from tests.api.test_uploads import finished, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, in_process, login, make_group, make_user, poll

DATA = Path(__file__).parent.parent / "data"
ANON, REGISTERED = 1, 2
EXTRA = {"filter_header": "Taken", "field_name": "taken", "field_label": "Taken", "field_value": "yes"}
WRITE_NAMES = ["change_resourcebase", "change_resourcebase_metadata", "delete_resourcebase",
               "change_resourcebase_permissions", "publish_resourcebase", "change_dataset_data", "change_dataset_style"]


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("grants") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "stranger", "member")}
    team = make_group(admin)
    r = admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [people["member"]["pk"]], "role": "member"})
    assert r.status_code in (200, 201), r.text
    clients = {name: login(srv, user) for name, user in people.items()}
    clients["admin"], clients["anonymous"] = admin, srv.client()
    owner = clients["owner"]
    # a dataset, open to read for everyone and to view for the team
    perms = {"users": [], "groups": [{"id": ANON, "permissions": "download"}, {"id": REGISTERED, "permissions": "view"},
                                     {"id": team["group"]["pk"], "permissions": "view"}]}
    r = owner.post("/api/v2/uploads/upload", files=shapefile_parts(DATA / "naturalearth_lowres"),
                   data={"permissions": json.dumps(perms), "dataset_title": "Countries"})
    status = finished(owner, r)
    assert status["status"] == "finished", status
    dataset = status["output_params"]["resources"][0]["id"]
    deadline = time.monotonic() + 20  # the thumbnail is drawn just after the import
    while owner.get(f"/api/v2/resources/{dataset}").json()["resource"]["thumbnail_url"] is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r = owner.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"field notes\n", "text/plain")},
                   data={"title": "Notes"})
    assert r.status_code == 201, r.text
    document = int(r.json()["document"]["pk"])
    yield {"srv": srv, "c": clients, "people": people, "team": team, "dataset": int(dataset), "document": document}
    for c in clients.values():
        c.close()
    srv.stop()


def snapshot(g, pk: int) -> dict:
    """What the owner sees of a resource: the fields a write could change, its permissions,
    extra metadata, links, attributes and style."""
    owner = g["c"]["owner"]
    r = owner.get(f"/api/v2/resources/{pk}", params={"include[]": ["linked_resources"]})
    assert r.status_code == 200, r.text
    res = r.json()["resource"]
    keep = ("title", "abstract", "owner", "perms", "thumbnail_url", "is_published", "is_approved", "featured",
            "advertised", "category", "keywords", "date", "group", "extent")
    out = {k: res.get(k) for k in keep}
    out["permissions"] = owner.get(f"/api/v2/resources/{pk}/permissions").json()
    out["extra_metadata"] = owner.get(f"/api/v2/resources/{pk}/extra_metadata").json()
    out["linked"] = owner.get(f"/api/v2/resources/{pk}/linked_resources").json()
    if res["resource_type"] == "dataset":
        ds = owner.get(f"/api/v2/datasets/{pk}").json()["dataset"]
        out["attributes"] = owner.get(f"/api/v2/datasets/{pk}/attribute_set").json()
        out["style"] = owner.get(ds["default_style"]["sld_url"]).text
        out["download"] = len(owner.get(f"/datasets/{ds['alternate']}/dataset_download").content)
    return out


def levels(client, pk: int) -> dict:
    body = client.get(f"/api/v2/resources/{pk}/permissions").json()
    return {(kind, x["id"]): x["permissions"] for kind in ("users", "organizations", "groups") for x in body[kind]}


def executions(g) -> int:
    return g["c"]["admin"].get("/api/v2/executionrequest", params={"page_size": 1}).json()["total"]


REFUSED = [
    ({"groups": [{"id": ANON, "permissions": "manage"}]}, "groups[0]", "anonymous"),
    ({"groups": [{"id": REGISTERED, "permissions": "edit"}]}, "groups[0]", "registered-members"),
    ({"users": [{"id": -1, "permissions": "owner"}]}, "users[0]", "anonymous"),
    ({"users": [{"id": -1, "permissions": "edit"}]}, "users[0]", "anonymous"),
    ({"organizations": [{"id": REGISTERED, "permissions": "manage"}]}, "organizations[0]", "registered-members"),
    ({"users": {"AnonymousUser": ["view_resourcebase", "change_resourcebase"]}}, "users['AnonymousUser']", "anonymous"),
    ({"groups": {"anonymous": ["delete_resourcebase"]}}, "groups['anonymous']", "anonymous"),
    ({"groups": {"registered-members": ["change_resourcebase_permissions"]}}, "groups['registered-members']",
     "registered-members"),
    ({"groups": {"registered-members": ["view_resourcebase", "change_dataset_style"]}}, "groups['registered-members']",
     "registered-members"),
    ({"groups": {"anonymous": ["publish_resourcebase"]}}, "groups['anonymous']", "anonymous"),
    ({"groups": {"anonymous": ["change_resourcebase_metadata"]}}, "groups['anonymous']", "anonymous"),
    ({"groups": {"registered-members": ["change_dataset_data"]}}, "groups['registered-members']", "registered-members"),
]


def _refused(r, where: str, group: str) -> None:
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["success"] is False and body["code"] == "invalid"
    message = body["errors"][0]
    assert message.startswith(f"{where}: the {group} group") and "at most 'download'" in message, message


def write_requests(g, pk: int) -> list[tuple[str, str, dict]]:
    """Every write a caller could aim at one resource: (method, path, httpx keyword arguments)."""
    other = g["document"] if pk != g["document"] else g["dataset"]
    png = base64.b64encode(bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()
    reqs = [
        ("PATCH", f"/api/v2/resources/{pk}", {"json": {"title": "Taken"}}),
        ("PUT", f"/api/v2/resources/{pk}", {"json": {"title": "Taken"}}),
        ("PATCH", f"/api/v2/resources/{pk}/", {"json": {"abstract": "Taken"}}),
        ("DELETE", f"/api/v2/resources/{pk}", {}),
        ("DELETE", f"/api/v2/resources/{pk}/delete", {}),
        ("PUT", f"/api/v2/resources/{pk}/update", {"json": {"vals": {"title": "Taken"}}}),
        ("PUT", f"/api/v2/resources/{pk}/permissions", {"json": {"users": [{"id": g["people"]["stranger"]["pk"],
                                                                             "permissions": "manage"}]}}),
        ("PATCH", f"/api/v2/resources/{pk}/permissions", {"json": {"groups": [{"id": ANON, "permissions": "none"}]}}),
        ("DELETE", f"/api/v2/resources/{pk}/permissions", {}),
        ("PUT", f"/api/v2/resources/{pk}/set_thumbnail", {"json": {"file": f"data:image/png;base64,{png}"}}),
        ("POST", f"/api/v2/resources/{pk}/set_thumbnail_from_bbox", {"json": {"bbox": [-10, 10, -10, 10], "srid": "EPSG:4326"}}),
        ("POST", f"/api/v2/resources/{pk}/delete_thumbnail", {}),
        ("PUT", f"/api/v2/resources/{pk}/extra_metadata", {"json": [{"id": 1, **EXTRA}]}),
        ("POST", f"/api/v2/resources/{pk}/extra_metadata", {"json": [EXTRA]}),
        ("DELETE", f"/api/v2/resources/{pk}/extra_metadata", {"json": [1]}),
        ("POST", f"/api/v2/resources/{pk}/linked_resources", {"json": {"target": [other]}}),
        ("DELETE", f"/api/v2/resources/{pk}/linked_resources", {"json": {"target": [other]}}),
    ]
    if pk == g["dataset"]:
        owner = g["c"]["owner"]
        ds = owner.get(f"/api/v2/datasets/{pk}").json()["dataset"]
        sld = owner.get(ds["default_style"]["sld_url"]).text.replace("<sld:Name>", "<sld:Name>x", 1)
        reqs += [
            ("PATCH", f"/api/v2/datasets/{pk}", {"json": {"title": "Taken"}}),
            ("PUT", f"/api/v2/datasets/{pk}/", {"json": {"title": "Taken"}}),
            ("PATCH", f"/api/v2/datasets/{pk}/attribute_set", {"json": [{"pk": 1, "attribute_label": "Taken"}]}),
            ("PUT", f"/api/v2/datasets/{pk}/metadata",
             {"files": {"metadata_file": ("m.xml", (DATA / "metadata").glob("*.xml").__next__().read_bytes(), "text/xml")}}),
            ("PUT", ds["default_style"]["sld_url"], {"content": sld, "headers": {"Content-Type": "application/vnd.ogc.se+xml"}}),
            ("PUT", ds["default_style"]["sld_url"].replace("/geoserver/", "/gs/"),
             {"content": sld, "headers": {"Content-Type": "application/vnd.ogc.se+xml"}}),
            ("POST", "/api/v2/uploads/upload", {"files": shapefile_parts(DATA / "naturalearth_lowres"),
                                                "data": {"overwrite_existing_layer": "true", "resource_pk": str(pk)}}),
            ("POST", "/api/v2/uploads/upload", {"files": shapefile_parts(DATA / "naturalearth_lowres"),
                                                "data": {"action": "replace", "resource_pk": str(pk)}}),
            ("POST", "/api/v2/uploads/upload", {"files": {"base_file": ("s.sld", sld.encode(), "application/xml")},
                                                "data": {"action": "resource_style_upload", "resource_pk": str(pk)}}),
        ]
    else:
        reqs += [
            ("PATCH", f"/api/v2/documents/{pk}", {"json": {"title": "Taken"}}),
            ("PUT", f"/api/v2/documents/{pk}/", {"json": {"title": "Taken"}}),
        ]
    return reqs


def _walk(g, pk: int) -> None:
    """Every write to the resource, as anonymous, an unrelated user and a member of a group that
    may view it: 401 for anonymous, 403 for the others, and nothing changes."""
    before = snapshot(g, pk)
    for method, path, kwargs in write_requests(g, pk):
        for who in ("anonymous", "stranger", "member"):
            r = g["c"][who].request(method, path, **kwargs)
            wanted = 401 if who == "anonymous" else 403
            assert r.status_code == wanted, (who, method, path, r.status_code, r.text[:300])
            assert r.json()["success"] is False, (who, method, path, r.text[:300])
    # let any job that was wrongly started run before looking again
    time.sleep(0.3)
    assert snapshot(g, pk) == before


@pytest.mark.parametrize("body, where, group", REFUSED)
def test_a_grant_of_more_than_download_to_everyone_is_refused_and_changes_nothing(g, body, where, group):
    for pk in (g["dataset"], g["document"]):
        before, jobs = snapshot(g, pk), executions(g)
        for who in ("owner", "admin"):
            for method in ("PUT", "PATCH"):
                _refused(g["c"][who].request(method, f"/api/v2/resources/{pk}/permissions", json=body), where, group)
        assert executions(g) == jobs
        assert snapshot(g, pk) == before


def test_a_refused_entry_refuses_the_whole_request(g):
    pk, stranger = g["document"], g["people"]["stranger"]["pk"]
    before = snapshot(g, pk)
    body = {"users": [{"id": stranger, "permissions": "view"}],
            "groups": [{"id": REGISTERED, "permissions": "view"}, {"id": ANON, "permissions": "manage"}]}
    _refused(g["c"]["owner"].put(f"/api/v2/resources/{pk}/permissions", json=body), "groups[1]", "anonymous")
    assert snapshot(g, pk) == before
    assert g["c"]["stranger"].get(f"/api/v2/resources/{pk}").status_code == 200  # public, as before
    assert "change_resourcebase" not in g["c"]["stranger"].get(f"/api/v2/resources/{pk}").json()["resource"]["perms"]


def test_read_levels_for_everyone_are_still_given(g):
    pk = g["document"]
    for level, anon_perms in (("view", {"view_resourcebase"}), ("download", {"view_resourcebase", "download_resourcebase"})):
        for body in ({"groups": [{"id": ANON, "permissions": level}, {"id": REGISTERED, "permissions": level}]},
                     {"users": {"AnonymousUser": sorted(anon_perms)}, "groups": {"registered-members": sorted(anon_perms)}}):
            r = g["c"]["owner"].put(f"/api/v2/resources/{pk}/permissions", json=body)
            assert r.status_code == 200, r.text
            assert poll(g["c"]["owner"], r.json()["status_url"])["status"] == "finished"
            groups = {x["id"]: x["permissions"] for x in
                      g["c"]["owner"].get(f"/api/v2/resources/{pk}/permissions").json()["groups"]}
            assert groups == {ANON: level, REGISTERED: level}
            assert set(g["c"]["anonymous"].get(f"/api/v2/resources/{pk}").json()["resource"]["perms"]) == anon_perms
    r = g["c"]["owner"].put(f"/api/v2/resources/{pk}/permissions",
                            json={"groups": [{"id": ANON, "permissions": "download"}, {"id": REGISTERED, "permissions": "view"}]})
    assert poll(g["c"]["owner"], r.json()["status_url"])["status"] == "finished"


def test_an_upload_asking_for_more_is_refused_and_stores_nothing(g):
    owner = g["c"]["owner"]
    total = owner.get("/api/v2/datasets", params={"page_size": 1}).json()["total"]
    jobs = executions(g)
    for perms, where, group in (({"groups": [{"id": ANON, "permissions": "edit"}]}, "groups[0]", "anonymous"),
                                ({"users": {"AnonymousUser": ["change_resourcebase"]}}, "users['AnonymousUser']", "anonymous"),
                                ({"groups": {"registered-members": ["delete_resourcebase"]}}, "groups['registered-members']",
                                 "registered-members")):
        r = owner.post("/api/v2/uploads/upload", files=shapefile_parts(DATA / "naturalearth_lowres"),
                       data={"permissions": json.dumps(perms)})
        _refused(r, where, group)
    assert owner.get("/api/v2/datasets", params={"page_size": 1}).json()["total"] == total
    assert executions(g) == jobs
    assert not any((g["srv"].data_dir / "tmp").iterdir())


@pytest.mark.parametrize("kind", ["dataset", "document"])
@pytest.mark.parametrize("body, where, group", REFUSED)
def test_after_each_refused_grant_every_write_is_still_refused(g, kind, body, where, group):
    pk = g[kind]
    for who in ("owner", "admin"):
        _refused(g["c"][who].put(f"/api/v2/resources/{pk}/permissions", json=body), where, group)
    _walk(g, pk)


def test_write_rows_an_older_version_stored_for_everyone_count_for_reading_only(g, tmp_path):
    """Data folders written before the cap may hold write rows for the special groups: they give
    nobody the right to write."""
    srv, pk = g["srv"], g["document"]
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        conn.executemany("INSERT OR IGNORE INTO resource_perms (resource_id, user_id, group_id, perm) VALUES (?, NULL, ?, ?)",
                         [(pk, group, perm) for group in (ANON, REGISTERED) for perm in WRITE_NAMES])
    conn.close()
    for who in ("anonymous", "stranger"):
        perms = set(g["c"][who].get(f"/api/v2/resources/{pk}").json()["resource"]["perms"])
        assert perms <= {"view_resourcebase", "download_resourcebase"}, (who, perms)
    _walk(g, pk)


def test_a_stored_job_that_grants_more_fails_and_changes_nothing(tmp_path):
    """A permission job stored by an older version with a write grant to everyone is failed with
    the reason when it runs, and the permissions stay as they were."""
    srv = Server(tmp_path / "data")
    try:
        admin = srv.client(auth=("admin", ADMIN_PASSWORD))
        r = admin.post("/api/v2/documents", files={"doc_file": ("a.txt", b"a\n", "text/plain")}, data={"title": "A"})
        pk = int(r.json()["document"]["pk"])
        res = admin.get(f"/api/v2/resources/{pk}").json()["resource"]
        before = levels(admin, pk)
    finally:
        srv.stop()
    exec_id = str(uuid.uuid4())
    now = "2026-01-01T00:00:00.000000Z"
    params = {"uuid": res["uuid"], "resource_id": pk, "replace": False,
              "permissions": {"users": {}, "groups": {str(ANON): "manage"}}}
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        conn.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, input_params, resource_id,"
                     " created, last_updated) VALUES (?, (SELECT id FROM users WHERE username = 'admin'), 'set_permissions', 'permissions', ?, ?, ?, ?)",
                     (exec_id, json.dumps(params), pk, now, now))
    conn.close()
    srv2 = Server(srv.data_dir)
    try:
        admin = srv2.client(auth=("admin", ADMIN_PASSWORD))
        status = poll(admin, f"/api/v2/resource-service/execution-status/{exec_id}")
        assert status["status"] == "failed", status
        assert "anonymous group" in status["log"] and "at most 'download'" in status["log"]
        assert levels(admin, pk) == before
    finally:
        srv2.stop()


def test_upgrading_a_data_folder_drops_the_write_rows_of_everyone(tmp_path):
    """A data folder from before the cap (schema 11) with write rows for the special groups: the
    first start of this version removes them and keeps the read rows."""
    srv = in_process(tmp_path / "data")
    try:
        admin = srv.client(auth=("admin", ADMIN_PASSWORD))
        r = admin.post("/api/v2/documents", files={"doc_file": ("a.txt", b"a\n", "text/plain")}, data={"title": "A"})
        pk = int(r.json()["document"]["pk"])
    finally:
        srv.stop()
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND group_id IN (?, ?)", (pk, ANON, REGISTERED))
        conn.executemany("INSERT INTO resource_perms (resource_id, user_id, group_id, perm) VALUES (?, NULL, ?, ?)",
                         [(pk, ANON, "change_resourcebase"), (pk, ANON, "delete_resourcebase"),
                          (pk, REGISTERED, "view_resourcebase"), (pk, REGISTERED, "change_resourcebase_permissions")])
        conn.execute("UPDATE resources SET public_view = 1 WHERE id = ?", (pk,))
    conn.execute("PRAGMA user_version = 11")
    conn.close()
    srv2 = in_process(srv.data_dir)
    try:
        admin, anon = srv2.client(auth=("admin", ADMIN_PASSWORD)), srv2.client()
        assert levels(admin, pk)[("groups", ANON)] == "none" and levels(admin, pk)[("groups", REGISTERED)] == "view"
        assert anon.get(f"/api/v2/resources/{pk}").status_code == 404  # change_resourcebase alone showed it to all
    finally:
        srv2.stop()
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3")
    rows = conn.execute("SELECT group_id, perm FROM resource_perms WHERE resource_id = ? AND group_id IN (1, 2)", (pk,)).fetchall()
    conn.close()
    assert rows == [(REGISTERED, "view_resourcebase")]
