"""/api/v2/users as anonymous, plain user, group manager and admin."""

import pytest

from tests.conftest import USER_PASSWORD, assert_envelope, insert_resource, login, make_group, make_user, unique

USER_KEYS = {"pk", "username", "first_name", "last_name", "avatar", "is_superuser", "is_staff", "email", "link"}


@pytest.fixture(scope="module")
def people(server, admin):
    """alice and bob are plain users; carol manages a group that bob belongs to."""
    alice, bob, carol = (make_user(admin, first_name=n) for n in ("Alice", "Bob", "Carol"))
    team = make_group(admin)
    admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [carol["pk"]], "role": "manager"})
    admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [bob["pk"]]})
    return {"alice": alice, "bob": bob, "carol": carol, "team": team}


def test_list_shapes_and_field_visibility(server, admin, people):
    with login(server, people["alice"]) as c:
        r = c.get("/api/v2/users/", params={"page_size": 1000})
    assert r.status_code == 200
    body = r.json()
    assert list(body) == ["links", "total", "page", "page_size", "users"]
    rows = {u["pk"]: u for u in body["users"]}
    assert body["total"] == len(rows) >= 4
    me = rows[people["alice"]["pk"]]
    assert set(me) == USER_KEYS | {"perms"} and me["perms"] == ["add_resource"]
    other = rows[people["bob"]["pk"]]
    assert set(other) == USER_KEYS  # perms of others are not shown
    assert isinstance(other["pk"], int) and other["link"].endswith(f"/api/v2/users/{other['pk']}")
    assert other["avatar"].startswith("http://")
    admin_rows = {u["pk"]: u for u in admin.get("/api/v2/users/", params={"page_size": 1000}).json()["users"]}
    assert admin_rows[people["bob"]["pk"]]["perms"] == ["add_resource"]
    assert admin_rows[1]["perms"] == ["add_remote_resource", "add_resource"]


def test_list_filters_search_and_sort(admin, people):
    name = people["alice"]["username"]
    r = admin.get("/api/v2/users/", params={"filter{username}": name})
    assert [u["username"] for u in r.json()["users"]] == [name]
    r = admin.get("/api/v2/users/", params={"filter{username.icontains}": name.upper()})
    assert r.json()["total"] == 1
    r = admin.get("/api/v2/users/", params={"search": "carol", "search_fields": ["first_name", "username"]})
    assert [u["pk"] for u in r.json()["users"]] == [people["carol"]["pk"]]
    r = admin.get("/api/v2/users/", params={"sort[]": "-username", "page_size": 1000})
    names = [u["username"] for u in r.json()["users"]]
    assert names == sorted(names, key=str.lower, reverse=True)
    r = admin.get("/api/v2/users/", params=[("filter{pk.in}", people["alice"]["pk"]), ("filter{pk.in}", people["bob"]["pk"])])
    assert r.json()["total"] == 2
    assert_envelope(admin.get("/api/v2/users/", params={"filter{nosuch}": "1"}), 400, "invalid",
                    "Invalid filter field: nosuch")
    assert_envelope(admin.get("/api/v2/users/", params={"filter{pk}": "abc"}), 400, "invalid")
    assert_envelope(admin.get("/api/v2/users/", params={"sort[]": "nosuch"}), 400, "invalid",
                    "Invalid filter field: ['nosuch']")
    assert_envelope(admin.get("/api/v2/users/?filter{username=x"), 400, "parse_error")
    assert_envelope(admin.get("/api/v2/users/", params={"search": "x", "search_fields": "password"}), 400, "invalid")


def test_detail_matrix(server, admin, anon, people):
    pk = people["bob"]["pk"]
    assert_envelope(anon.get(f"/api/v2/users/{pk}/"), 401, "not_authenticated")
    with login(server, people["alice"]) as c:
        body = c.get(f"/api/v2/users/{pk}/").json()["user"]
        assert body["username"] == people["bob"]["username"] and "perms" not in body
    with login(server, people["bob"]) as c:
        assert c.get(f"/api/v2/users/{pk}").json()["user"]["perms"] == ["add_resource"]
    assert admin.get(f"/api/v2/users/{pk}").json()["user"]["email"] == people["bob"]["email"]
    r = admin.get("/api/v2/users/999999/")
    assert_envelope(r, 404, "not_found", "No User matches the given query.")
    assert r.json()["detail"] == "No User matches the given query."
    assert_envelope(admin.get("/api/v2/users/abc/"), 404, "not_found")


def test_create_matrix_and_validation(server, admin, anon, people):
    body = {"username": unique(), "email": f"{unique()}@example.org", "password": USER_PASSWORD}
    assert_envelope(anon.post("/api/v2/users/", json=body), 401, "not_authenticated")
    for who in ("alice", "carol"):
        with login(server, people[who]) as c:
            assert_envelope(c.post("/api/v2/users/", json=body), 403, "permission_denied")
    r = admin.post("/api/v2/users/", json={**body, "first_name": "Zoë"})
    assert r.status_code == 200, r.text
    created = r.json()["user"]
    assert created["first_name"] == "Zoë" and created["is_staff"] is False
    with server.client(auth=(body["username"], USER_PASSWORD)) as c:
        assert c.get("/api/v2/users/").status_code == 200
    assert_envelope(admin.post("/api/v2/users/", json=body), 400, "invalid", "A user with that username already exists.")
    assert_envelope(admin.post("/api/v2/users/", json={**body, "username": unique()}), 400, "invalid",
                    "A user is already registered with that email")
    assert_envelope(admin.post("/api/v2/users/", json={"username": unique()}), 400, "invalid", "email missing from payload")
    assert_envelope(admin.post("/api/v2/users/", json={"email": "x@example.org"}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/users/", json={"username": "bad name!", "email": "b@example.org"}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/users/", json={"username": unique(), "email": f"{unique()}@e.org", "password": "123"}),
                    400, "invalid")
    assert_envelope(admin.post("/api/v2/users/", json={"username": 5, "email": "c@example.org"}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/users/", json="just a string"), 400, "invalid")


def test_create_without_password_and_from_form(server, admin):
    name = unique()
    r = admin.post("/api/v2/users", data={"username": name, "email": f"{name}@example.org", "is_staff": "true"})
    assert r.status_code == 200, r.text
    assert r.json()["user"]["is_staff"] is True
    with server.client(auth=(name, "")) as c:  # no password set: cannot log in
        assert_envelope(c.get("/api/v2/users/"), 401, "authentication_failed")


def test_bulk_create_shapes_and_atomicity(admin):
    def rec():
        n = unique()
        return {"username": n, "email": f"{n}@example.org"}

    r = admin.post("/api/v2/users/", json={"user": rec()})
    assert r.status_code == 200 and "user" in r.json()
    r = admin.post("/api/v2/users/", json={"users": [rec(), rec()]})
    assert r.status_code == 200 and len(r.json()["users"]) == 2
    r = admin.post("/api/v2/users/", json=[rec(), rec(), rec()])
    assert r.status_code == 200 and len(r.json()["users"]) == 3
    good, dup = rec(), rec()
    r = admin.post("/api/v2/users/", json=[good, dup, dup])
    assert_envelope(r, 400, "invalid", "A user with that username already exists.")
    r = admin.get("/api/v2/users/", params={"filter{username}": good["username"]})
    assert r.json()["total"] == 0  # nothing of a failed batch is kept


def test_update_matrix(server, admin, anon, people):
    bob = people["bob"]
    url = f"/api/v2/users/{bob['pk']}/"
    assert_envelope(anon.patch(url, json={"first_name": "x"}), 401, "not_authenticated")
    for who in ("alice", "carol"):
        with login(server, people[who]) as c:
            assert_envelope(c.patch(url, json={"first_name": "x"}), 403, "permission_denied")
            assert_envelope(c.put(url, json={"first_name": "x"}), 403, "permission_denied")
    with login(server, bob) as c:
        r = c.patch(url, json={"first_name": "Robert", "email": bob["email"]})
        assert r.status_code == 200 and r.json()["user"]["first_name"] == "Robert"
        r = c.put(url, json={"user": {"last_name": "Builder"}})
        assert r.status_code == 200 and r.json()["user"]["last_name"] == "Builder"
        assert_envelope(c.patch(url, json={"username": "other"}), 400, "invalid", "username cannot be updated")
        assert_envelope(c.patch(url, json={"email": people["alice"]["email"]}), 400, "invalid",
                        "A user is already registered with that email")
        assert_envelope(c.patch(url, json={"is_staff": True}), 403, "permission_denied")
        assert_envelope(c.patch(url, content=b'{"first_name": ', headers={"Content-Type": "application/json"}),
                        400, "parse_error")
    r = admin.patch(url, json={"first_name": "Bob"})
    assert r.status_code == 200 and r.json()["user"]["first_name"] == "Bob"
    assert admin.get(url).json()["user"]["last_name"] == "Builder"  # stored, seen by another request


def test_last_superuser_is_protected(admin):
    assert_envelope(admin.patch("/api/v2/users/1/", json={"is_superuser": False}), 400, "invalid")
    assert_envelope(admin.delete("/api/v2/users/1/"), 400, "invalid")


def test_delete_matrix_and_rules(server, admin, anon, people):
    victim = make_user(admin)
    url = f"/api/v2/users/{victim['pk']}/"
    assert_envelope(anon.delete(url), 401, "not_authenticated")
    with login(server, people["alice"]) as c:
        assert_envelope(c.delete(url), 403, "permission_denied")
    rid = insert_resource(server, victim["pk"], "owned by victim")
    assert_envelope(admin.delete(url), 400, "invalid", "One or more validation rules are violated: user_has_resources")
    assert admin.post(f"{url}transfer_resources", json={"owner": "DEFAULT"}).status_code == 200
    with login(server, victim) as c:  # a user may delete themselves
        r = c.delete(url)
    assert r.status_code == 200 and r.json() == "User deleted sucessfully"
    assert_envelope(admin.get(url), 404, "not_found")
    other = make_user(admin)
    assert admin.delete(f"/api/v2/users/{other['pk']}").status_code == 200
    assert rid  # the resource survived, now owned by the admin


def test_user_is_manager_rule(flagged_server):
    with flagged_server.client(auth=("admin", "admin-secret-1")) as admin:
        boss = make_user(admin)
        team = make_group(admin)
        admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [boss["pk"]], "role": "manager"})
        assert_envelope(admin.delete(f"/api/v2/users/{boss['pk']}"), 400, "invalid",
                        "One or more validation rules are violated: user_is_manager")
        assert admin.post(f"/api/v2/users/{boss['pk']}/remove_from_group_manager",
                          json={"groups": "ALL"}).status_code == 200
        assert admin.delete(f"/api/v2/users/{boss['pk']}").status_code == 200


def test_bulk_delete(server, admin, people):
    a, b = make_user(admin), make_user(admin)
    with login(server, people["alice"]) as c:
        assert_envelope(c.request("DELETE", "/api/v2/users/", json=[{"id": a["pk"]}]), 403, "permission_denied")
    assert_envelope(admin.request("DELETE", "/api/v2/users/", json={"nope": 1}), 400, "invalid")
    r = admin.request("DELETE", "/api/v2/users", json={"users": [{"id": a["pk"]}, {"id": b["pk"]}]})
    assert r.status_code == 204
    for u in (a, b):
        assert admin.get(f"/api/v2/users/{u['pk']}").status_code == 404


def test_bulk_update_off_by_default(admin, people):
    r = admin.patch("/api/v2/users/", json=[{"id": people["bob"]["pk"], "first_name": "x"}])
    assert_envelope(r, 405, "method_not_allowed")


def test_bulk_update_when_enabled_checks_each_record(flagged_server):
    with flagged_server.client(auth=("admin", "admin-secret-1")) as admin:
        u1, u2 = make_user(admin), make_user(admin)
        with login(flagged_server, u1) as c:
            r = c.patch("/api/v2/users/", json=[{"id": u1["pk"], "first_name": "Me"},
                                                {"id": u2["pk"], "first_name": "Not me"}])
            assert_envelope(r, 403, "permission_denied")
            assert admin.get(f"/api/v2/users/{u1['pk']}").json()["user"]["first_name"] == ""
            r = c.patch("/api/v2/users/", json={"users": [{"id": u1["pk"], "first_name": "Me"}]})
            assert r.status_code == 200 and r.json()["users"][0]["first_name"] == "Me"
        r = admin.patch("/api/v2/users/", json=[{"id": u1["pk"], "last_name": "A"}, {"id": u2["pk"], "last_name": "B"}])
        assert r.status_code == 200
        assert [u["last_name"] for u in r.json()["users"]] == ["A", "B"]
        assert_envelope(admin.patch("/api/v2/users/", json=[{"first_name": "no id"}]), 400, "invalid")


def test_user_groups(server, admin, people):
    team = people["team"]
    with login(server, people["bob"]) as c:
        r = c.get(f"/api/v2/users/{people['bob']['pk']}/groups/")
    assert r.status_code == 200
    assert [g["pk"] for g in r.json()] == [team["pk"]]
    assert r.json()[0]["group"]["name"] == team["slug"]


def test_user_resources_respect_both_users(server, admin, people):
    alice, bob = people["alice"], people["bob"]
    private = insert_resource(server, alice["pk"], unique("alice private "))
    shared = insert_resource(server, alice["pk"], unique("shared with bob "), [(bob["pk"], None, "view_resourcebase")])
    with login(server, alice) as c:
        r = c.get(f"/api/v2/users/{alice['pk']}/resources/")
        assert r.status_code == 200
        assert {int(x["pk"]) for x in r.json()["resources"]} >= {private, shared}
        r = c.get(f"/api/v2/users/{bob['pk']}/resources/")  # what bob sees: the shared one, not the private
        pks = {int(x["pk"]) for x in r.json()["resources"]}
        assert shared in pks and private not in pks
    with login(server, bob) as c:
        r = c.get(f"/api/v2/users/{alice['pk']}/resources/")  # alice's private one never shows to bob
        pks = {int(x["pk"]) for x in r.json()["resources"]}
        assert private not in pks and shared in pks
        row = next(x for x in r.json()["resources"] if int(x["pk"]) == shared)
        assert isinstance(row["pk"], str) and row["owner"]["username"] == alice["username"]
    admin.post(f"/api/v2/users/{alice['pk']}/transfer_resources", json={"owner": "DEFAULT"})


def test_transfer_resources(server, admin, people):
    giver, taker = make_user(admin), make_user(admin)
    r1 = insert_resource(server, giver["pk"], "t1")
    r2 = insert_resource(server, giver["pk"], "t2")
    url = f"/api/v2/users/{giver['pk']}/transfer_resources"
    with login(server, people["alice"]) as c:
        assert_envelope(c.post(url, json={"owner": taker["pk"]}), 403, "permission_denied")
    assert_envelope(admin.post(url, json={"currentOwner": giver["pk"]}), 400, "invalid", "Payload not passed")
    assert_envelope(admin.post(url, json={"newOwner": 999999}), 404, "not_found")
    assert_envelope(admin.post(url, json={"newOwner": giver["pk"]}), 400, "invalid", "Cannot reassign to self")
    r = admin.post(url, json={"newOwner": taker["pk"], "currentOwner": giver["pk"], "resources": [r1]})
    assert r.status_code == 200 and r.json() == "Resources transfered successfully"

    def owned(u):
        rows = admin.get(f"/api/v2/users/{u['pk']}/resources").json()["resources"]
        return {int(x["pk"]) for x in rows if x["owner"]["pk"] == u["pk"]}

    assert owned(taker) == {r1} and owned(giver) == {r2}
    assert_envelope(admin.post(url, json={"newOwner": taker["pk"], "resources": [r1]}), 403, "permission_denied")
    with login(server, giver) as c:  # a user may hand over their own resources
        r = c.post(url, json={"owner": taker["pk"]})
    assert r.status_code == 200
    assert owned(taker) == {r1, r2}


def test_remove_from_group_manager(server, admin, people):
    boss = make_user(admin)
    g1, g2 = make_group(admin), make_group(admin)
    for g in (g1, g2):
        admin.post(f"/api/v2/groups/{g['pk']}/members", json={"users": [boss["pk"]], "role": "manager"})
    url = f"/api/v2/users/{boss['pk']}/remove_from_group_manager"
    with login(server, people["alice"]) as c:
        assert_envelope(c.post(url, json={"groups": "ALL"}), 403, "permission_denied")
    assert_envelope(admin.post(url, json={}), 400, "invalid", "No groups IDs were provided")
    r = admin.post(url, json={"groups": [g1["group"]["pk"], 999999]})
    assert r.status_code == 400
    assert r.json()["success"].endswith(g1["title"]) and "999999" in r.json()["error"]
    with login(server, boss) as c:
        r = c.post(url, json={"groups": "ALL"})
    assert r.status_code == 200 and r.json() == {"success": f"User removed as a group manager from : {g2['title']}"}
    managers = admin.get(f"/api/v2/groups/{g2['pk']}/managers").json()
    members = admin.get(f"/api/v2/groups/{g2['pk']}/members").json()
    assert boss["pk"] not in [m["pk"] for m in managers] and boss["pk"] in [m["pk"] for m in members]
