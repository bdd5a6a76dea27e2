"""/api/v2/packages/conflicts over HTTP: who sees and resolves which conflict (anonymous, another
user, a viewer, a group member with the right to edit, the owner, staff, a superuser), and bad
input (every refusal a clear 4xx in the error envelope that changes nothing)."""

from __future__ import annotations

import pytest

from tests.conftest import assert_envelope, unique
from tests.packages.conflict_world import close_world, make_world


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = make_world(tmp_path_factory)
    yield w
    close_world(w)


def conflict_on(world, *, level: str = "edit", public: bool = True) -> tuple[dict, int]:
    """A document of ``owner`` shared with the group at ``level`` (everyone may view it, or, not
    ``public``, no one else), changed here and in the field: (resource, conflict id)."""
    doc = world.new_document()
    world.share(doc["pk"], level, public)
    world.patch(doc["pk"], title=unique("Office "))
    here = world.resource(doc["pk"])
    return here, world.set_aside(here, world.incoming(here, title=unique("Field ")), folder=world.files_under_tmp())


def test_anonymous_is_refused_everywhere(world):
    _here, cid = conflict_on(world)
    anon = world.client("anonymous")
    assert_envelope(anon.get("/api/v2/packages/conflicts"), 401, "not_authenticated")
    assert_envelope(anon.get(f"/api/v2/packages/conflicts/{cid}"), 401, "not_authenticated")
    assert_envelope(anon.post(f"/api/v2/packages/conflicts/{cid}", json={"keep": "local"}), 401, "not_authenticated")
    assert_envelope(anon.post(f"/api/v2/packages/conflicts/{cid}", json={"keep": "nonsense"}), 401, "not_authenticated")
    assert world.conflict(cid).json()["conflict"]["state"] == "open"


def test_who_sees_and_resolves_a_conflict(world):
    here, cid = conflict_on(world)
    # another user sees the resource (it is public) but may not change it: not listed, 403
    assert cid not in [c["id"] for c in world.listed("other")]
    assert_envelope(world.conflict(cid, "other"), 403, "permission_denied")
    assert_envelope(world.resolve(cid, "local", "other"), 403, "permission_denied")
    # staff hold no right on it either
    assert_envelope(world.resolve(cid, "local", "staff"), 403, "permission_denied")
    # the owner, the group member who may edit it and superusers see it
    for who in ("owner", "member", "admin"):
        assert cid in [c["id"] for c in world.listed(who)], who
        assert world.conflict(cid, who).status_code == 200
    assert world.conflict(cid).json()["conflict"]["state"] == "open"
    # the group member resolves it
    r = world.resolve(cid, "local", "member")
    assert r.status_code == 200, r.text
    assert r.json()["conflict"]["resolved_by"] == world.users["member"]["username"]
    assert world.resource(here["pk"])["title"] == here["title"]


def test_a_conflict_on_a_hidden_resource_is_not_found(world):
    _here, cid = conflict_on(world, level="view", public=False)
    assert_envelope(world.conflict(cid, "other"), 404, "not_found")
    assert_envelope(world.resolve(cid, "local", "other"), 404, "not_found")
    assert cid not in [c["id"] for c in world.listed("other")]
    # the group member may view it but not change it
    assert_envelope(world.conflict(cid, "member"), 403, "permission_denied")
    assert_envelope(world.resolve(cid, "local", "member"), 403, "permission_denied")
    assert cid not in [c["id"] for c in world.listed("member")]
    # a superuser resolves it
    r = world.resolve(cid, "local", "admin")
    assert r.status_code == 200 and r.json()["conflict"]["state"] == "kept_local"


def test_superusers_list_all_open_conflicts(world):
    _a, first = conflict_on(world)
    _b, second = conflict_on(world, level="view", public=False)
    listed = [c["id"] for c in world.listed("admin")]
    assert first in listed and second in listed
    assert listed == sorted(listed, reverse=True)
    one = next(c for c in world.listed("admin") if c["id"] == first)
    assert set(one) >= {"id", "uuid", "pk", "title", "kind", "package", "created", "state", "local", "incoming",
                        "differences"}
    assert set(one["local"]) == {"title", "last_updated", "version", "data_version", "changed_by"}


@pytest.mark.parametrize("body, field", [
    ({"keep": "theirs"}, "keep"), ({"keep": None}, "keep"), ({"keep": 1}, "keep"), ({}, "keep"),
    ({"keep": "local", "also": 1}, "also"), ([], None), ("local", None),
])
def test_bad_bodies_are_400_and_change_nothing(world, body, field):
    _here, cid = conflict_on(world)
    r = world.client("owner").post(f"/api/v2/packages/conflicts/{cid}", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["success"] is False
    if field:
        assert field in r.json()["errors"][0]
    assert world.conflict(cid).json()["conflict"]["state"] == "open"


def test_not_json_is_400(world):
    _here, cid = conflict_on(world)
    r = world.client("owner").post(f"/api/v2/packages/conflicts/{cid}", content=b"{keep",
                                   headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert world.conflict(cid).json()["conflict"]["state"] == "open"


@pytest.mark.parametrize("cid", ["0", "999999", "abc", "-1", "1.5", "9" * 30])
def test_unknown_conflicts_are_404(world, cid):
    owner = world.client("owner")
    assert_envelope(owner.get(f"/api/v2/packages/conflicts/{cid}"), 404, "not_found")
    assert_envelope(owner.post(f"/api/v2/packages/conflicts/{cid}", json={"keep": "local"}), 404, "not_found")


def test_resolving_twice_is_409(world):
    _here, cid = conflict_on(world)
    assert world.resolve(cid, "local").status_code == 200
    for keep in ("local", "incoming", "both"):
        assert_envelope(world.resolve(cid, keep), 409, "conflict")


def test_declared_in_the_openapi_document(world):
    doc = world.client("anonymous").get("/api/v2/schema/", headers={"Accept": "application/vnd.oai.openapi+json"}).json()
    assert "get" in doc["paths"]["/api/v2/packages/conflicts/"]
    one = doc["paths"]["/api/v2/packages/conflicts/{conflict_id}/"]
    assert "get" in one and "post" in one
    assert "Resolution" in str(one["post"]["requestBody"])
    assert {"PackageConflict", "Side", "FieldDifference"} <= set(doc["components"]["schemas"])
