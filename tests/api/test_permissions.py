"""/api/v2/resources/{pk}/permissions: the overview, both perms-spec shapes, levels per type,
who may, and changes applied as jobs and seen by the next list call of the people concerned.

Every change is followed as geonodectl does: the receipt's status_url is polled until the
request is finished.
"""

import pytest

from tests.conftest import (
    ADMIN_PASSWORD,
    assert_envelope,
    in_process,
    insert_resource,
    login,
    make_group,
    make_user,
    wait_finished,
)

ANON_GROUP, REGISTERED_GROUP = 1, 2
VIEW, DOWNLOAD = "view_resourcebase", "download_resourcebase"
EDIT = {"change_resourcebase", "change_resourcebase_metadata"}
MANAGE = {"delete_resourcebase", "change_resourcebase_permissions", "publish_resourcebase"}
DATASET = {"change_dataset_data", "change_dataset_style"}
SPECIAL = {"can_manage_anonymous_permissions", "can_manage_registered_member_permissions"}


@pytest.fixture(scope="module")
def p(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("permissions") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "reader", "manager", "boss", "member", "stranger", "keeper")}
    team = make_group(admin)
    for who, role in (("boss", "manager"), ("member", "member")):
        r = admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [people[who]["pk"]], "role": role})
        assert r.status_code == 200, r.text
    clients = {name: login(srv, user) for name, user in people.items()}
    clients["admin"] = admin
    clients["anon"] = srv.client()
    yield {"srv": srv, "people": people, "team": team, "c": clients,
           "admin_id": admin.get("/api/v2/users/", params={"filter{username}": "admin"}).json()["users"][0]["pk"]}
    for c in clients.values():
        c.close()
    srv.stop()


def ids(p, *names):
    return [p["people"][n]["pk"] for n in names]


def create(client, resource_type="document", **fields):
    r = client.post("/api/v2/resources/", json={"resource_type": resource_type, "title": "Permissions test", **fields})
    assert r.status_code == 201, r.text
    return int(r.json()["resource"]["pk"])


def wait(client, receipt: dict, timeout: float = 15) -> dict:
    """Poll the status URL until the request is finished (as geonodectl does)."""
    return wait_finished(client, receipt["status_url"], timeout)


def change(client, pk, body=None, method="PUT", slash="") -> dict:
    r = client.request(method, f"/api/v2/resources/{pk}/permissions{slash}", json=body)
    assert r.status_code == 200, r.text
    receipt = r.json()
    assert set(receipt) == {"status", "execution_id", "status_url"} and receipt["status"] == "ready"
    assert receipt["status_url"].endswith(f"/api/v2/resource-service/execution-status/{receipt['execution_id']}")
    assert receipt["status_url"].startswith("http")
    return wait(client, receipt)


def levels(client, pk) -> dict:
    r = client.get(f"/api/v2/resources/{pk}/permissions")
    assert r.status_code == 200, r.text
    body = r.json()
    out = {("user", u["id"]): u["permissions"] for u in body["users"]}
    out.update({("group", g["id"]): g["permissions"] for g in body["organizations"] + body["groups"]})
    return out


def perms_of(client, pk) -> set:
    r = client.get(f"/api/v2/resources/{pk}")
    assert r.status_code == 200, r.text
    return set(r.json()["resource"]["perms"])


def test_overview_shape_and_order(p):
    c, srv, team = p["c"], p["srv"], p["team"]
    reader, manager, boss, owner = ids(p, "reader", "manager", "boss", "owner")
    pk = create(c["owner"])
    assert c["admin"].patch(f"/api/v2/resources/{pk}", json={"group": team["group"]["pk"]}).status_code == 200
    status = change(c["owner"], pk, {"users": [{"id": reader, "permissions": "view"},
                                               {"id": manager, "permissions": "manage"}],
                                     "organizations": [{"id": team["group"]["pk"], "permissions": "edit"}]})
    assert status["func_name"] == "set_permissions" and status["output_params"] == {"output": True}
    assert status["input_params"]["uuid"] and status["input_params"]["permissions"]["users"] == {
        str(reader): "view", str(manager): "manage"}
    # owner, admin, an explicit manager, a manager of the resource's group holding a permission
    answers = [c[who].get(f"/api/v2/resources/{pk}/permissions{slash}")
               for who in ("owner", "admin", "manager", "boss") for slash in ("", "/")]
    assert all(r.status_code == 200 for r in answers), [r.text for r in answers]
    body = answers[0].json()
    assert all(r.json() == body for r in answers)
    assert set(body) == {"users", "organizations", "groups"}
    users = body["users"]
    assert [u["id"] for u in users] == sorted((u["id"] for u in users), reverse=True)
    by_id = {u["id"]: u for u in users}
    assert by_id[owner]["permissions"] == "owner" and by_id[p["admin_id"]]["permissions"] == "manage"
    assert by_id[p["admin_id"]]["is_superuser"] is True
    assert by_id[reader]["permissions"] == "view" and by_id[manager]["permissions"] == "manage"
    assert boss not in by_id  # holds through the group only
    assert set(by_id) == {owner, p["admin_id"], reader, manager}
    for u in users:
        assert set(u) == {"id", "username", "first_name", "last_name", "avatar", "permissions", "is_superuser",
                          "is_staff"}
        assert u["avatar"].startswith(srv.url + "/")
    assert by_id[reader]["username"] == p["people"]["reader"]["username"]
    org, = body["organizations"]
    assert org == {"id": team["group"]["pk"], "title": team["title"], "name": team["group"]["name"],
                   "logo": org["logo"], "permissions": "edit"}
    assert org["logo"].startswith("http")
    assert body["groups"] == [
        {"id": REGISTERED_GROUP, "title": "Registered Members", "name": "registered-members", "permissions": "none"},
        {"id": ANON_GROUP, "title": "anonymous", "name": "anonymous", "permissions": "download"}]


def test_who_may_not(p):
    c = p["c"]
    pk = create(c["owner"])
    change(c["owner"], pk, {"users": [{"id": p["people"]["reader"]["pk"], "permissions": "edit"}],
                            "organizations": [{"id": p["team"]["group"]["pk"], "permissions": "edit"}]})
    for method in ("GET", "PUT", "PATCH", "DELETE"):
        url = f"/api/v2/resources/{pk}/permissions"
        body = {"users": []} if method in ("PUT", "PATCH") else None
        assert_envelope(c["anon"].request(method, url, json=body), 401, "not_authenticated")
        assert_envelope(c["anon"].request(method, "/api/v2/resources/999999/permissions", json=body), 401,
                        "not_authenticated")
        # an editor, a group member, a registered user: they see it, but may not manage it
        for who in ("reader", "member", "stranger"):
            assert_envelope(c[who].request(method, url, json=body), 403, "permission_denied")
        # the manager of a group that is not the resource's group
        assert_envelope(c["boss"].request(method, url, json=body), 403, "permission_denied")
        assert_envelope(c["admin"].request(method, "/api/v2/resources/999999/permissions", json=body), 404,
                        "not_found", "No ResourceBase matches the given query.")
        assert_envelope(c["admin"].request(method, "/api/v2/resources/abc/permissions", json=body), 404, "not_found")
    private = create(c["owner"])
    change(c["owner"], private, {"groups": [{"id": ANON_GROUP, "permissions": "none"}]})
    assert_envelope(c["stranger"].get(f"/api/v2/resources/{private}/permissions"), 404, "not_found")
    # a refused body is not read: 403 before 400
    assert_envelope(c["reader"].put(f"/api/v2/resources/{pk}/permissions", json={"users": "x"}), 403,
                    "permission_denied")


def test_levels_expand_per_type(p):
    c, srv = p["c"], p["srv"]
    reader = p["people"]["reader"]["pk"]
    doc = create(c["owner"])
    map_ = create(c["owner"], "map")
    vector = insert_resource(srv, p["people"]["owner"]["pk"], "A vector dataset", resource_type="dataset",
                             subtype="vector", alternate="geonode:vec")
    tabular = insert_resource(srv, p["people"]["owner"]["pk"], "A tabular dataset", resource_type="dataset",
                              subtype="tabular", alternate="geonode:tab")
    for pk in (doc, map_):  # private, so that only the reader's own rows count
        change(c["owner"], pk, {"groups": [{"id": ANON_GROUP, "permissions": "none"}]})
    expected = {
        (doc, "view"): {VIEW},
        (doc, "download"): {VIEW, DOWNLOAD},
        (doc, "edit"): {VIEW, DOWNLOAD, *EDIT, *SPECIAL},
        (doc, "manage"): {VIEW, DOWNLOAD, *EDIT, *MANAGE, *SPECIAL},
        (map_, "download"): {VIEW},
        (map_, "edit"): {VIEW, *EDIT, *SPECIAL},
        (map_, "manage"): {VIEW, *EDIT, *MANAGE, *SPECIAL},
        (vector, "download"): {VIEW, DOWNLOAD},
        (vector, "edit"): {VIEW, DOWNLOAD, *EDIT, *DATASET, *SPECIAL},
        (vector, "manage"): {VIEW, DOWNLOAD, *EDIT, *DATASET, *MANAGE, *SPECIAL},
        (vector, "owner"): {VIEW, DOWNLOAD, *EDIT, *DATASET, *MANAGE, *SPECIAL},
        (tabular, "edit"): {VIEW, DOWNLOAD, *EDIT, *SPECIAL},
    }
    for (pk, level), names in expected.items():
        change(c["owner"], pk, {"users": [{"id": reader, "permissions": level}]})
        assert perms_of(c["reader"], pk) == names, (pk, level)
        # the overview reads the level back (download on a map is only view; owner for another is manage)
        shown = levels(c["owner"], pk)[("user", reader)]
        assert shown == {"download": "view" if pk == map_ else "download", "owner": "manage"}.get(level, level)
    assert levels(c["owner"], vector)[("user", p["people"]["owner"]["pk"])] == "owner"
    assert levels(c["owner"], vector)[("group", ANON_GROUP)] == "none"  # inserted without grants


def test_mapping_form(p):
    c = p["c"]
    people, team = p["people"], p["team"]
    pk = create(c["owner"])
    change(c["owner"], pk, {
        "users": {people["reader"]["username"]: [VIEW, DOWNLOAD], "AnonymousUser": [],
                  people["manager"]["username"]: [VIEW, "change_resourcebase_permissions"]},
        "groups": {team["group"]["name"]: [VIEW, "change_resourcebase"], "registered-members": [VIEW]}})
    got = levels(c["owner"], pk)
    assert got[("user", people["reader"]["pk"])] == "download"
    assert got[("user", people["manager"]["pk"])] == "manage"
    assert got[("group", team["group"]["pk"])] == "edit"
    assert got[("group", REGISTERED_GROUP)] == "view" and got[("group", ANON_GROUP)] == "none"
    # the level stands for the whole set, whatever subset the names were
    assert perms_of(c["manager"], pk) >= {VIEW, DOWNLOAD, *EDIT, *MANAGE}
    assert perms_of(c["member"], pk) >= {VIEW, DOWNLOAD, *EDIT}
    # both shapes in one body, and the anonymous user of the array form
    change(c["owner"], pk, {"users": [{"id": -1, "permissions": "view"}],
                            "groups": {"registered-members": []}}, method="PATCH")
    got = levels(c["owner"], pk)
    assert got[("group", ANON_GROUP)] == "view" and got[("group", REGISTERED_GROUP)] == "none"


def test_changes_are_seen_by_the_next_list_call(p):
    c = p["c"]
    owner, reader = p["people"]["owner"], p["people"]["reader"]
    word = f"kwperm{owner['pk']}"
    pk = create(c["owner"], keywords=[word], title="zzpermvisible")
    query = {"filter{title}": "zzpermvisible"}

    def anon_sees() -> tuple[int, int, int, int]:
        lst = c["anon"].get("/api/v2/resources/", params=query).json()
        types = {t["name"]: t["count"] for t in
                 c["anon"].get("/api/v2/resources/resource_types/").json()["resource_types"]}
        kws = {k["name"]: k["count"] for k in c["anon"].get("/api/v2/keywords/", params={"page_size": 1000}).json()["keywords"]}
        owners = {o["username"]: o["count"] for o in c["anon"].get("/api/v2/owners/").json()["owners"]}
        return lst["total"], types.get("document", 0), kws.get(word, 0), owners.get(owner["username"], 0)

    total, docs, kw, owned = anon_sees()
    assert total == 1 and kw == 1 and docs >= 1 and owned >= 1
    assert c["anon"].get(f"/api/v2/resources/{pk}").status_code == 200
    change(c["owner"], pk, {"groups": [{"id": ANON_GROUP, "permissions": "none"},
                                       {"id": REGISTERED_GROUP, "permissions": "none"}]})
    assert anon_sees() == (0, docs - 1, 0, owned - 1)
    assert_envelope(c["anon"].get(f"/api/v2/resources/{pk}"), 404, "not_found")
    for who in ("reader", "stranger"):
        assert c[who].get("/api/v2/resources/", params=query).json()["total"] == 0
    change(c["owner"], pk, {"users": [{"id": reader["pk"], "permissions": "view"}]})
    assert c["reader"].get("/api/v2/resources/", params=query).json()["total"] == 1
    assert c["reader"].get(f"/api/v2/resources/{pk}").status_code == 200
    assert c["stranger"].get("/api/v2/resources/", params=query).json()["total"] == 0
    # registered members: every logged-in user sees it, anonymous still not
    change(c["owner"], pk, {"groups": [{"id": REGISTERED_GROUP, "permissions": "view"}]})
    assert c["stranger"].get("/api/v2/resources/", params=query).json()["total"] == 1
    assert c["anon"].get("/api/v2/resources/", params=query).json()["total"] == 0
    change(c["owner"], pk, {"groups": [{"id": ANON_GROUP, "permissions": "view"}]})
    assert anon_sees() == (1, docs, 1, owned)


def test_merge_keeps_others_and_none_revokes(p):
    c = p["c"]
    reader, manager, stranger = ids(p, "reader", "manager", "stranger")
    pk = create(c["owner"])
    change(c["owner"], pk, {"users": [{"id": reader, "permissions": "view"}]})
    change(c["owner"], pk, {"users": [{"id": manager, "permissions": "edit"}]}, method="PATCH", slash="/")
    change(c["owner"], pk, {"users": [{"id": stranger, "permissions": "download"}]}, method="PUT")
    got = levels(c["owner"], pk)
    assert (got[("user", reader)], got[("user", manager)], got[("user", stranger)]) == ("view", "edit", "download")
    assert got[("group", ANON_GROUP)] == "download"  # untouched
    change(c["owner"], pk, {"users": [{"id": reader, "permissions": "none"},
                                      {"id": manager, "permissions": "view"}]})
    got = levels(c["owner"], pk)
    assert ("user", reader) not in got and got[("user", manager)] == "view" and got[("user", stranger)] == "download"
    # an empty spec changes nothing
    change(c["owner"], pk, {})
    assert levels(c["owner"], pk) == got
    # DELETE strips everything but the owner's (and the admins', who need no rows)
    status = change(c["owner"], pk, method="DELETE")
    assert status["func_name"] == "remove_permissions" and status["output_params"] == {"output": True}
    got = levels(c["owner"], pk)
    owner = p["people"]["owner"]["pk"]
    assert {k: v for k, v in got.items() if k[0] == "user"} == {("user", owner): "owner",
                                                                ("user", p["admin_id"]): "manage"}
    assert got[("group", ANON_GROUP)] == got[("group", REGISTERED_GROUP)] == "none"
    assert_envelope(c["anon"].get(f"/api/v2/resources/{pk}"), 404, "not_found")
    assert c["owner"].get(f"/api/v2/resources/{pk}").status_code == 200


def test_owner_and_admins_cannot_be_demoted(p):
    c = p["c"]
    owner, reader = ids(p, "owner", "reader")
    pk = create(c["owner"])
    change(c["admin"], pk, {"users": [{"id": owner, "permissions": "none"}, {"id": p["admin_id"], "permissions": "none"},
                                      {"id": reader, "permissions": "owner"}]})
    got = levels(c["admin"], pk)
    assert got[("user", owner)] == "owner" and got[("user", p["admin_id"])] == "manage"
    assert got[("user", reader)] == "manage"  # no transfer of ownership (GeoNode 5)
    detail = c["owner"].get(f"/api/v2/resources/{pk}").json()["resource"]
    assert detail["owner"]["pk"] == owner and "change_resourcebase_permissions" in detail["perms"]
    assert c["owner"].patch(f"/api/v2/resources/{pk}", json={"title": "still mine"}).status_code == 200
    # what GET answers can be sent back as it is (other keys of the entries are ignored)
    body = c["owner"].get(f"/api/v2/resources/{pk}/permissions").json()
    change(c["owner"], pk, body)
    assert levels(c["owner"], pk) == got


def test_special_groups_need_their_virtual_permissions(p):
    c, srv = p["c"], p["srv"]
    keeper, reader = ids(p, "keeper", "reader")
    # keeper may change permissions, but is not an editor: the special groups are not theirs
    pk = insert_resource(srv, p["people"]["owner"]["pk"], "Kept", [
        (keeper, None, VIEW), (keeper, None, "change_resourcebase_permissions"),
        (None, ANON_GROUP, VIEW), (None, ANON_GROUP, DOWNLOAD)])
    held = perms_of(c["keeper"], pk)
    assert "change_resourcebase_permissions" in held and not held & (EDIT | SPECIAL)
    change(c["keeper"], pk, {"users": [{"id": reader, "permissions": "view"}, {"id": -1, "permissions": "none"}],
                             "groups": [{"id": ANON_GROUP, "permissions": "none"},
                                        {"id": REGISTERED_GROUP, "permissions": "download"}]})
    got = levels(c["keeper"], pk)
    assert got[("user", reader)] == "view"
    assert got[("group", ANON_GROUP)] == "download" and got[("group", REGISTERED_GROUP)] == "none"
    change(c["keeper"], pk, {"users": {"AnonymousUser": []}, "groups": {"registered-members": [VIEW]}})
    assert levels(c["keeper"], pk) == got
    # DELETE by them leaves the special groups as they were
    change(c["keeper"], pk, method="DELETE")
    got = levels(c["owner"], pk)
    assert ("user", reader) not in got and got[("group", ANON_GROUP)] == "download"
    # an editor who may change permissions has both virtual permissions
    change(c["owner"], pk, {"users": [{"id": keeper, "permissions": "manage"}]})
    change(c["keeper"], pk, {"groups": [{"id": ANON_GROUP, "permissions": "none"},
                                        {"id": REGISTERED_GROUP, "permissions": "view"}]})
    got = levels(c["owner"], pk)
    assert got[("group", ANON_GROUP)] == "none" and got[("group", REGISTERED_GROUP)] == "view"


@pytest.mark.parametrize("body, message", [
    ({"users": "not-a-list"}, "users: expected a list of {id, permissions} objects or a mapping from names to lists "
                              "of permission names."),
    ({"users": ["x"]}, "users[0]: expected an object with id and permissions."),
    ({"users": [{"permissions": "view"}]}, "users[0]: id is required."),
    ({"users": [{"id": 2}]}, "users[0]: permissions is required."),
    ({"users": [{"id": "abc", "permissions": "view"}]}, "users[0]: id must be a whole number (-1 for AnonymousUser), not 'abc'."),
    ({"users": [{"id": True, "permissions": "view"}]}, "users[0]: id must be a whole number (-1 for AnonymousUser), not True."),
    ({"users": [{"id": 10**30, "permissions": "view"}]}, None),
    ({"users": [{"id": -5, "permissions": "view"}]}, "users[0]: id must be a whole number (-1 for AnonymousUser), not -5."),
    ({"users": [{"id": "7x", "permissions": "view"}]}, None),
    ({"users": [{"id": 999999, "permissions": "view"}]}, "users[0]: no user with id 999999."),
    ({"groups": [{"id": 999999, "permissions": "view"}]}, "groups[0]: no group with id 999999."),
    ({"groups": [{"id": -1, "permissions": "view"}]}, "groups[0]: no group with id -1."),
    ({"organizations": [{"id": 1, "permissions": "admin"}]},
     "organizations[0]: unknown permissions level 'admin'; expected one of none, view, download, edit, manage, owner."),
    ({"users": [{"id": 1, "permissions": ["view"]}]}, None),
    ({"users": {"nobody-at-all": [VIEW]}}, "users: no user named 'nobody-at-all'."),
    ({"groups": {"no-such-group": [VIEW]}}, "groups: no group named 'no-such-group'."),
    ({"users": {"AnonymousUser": ["fly_resourcebase"]}}, "users['AnonymousUser']: unknown permission 'fly_resourcebase'."),
    ({"users": {"AnonymousUser": "view_resourcebase"}}, "users['AnonymousUser']: expected a list of permission names."),
    ([{"id": 1, "permissions": "view"}], "Expected a JSON object with users, groups or organizations."),
    (None, "Expected a JSON object with users, groups or organizations."),
])
def test_bad_bodies(p, body, message):
    c = p["c"]
    if "bad_pk" not in p:
        p["bad_pk"] = create(c["owner"])
    pk = p["bad_pk"]
    for method in ("PUT", "PATCH"):
        r = c["owner"].request(method, f"/api/v2/resources/{pk}/permissions", json=body)
        assert_envelope(r, 400, "invalid", message)


def test_bad_media(p):
    c = p["c"]
    pk = create(c["owner"])
    r = c["owner"].put(f"/api/v2/resources/{pk}/permissions", content=b"{nope", headers={"content-type": "application/json"})
    assert_envelope(r, 400, "parse_error")
    r = c["owner"].put(f"/api/v2/resources/{pk}/permissions", content=b"users", headers={"content-type": "text/plain"})
    assert_envelope(r, 415, "unsupported_media_type")


def test_changes_in_a_row_never_lose_one(p):
    """A change sent while the previous one still applies is refused with 409 (the client waits);
    every accepted one is applied, in order."""
    c = p["c"]
    reader = p["people"]["reader"]["pk"]
    pk = create(c["owner"])
    accepted = []
    for level in ("view", "download", "edit", "manage", "view", "download", "edit", "none"):
        r = c["owner"].put(f"/api/v2/resources/{pk}/permissions",
                           json={"users": [{"id": reader, "permissions": level}]})
        assert r.status_code in (200, 409), r.text
        if r.status_code == 409:
            assert_envelope(r, 409, "conflict")
            continue
        accepted.append(level)
        last = r.json()
    wait(c["owner"], last)
    want = accepted[-1]
    assert levels(c["owner"], pk).get(("user", reader), "none") == want


def test_parallel_changes_are_applied_or_refused(p):
    """Changes of one resource sent at once: each is accepted (and applied) or refused with 409,
    none is lost; changes of different resources never refuse each other."""
    from concurrent.futures import ThreadPoolExecutor

    srv, admin = p["srv"], p["c"]["admin"]
    people = [make_user(admin) for _ in range(8)]
    shared = create(p["c"]["owner"])
    own = [create(p["c"]["owner"]) for _ in people]

    def send(i: int) -> tuple[int, dict, dict]:
        with login(srv, p["people"]["owner"]) as c:
            body = {"users": [{"id": people[i]["pk"], "permissions": "view"}]}
            r1 = c.put(f"/api/v2/resources/{shared}/permissions", json=body)
            r2 = c.put(f"/api/v2/resources/{own[i]}/permissions", json=body)
            assert r1.status_code in (200, 409), r1.text
            assert r2.status_code == 200, r2.text
            if r1.status_code == 200:
                wait(c, r1.json())
            wait(c, r2.json())
            return r1.status_code, r1.json(), r2.json()

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(send, range(8)))
    got = levels(p["c"]["owner"], shared)
    for i, (code, body, _) in enumerate(results):
        if code == 409:
            assert_envelope_body(body)
        assert got.get(("user", people[i]["pk"]), "none") == ("view" if code == 200 else "none")
        assert levels(p["c"]["owner"], own[i])[("user", people[i]["pk"])] == "view"


def assert_envelope_body(body: dict) -> None:
    assert body["success"] is False and body["code"] == "conflict" and body["errors"][0]


def test_a_change_is_applied_when_its_receipt_comes(p):
    """A permission change is stored, run and ended in the write that answers it: the status
    is 'finished' at the first look, the next change is never refused as still applying, and
    another caller sees the change at once."""
    c = p["c"]
    reader = p["people"]["reader"]["pk"]
    pk = create(c["owner"])
    for level in ("view", "none", "download"):
        r = c["owner"].put(f"/api/v2/resources/{pk}/permissions", json={"users": [{"id": reader, "permissions": level}]})
        assert r.status_code == 200, r.text
        status = c["owner"].get(r.json()["status_url"]).json()
        assert status["status"] == "finished", status
    assert c["reader"].get(f"/api/v2/resources/{pk}").status_code == 200
    assert "download_resourcebase" in perms_of(c["reader"], pk)
