"""A deleted resource leaves a tombstone (its uuid, type, title, when and by whom), whatever the
route: DELETE of one, of several, the asynchronous delete. Staff and superusers list them."""

from __future__ import annotations

from tests.conftest import assert_envelope
from tests.history.conftest import finish


def stones(world, who: str = "staff") -> dict[int, dict]:
    r = world.client(who).get("/api/v2/tombstones", params={"page_size": 1000})
    assert r.status_code == 200, r.text
    return {s["pk"]: s for s in r.json()["tombstones"]}


def test_every_way_of_deleting_leaves_a_tombstone(world):
    owner = world.client("owner")
    me = {"pk": world.users["owner"]["pk"], "username": world.users["owner"]["username"]}
    one, *several = [world.new_map(title=f"Doomed map {i}") for i in range(3)]
    uuids = {pk: world.client("admin").get(f"/api/v2/resources/{pk}").json()["resource"]["uuid"]
             for pk in (one, *several)}
    assert owner.delete(f"/api/v2/resources/{one}").status_code == 204
    r = owner.request("DELETE", "/api/v2/resources/", json=[{"id": pk} for pk in several])
    assert r.status_code == 204, r.text
    doc = world.new_document(title="Doomed notes")
    uuids[doc] = world.client("admin").get(f"/api/v2/resources/{doc}").json()["resource"]["uuid"]
    r = owner.delete(f"/api/v2/resources/{doc}/delete")
    assert r.status_code == 200, r.text
    assert finish(owner, r.json()["execution_id"])["status"] == "finished"
    found = stones(world)
    for pk in (one, *several, doc):
        stone = found[pk]
        assert set(stone) == {"uuid", "pk", "resource_type", "title", "deleted", "user"}
        assert stone["uuid"] == uuids[pk] and stone["user"] == me
        assert stone["resource_type"] == ("document" if pk == doc else "map")
        assert stone["title"].startswith("Doomed")
    listing = world.client("superuser").get("/api/v2/tombstones", params={"page_size": 2}).json()
    assert set(listing) == {"links", "total", "page", "page_size", "tombstones"} and listing["total"] >= 4
    assert [s["deleted"] for s in listing["tombstones"]] == sorted((s["deleted"] for s in listing["tombstones"]),
                                                                   reverse=True)


def test_a_refused_delete_leaves_none(world):
    pk = world.new_map(title="Kept map")
    assert world.client("other").delete(f"/api/v2/resources/{pk}").status_code in (403, 404)
    assert pk not in stones(world)


def test_only_staff_and_superusers_read_tombstones(world):
    assert_envelope(world.client("anonymous").get("/api/v2/tombstones"), 401, "not_authenticated")
    for who in ("other", "member", "owner"):
        assert_envelope(world.client(who).get("/api/v2/tombstones"), 403, "permission_denied")
    for who in ("staff", "superuser", "admin"):
        assert world.client(who).get("/api/v2/tombstones").status_code == 200
