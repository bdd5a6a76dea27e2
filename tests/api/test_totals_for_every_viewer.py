"""The totals, lists and counts by type that every kind of caller gets from /api/v2/resources
stay exact as permissions are shared and withdrawn, members join and leave a group, and a
resource stops being advertised.

Signed-in users' totals are counted apart from their pages (store/resources.py
``_member_counts``: what anonymous callers list, plus the rows shown to the user in another
way), and both are kept by the server between requests until the data changes: after each
change, each caller must get exactly the resources the rules give them, and a total that is
the length of that list.
"""

from __future__ import annotations

import pytest

from tests.conftest import ADMIN_PASSWORD, in_process, login, make_group, make_user, wait_finished

ANONYMOUS, REGISTERED = 1, 2
CALLERS = ["anon", "plain", "member", "boss", "owner", "admin"]


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("totals") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "plain", "member", "boss")}
    team = make_group(admin)
    clients = {name: login(srv, user) for name, user in people.items()}
    clients["admin"], clients["anon"] = admin, srv.client()
    state = {"srv": srv, "c": clients, "people": people, "team": team, "members": set(), "resources": {}}
    for name, role in (("member", "member"), ("boss", "manager")):
        join(state, name, role)
    yield state
    for c in clients.values():
        c.close()
    srv.stop()


def join(w, name: str, role: str = "member") -> None:
    r = w["c"]["admin"].post(f"/api/v2/groups/{w['team']['pk']}/members",
                             json={"users": [w["people"][name]["pk"]], "role": role})
    assert r.status_code == 200, r.text
    w["members"].add(name)


def leave(w, name: str) -> None:
    r = w["c"]["admin"].request("DELETE", f"/api/v2/groups/{w['team']['pk']}/members",
                                json={"users": [w["people"][name]["pk"]]})
    assert r.status_code == 200, r.text
    w["members"].discard(name)


def create(w, key: str, owner: str, resource_type: str = "document") -> None:
    r = w["c"][owner].post("/api/v2/resources/", json={"resource_type": resource_type, "title": f"Totals {key}"})
    assert r.status_code == 201, r.text
    w["resources"][key] = {"pk": int(r.json()["resource"]["pk"]), "owner": owner, "type": resource_type,
                           "advertised": True, "anon": False, "registered": False, "users": set(), "team": False}
    share(w, key, anon="none", registered="none")


def share(w, key: str, *, anon: str | None = None, registered: str | None = None, team: str | None = None,
          **users: str) -> None:
    """Set the levels of the named holders on one resource (merged into what it has), as its owner."""
    res = w["resources"][key]
    groups = [{"id": gid, "permissions": level} for gid, level in
              ((ANONYMOUS, anon), (REGISTERED, registered), (w["team"]["group"]["pk"], team)) if level]
    body = {"users": [{"id": w["people"][name]["pk"], "permissions": level} for name, level in users.items()],
            "groups": groups}
    r = w["c"][res["owner"]].put(f"/api/v2/resources/{res['pk']}/permissions", json=body)
    assert r.status_code == 200, r.text
    wait_finished(w["c"][res["owner"]], r.json()["status_url"])
    for flag, level in (("anon", anon), ("registered", registered), ("team", team)):
        if level:
            res[flag] = level != "none"
    for name, level in users.items():
        (res["users"].discard if level == "none" else res["users"].add)(name)


def seen_at_all(w, caller: str, key: str) -> bool:
    """Whether the rules let the caller see the resource: superusers and the owner always; a
    public one, everyone; else a signed-in caller through registered members, a share to them
    or one to their group."""
    res = w["resources"][key]
    if caller in ("admin", res["owner"]):
        return True
    return res["anon"] or (caller != "anon" and (res["registered"] or caller in res["users"]
                                                 or (res["team"] and caller in w["members"])))


def listed(w, caller: str) -> set[str]:
    """What an unfiltered list gives the caller: what they may see, advertised or their own
    (superusers: all)."""
    return {key for key, res in w["resources"].items() if seen_at_all(w, caller, key)
            and (res["advertised"] or caller in ("admin", res["owner"]))}


def check(w) -> None:
    by_pk = {res["pk"]: key for key, res in w["resources"].items()}
    for caller in CALLERS:
        c, want = w["c"][caller], listed(w, caller)
        body = c.get("/api/v2/resources/", params={"page_size": 100}).json()
        assert {by_pk[int(r["pk"])] for r in body["resources"]} == want, caller
        assert body["total"] == len(want), caller
        assert c.get("/api/v2/resources/", params={"page_size": 2}).json()["total"] == len(want), caller
        counts = {t["name"]: t["count"] for t in c.get("/api/v2/resources/resource_types").json()["resource_types"]}
        for kind in ("document", "map"):
            expected = sum(1 for key in want if w["resources"][key]["type"] == kind)
            assert counts[kind] == expected, (caller, kind)
            assert c.get(f"/api/v2/{kind}s/").json()["total"] == expected, (caller, kind)
        seen = {key for key in w["resources"] if seen_at_all(w, caller, key)}  # advertised or not
        assert c.get("/api/v2/resources/", params={"advertised": "all", "page_size": 1}).json()["total"] == len(seen)


def test_totals_follow_shares_joins_and_leaves(w):
    for key, owner, kind in (("public", "owner", "document"), ("registered", "owner", "document"),
                             ("to plain", "owner", "map"), ("to team", "owner", "document"),
                             ("private", "owner", "map"), ("of plain", "plain", "document")):
        create(w, key, owner, kind)
    share(w, "public", anon="view")
    share(w, "registered", registered="view")
    share(w, "to plain", plain="view")
    share(w, "to team", team="view")
    check(w)
    share(w, "private", plain="download")           # shared to a user
    check(w)
    share(w, "private", team="edit")                # and to a group
    check(w)
    join(w, "plain")                                # a user joins the group
    check(w)
    leave(w, "member")                              # another leaves it
    check(w)
    share(w, "to team", team="none")                # unshared from the group
    check(w)
    share(w, "to plain", plain="none")              # unshared from the user
    check(w)
    share(w, "of plain", team="view", registered="view")
    check(w)
    share(w, "registered", registered="none")       # no longer for registered members
    share(w, "public", anon="none")                 # nor public
    check(w)
    join(w, "member")
    leave(w, "boss")
    check(w)


def test_an_unadvertised_resource_is_listed_for_its_owner_and_superusers_only(w):
    share(w, "public", anon="view")
    r = w["c"]["owner"].patch(f"/api/v2/resources/{w['resources']['public']['pk']}", json={"advertised": False})
    assert r.status_code == 200, r.text
    w["resources"]["public"]["advertised"] = False
    check(w)
    r = w["c"]["owner"].patch(f"/api/v2/resources/{w['resources']['public']['pk']}", json={"advertised": True})
    assert r.status_code == 200, r.text
    w["resources"]["public"]["advertised"] = True
    check(w)
