"""/api/v2/groups as anonymous, plain user, member, manager and admin."""

import pytest

from tests.conftest import assert_envelope, insert_resource, login, make_group, make_user, unique

GROUP_KEYS = ["pk", "title", "group", "slug", "logo", "description", "email", "keywords", "access",
              "categories", "link"]


@pytest.fixture(scope="module")
def world(server, admin):
    """A public, an invite-only and a private group; mia manages the private one, max is a member."""
    mia, max_, outsider = make_user(admin), make_user(admin), make_user(admin)
    public = make_group(admin, title=unique("Public "))
    invite = make_group(admin, title=unique("Invite "), access="public-invite")
    private = make_group(admin, title=unique("Private "), access="private")
    admin.post(f"/api/v2/groups/{private['pk']}/members", json={"users": [mia["pk"]], "role": "manager"})
    admin.post(f"/api/v2/groups/{private['pk']}/members", json={"users": [max_["pk"]]})
    return {"mia": mia, "max": max_, "outsider": outsider, "public": public, "invite": invite, "private": private}


def listed(client) -> set[int]:
    return {g["pk"] for g in client.get("/api/v2/groups/", params={"page_size": 1000}).json()["group_profiles"]}


def test_shape_and_defaults(admin, world):
    g = world["public"]
    assert list(g) == GROUP_KEYS
    assert g["access"] == "public" and g["logo"] is None and g["keywords"] == [] and g["categories"] == []
    assert isinstance(g["pk"], int) and g["group"] == {"pk": g["group"]["pk"], "name": g["slug"]}
    assert g["link"].endswith(f"/api/v2/groups/{g['pk']}")
    assert g["slug"] == g["title"].lower().replace(" ", "-")


def test_visibility_matrix(server, admin, anon, world):
    public, invite, private = world["public"]["pk"], world["invite"]["pk"], world["private"]["pk"]
    assert {public, invite} <= listed(anon) and private not in listed(anon)
    with login(server, world["outsider"]) as c:
        assert private not in listed(c)
        assert_envelope(c.get(f"/api/v2/groups/{private}/"), 404, "not_found")
    for who in ("mia", "max"):
        with login(server, world[who]) as c:
            assert private in listed(c)
            assert c.get(f"/api/v2/groups/{private}").status_code == 200
    assert {public, invite, private} <= listed(admin)
    assert_envelope(anon.get(f"/api/v2/groups/{private}/members"), 404, "not_found")
    # the special groups (anonymous, registered members) are never listed
    names = {g["group"]["name"] for g in admin.get("/api/v2/groups/", params={"page_size": 1000}).json()["group_profiles"]}
    assert not names & {"anonymous", "registered-members"}


def test_list_is_ordered_by_title_and_filterable(admin, world):
    titles = [g["title"] for g in admin.get("/api/v2/groups/", params={"page_size": 1000}).json()["group_profiles"]]
    assert titles == sorted(titles, key=str.lower)
    r = admin.get("/api/v2/groups/", params={"filter{access}": "private"})
    assert {g["access"] for g in r.json()["group_profiles"]} == {"private"}
    r = admin.get("/api/v2/groups/", params={"filter{group.name}": world["invite"]["slug"]})
    assert [g["pk"] for g in r.json()["group_profiles"]] == [world["invite"]["pk"]]
    r = admin.get("/api/v2/groups/", params={"search": world["public"]["title"], "search_fields": "title"})
    assert [g["pk"] for g in r.json()["group_profiles"]] == [world["public"]["pk"]]


def test_create_matrix(server, anon, admin, world):
    body = {"title": unique("New ")}
    assert_envelope(anon.post("/api/v2/groups/", json=body), 401, "not_authenticated")
    with login(server, world["mia"]) as c:
        assert_envelope(c.post("/api/v2/groups/", json=body), 403, "permission_denied")
    # what geonodectl sends
    r = admin.post("/api/v2/groups", json={"title": "Field Team Ä", "slug": unique("field-team"), "description": "d"})
    assert r.status_code == 201, r.text
    g = r.json()["group_profile"]
    assert g["title"] == "Field Team Ä" and g["access"] == "public"
    assert admin.get(f"/api/v2/groups/{g['pk']}/managers").json()[0]["username"] == "admin"
    assert_envelope(admin.post("/api/v2/groups/", json={"title": "x", "slug": g["slug"]}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/groups/", json={"description": "no title"}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/groups/", json={"title": unique("T "), "access": "secret"}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/groups/", json={"title": unique("T "), "categories": ["nope"]}), 400,
                    "invalid", "Object with slug=nope does not exist.")
    assert_envelope(admin.post("/api/v2/groups/", json={"title": unique("T "), "slug": "Not A Slug"}), 400, "invalid")


def test_bulk_create_shapes(admin):
    r = admin.post("/api/v2/groups/", json={"group_profile": {"title": unique("One ")}})
    assert r.status_code == 201 and "group_profile" in r.json()
    r = admin.post("/api/v2/groups/", json={"group_profiles": [{"title": unique("A ")}, {"title": unique("B ")}]})
    assert r.status_code == 201 and len(r.json()["group_profiles"]) == 2
    r = admin.post("/api/v2/groups/", json=[{"title": unique("C ")}])
    assert r.status_code == 201 and len(r.json()["group_profiles"]) == 1


def test_update_matrix(server, anon, admin, world):
    pk = world["private"]["pk"]
    url = f"/api/v2/groups/{pk}/"
    assert_envelope(anon.patch(url, json={"description": "x"}), 401, "not_authenticated")
    with login(server, world["outsider"]) as c:
        assert_envelope(c.patch(url, json={"description": "x"}), 404, "not_found")  # cannot even see it
    with login(server, world["max"]) as c:
        assert_envelope(c.patch(url, json={"description": "x"}), 403, "permission_denied")
    with login(server, world["mia"]) as c:
        r = c.patch(url, json={"description": "managed by mia", "email": "team@example.org"})
        assert r.status_code == 200 and r.json()["group_profile"]["description"] == "managed by mia"
        assert_envelope(c.put(url, json={"description": "y"}), 403, "permission_denied")  # PUT: admins only
        assert_envelope(c.patch(url, json={"access": "nope"}), 400, "invalid")
    r = admin.put(url, json={"group_profile": {"title": "Renamed"}})
    assert r.status_code == 200 and r.json()["group_profile"]["title"] == "Renamed"
    assert anon.get(url).status_code == 404
    assert admin.get(url).json()["group_profile"]["email"] == "team@example.org"


def test_members_and_managers(server, anon, admin, world):
    pk = world["private"]["pk"]
    managers = admin.get(f"/api/v2/groups/{pk}/managers/").json()
    members = admin.get(f"/api/v2/groups/{pk}/members/").json()
    assert {u["pk"] for u in managers} >= {world["mia"]["pk"]}
    assert {u["pk"] for u in members} >= {world["mia"]["pk"], world["max"]["pk"]}
    assert isinstance(members, list) and "email" in members[0]
    public_members = anon.get(f"/api/v2/groups/{world['public']['pk']}/members").json()
    assert public_members and all("email" not in u for u in public_members)  # never to anonymous
    newcomer = make_user(admin)
    with login(server, world["max"]) as c:  # a plain member cannot add people
        assert_envelope(c.post(f"/api/v2/groups/{pk}/members", json={"users": [newcomer["pk"]]}), 403,
                        "permission_denied")
    with login(server, world["mia"]) as c:
        r = c.post(f"/api/v2/groups/{pk}/members", json={"users": [newcomer["pk"]]})
        assert r.status_code == 200 and newcomer["pk"] in {u["pk"] for u in r.json()}
        assert_envelope(c.post(f"/api/v2/groups/{pk}/members", json={"users": [999999]}), 400, "invalid")
    with login(server, newcomer) as c:  # anyone may leave
        r = c.request("DELETE", f"/api/v2/groups/{pk}/members", json={"users": [newcomer["pk"]]})
        assert r.status_code == 200 and newcomer["pk"] not in {u["pk"] for u in r.json()}
        # joining: only public groups
        assert c.post(f"/api/v2/groups/{world['public']['pk']}/members", json={"users": [newcomer["pk"]]}).status_code == 200
        assert_envelope(c.post(f"/api/v2/groups/{world['invite']['pk']}/members", json={"users": [newcomer["pk"]]}),
                        403, "permission_denied")


def test_group_resources(server, anon, admin, world):
    private_group = world["private"]["group"]["pk"]
    owner = world["mia"]
    shared = insert_resource(server, owner["pk"], "team doc", [(None, private_group, "view_resourcebase")])
    public = insert_resource(server, owner["pk"], "public team doc",
                             [(None, private_group, "view_resourcebase"), (None, 1, "view_resourcebase")])
    with login(server, world["max"]) as c:
        r = c.get(f"/api/v2/groups/{world['private']['pk']}/resources/")
        assert r.status_code == 200
        assert {int(x["pk"]) for x in r.json()["resources"]} == {shared, public}
        assert list(r.json()) == ["links", "total", "page", "page_size", "resources"]
    r = admin.get(f"/api/v2/groups/{world['public']['pk']}/resources")
    assert r.json()["total"] == 0
    admin.post(f"/api/v2/users/{owner['pk']}/transfer_resources", json={"owner": "DEFAULT"})


def test_delete_matrix(server, anon, admin, world):
    g = make_group(admin)
    url = f"/api/v2/groups/{g['pk']}"
    assert_envelope(anon.delete(url), 401, "not_authenticated")
    with login(server, world["mia"]) as c:
        assert_envelope(c.delete(url), 403, "permission_denied")
    assert admin.delete(url + "/").status_code == 204
    assert_envelope(admin.get(url), 404, "not_found")
    a, b = make_group(admin), make_group(admin)
    r = admin.request("DELETE", "/api/v2/groups/", json=[{"id": a["pk"]}, {"id": b["pk"]}])
    assert r.status_code == 204
    assert admin.get(f"/api/v2/groups/{a['pk']}").status_code == 404


def test_bulk_update(flagged_server, admin, world):
    assert_envelope(admin.patch("/api/v2/groups/", json=[{"id": world["public"]["pk"], "description": "x"}]),
                    405, "method_not_allowed")
    with flagged_server.client(auth=("admin", "admin-secret-1")) as fadmin:
        a, b = make_group(fadmin), make_group(fadmin)
        boss = make_user(fadmin)
        fadmin.post(f"/api/v2/groups/{a['pk']}/members", json={"users": [boss["pk"]], "role": "manager"})
        with login(flagged_server, boss) as c:
            r = c.patch("/api/v2/groups/", json=[{"id": a["pk"], "description": "mine"}, {"id": b["pk"], "description": "not mine"}])
            assert_envelope(r, 403, "permission_denied")
            assert fadmin.get(f"/api/v2/groups/{a['pk']}").json()["group_profile"]["description"] == "for tests"
            r = c.patch("/api/v2/groups/", json=[{"id": a["pk"], "description": "mine"}])
            assert r.status_code == 200 and r.json()["group_profiles"][0]["description"] == "mine"
