"""Pages of /api/v2/resources/ are joined from kept rendering (reads/resources.py). They must
show each caller what a fresh rendering of the same resource shows them (its detail), never
another caller's fields, and a write at once in every worker process."""

import sqlite3

import pytest

from tests.conftest import ADMIN_PASSWORD, Server, insert_resource, login, make_user

PUBLIC = [(None, 1, "view_resourcebase"), (None, 1, "download_resourcebase")]
PAGE = "/api/v2/resources/?page_size=50"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("pages") / "data", workers=2)
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "contact", "bystander")}
    owner = people["owner"]["pk"]
    ids = [insert_resource(srv, owner, "Kept dataset", PUBLIC, resource_type="dataset", subtype="vector"),
           insert_resource(srv, owner, "Kept document", PUBLIC),
           insert_resource(srv, owner, "Kept map", PUBLIC, resource_type="map", keywords=["kept"]),
           insert_resource(srv, owner, "Kept for the contact", [(people["contact"]["pk"], None, "view_resourcebase")])]
    with sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30) as conn:
        conn.execute("INSERT INTO resource_contacts (resource_id, role, user_id) VALUES (?, 'poc', ?)",
                     (ids[2], people["contact"]["pk"]))
    yield srv, admin, people, ids
    admin.close()
    srv.stop()


def clients(srv: Server, auth=None, n: int = 6):
    """Several clients, each on its own connection: between them they reach every worker."""
    return [srv.client(auth=auth) for _ in range(n)]


def page_items(client, ids) -> dict[int, dict]:
    r = client.get(PAGE)
    assert r.status_code == 200, r.text
    return {int(item["pk"]): item for item in r.json()["resources"] if int(item["pk"]) in ids}


def test_each_caller_gets_on_the_page_what_the_detail_shows_them(site):
    srv, _, people, ids = site
    auth = {"anon": None, "admin": ("admin", ADMIN_PASSWORD),
            **{name: (p["username"], p["password"]) for name, p in people.items()}}
    with login(srv, people["owner"]) as c:
        assert c.post(f"/api/v2/resources/{ids[0]}/favorite").status_code in (200, 201)
    # each caller twice, in turns, so that later reads are served from what earlier ones kept
    for name in ["contact", "bystander", "owner", "anon", "admin", "bystander", "contact", "owner", "anon", "admin"]:
        with srv.client(auth=auth[name]) as c:
            for _ in range(3):
                items = page_items(c, ids)
            for pk, item in items.items():
                detail = c.get(f"/api/v2/resources/{pk}").json()["resource"]
                assert item == detail, (name, pk)
                assert list(item) == list(detail)
            owner = items[ids[0]]["owner"]
            assert ("perms" in owner) == (name in ("owner", "admin")), name
            assert ("email" in owner) == (name != "anon"), name
            assert items[ids[0]]["favorite"] == (name == "owner"), name
            poc = items[ids[2]]["poc"][0]
            assert ("perms" in poc) == (name in ("contact", "admin")), name
            assert (ids[3] in items) == (name in ("owner", "contact", "admin")), name
            if name == "owner":
                assert "delete_resourcebase" in items[ids[1]]["perms"]
            elif name in ("anon", "bystander", "contact"):
                assert items[ids[1]]["perms"] == ["view_resourcebase", "download_resourcebase"]


def test_a_write_shows_in_the_next_read_of_every_worker(site):
    srv, admin, people, ids = site
    readers = clients(srv) + clients(srv, auth=("admin", ADMIN_PASSWORD))
    for c in readers:
        for _ in range(2):
            assert page_items(c, ids)[ids[1]]["title"] == "Kept document"
    try:
        # through the API (the writer of one worker)
        r = admin.patch(f"/api/v2/resources/{ids[1]}", json={"title": "Kept document, renamed"})
        assert r.status_code == 200, r.text
        for c in readers:
            assert page_items(c, ids)[ids[1]]["title"] == "Kept document, renamed"
        r = admin.patch(f"/api/v2/users/{people['owner']['pk']}", json={"first_name": "Renamed"})
        assert r.status_code == 200, r.text
        for c in readers:
            assert all(item["owner"]["first_name"] == "Renamed" for item in page_items(c, ids).values())
        # by another process: the anonymous group loses its view of one resource
        with sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30) as conn:
            conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND group_id = 1", (ids[1],))
            conn.execute("UPDATE resources SET public_view = 0 WHERE id = ?", (ids[1],))
        for c in readers[:6]:
            assert ids[1] not in page_items(c, ids)
        for c in readers[6:]:
            assert page_items(c, ids)[ids[1]]["perms"][-1] == "can_manage_registered_member_permissions"
    finally:
        for c in readers:
            c.close()


def test_the_callers_own_fields_follow_their_writes(site):
    srv, _, people, ids = site
    owner, bystander = people["owner"], people["bystander"]
    mine = clients(srv, auth=(owner["username"], owner["password"]))
    theirs = clients(srv, auth=(bystander["username"], bystander["password"]))
    try:
        for c in mine + theirs:
            for _ in range(2):
                items = page_items(c, ids)
                assert items[ids[2]]["favorite"] is False
                assert "change_resourcebase" not in items[ids[2]]["perms"] or c in mine
        assert mine[0].post(f"/api/v2/resources/{ids[2]}/favorite").status_code in (200, 201)
        for c in mine:
            assert page_items(c, ids)[ids[2]]["favorite"] is True
        for c in theirs:
            assert page_items(c, ids)[ids[2]]["favorite"] is False
        with sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30) as conn:
            conn.execute("INSERT INTO resource_perms (resource_id, user_id, perm) VALUES (?, ?, 'change_resourcebase')",
                         (ids[2], bystander["pk"]))
        for c in theirs:
            assert "change_resourcebase" in page_items(c, ids)[ids[2]]["perms"]
            detail = c.get(f"/api/v2/resources/{ids[2]}").json()["resource"]
            assert page_items(c, ids)[ids[2]] == detail
    finally:
        for c in mine + theirs:
            c.close()
