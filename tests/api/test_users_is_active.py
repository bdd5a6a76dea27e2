"""`is_active` in the users API: a field for administrators only, so that they can see who is
deactivated; everyone else sees GeoNode's fields and only active users."""

from tests.conftest import ADMIN_PASSWORD, login, make_group, make_user

GEONODE_FIELDS = {"pk", "username", "first_name", "last_name", "avatar", "is_superuser", "is_staff", "link"}


def _deactivated(admin):
    user = make_user(admin)
    r = admin.patch(f"/api/v2/users/{user['pk']}", json={"is_active": False})
    assert r.status_code == 200, r.text
    return user


def test_admin_sees_is_active_and_deactivated_users(admin):
    active, gone = make_user(admin), _deactivated(admin)
    one = admin.get(f"/api/v2/users/{gone['pk']}").json()["user"]
    assert one["is_active"] is False
    assert admin.get(f"/api/v2/users/{active['pk']}").json()["user"]["is_active"] is True
    listed = {u["pk"]: u for u in admin.get("/api/v2/users/", params={"page_size": 1000}).json()["users"]}
    assert listed[gone["pk"]]["is_active"] is False and listed[active["pk"]]["is_active"] is True
    only_gone = admin.get("/api/v2/users/", params={"filter{is_active}": "false", "page_size": 1000}).json()
    assert gone["pk"] in {u["pk"] for u in only_gone["users"]}
    assert all(u["is_active"] is False for u in only_gone["users"])
    assert only_gone["total"] == len(only_gone["users"])


def test_admin_reactivates_and_the_user_signs_in_again(server, admin):
    gone = _deactivated(admin)
    r = admin.patch(f"/api/v2/users/{gone['pk']}", json={"is_active": True})
    assert r.status_code == 200, r.text
    assert admin.get(f"/api/v2/users/{gone['pk']}").json()["user"]["is_active"] is True
    with login(server, gone) as c:
        assert c.get("/api/v2/users/").status_code == 200


def test_others_never_see_the_field_nor_deactivated_users(server, admin, anon):
    group = make_group(admin)
    member, gone = make_user(admin), _deactivated(admin)
    for u in (member, gone):
        admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [u["pk"]]})
    with login(server, member) as c:
        me = c.get(f"/api/v2/users/{member['pk']}").json()["user"]
        assert "is_active" not in me and GEONODE_FIELDS <= set(me)
        listed = c.get("/api/v2/users/", params={"page_size": 1000}).json()["users"]
        assert listed and all("is_active" not in u for u in listed)
        assert gone["pk"] not in {u["pk"] for u in listed}
        assert c.get(f"/api/v2/users/{gone['pk']}").status_code == 404
        assert c.patch(f"/api/v2/users/{member['pk']}", json={"is_active": False}).status_code == 403
    assert anon.get(f"/api/v2/users/{member['pk']}").status_code == 401


def test_owners_embedded_in_resources_do_not_carry_it(server, admin):
    body = admin.get("/api/v2/resources/", params={"page_size": 5}).json()
    for resource in body["resources"]:
        assert "is_active" not in resource["owner"]
