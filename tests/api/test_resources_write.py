"""Writing resources: create in every bulk shape, PATCH/PUT, DELETE, bulk update, patch-all."""

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("writes") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, editor, stranger = (make_user(admin) for _ in range(3))
    yield {"srv": srv, "admin": admin, "owner": owner, "editor": editor, "stranger": stranger}
    admin.close()
    srv.stop()


def create(client, **fields):
    r = client.post("/api/v2/resources/", json={"resource_type": "document", "title": "A document", **fields})
    assert r.status_code == 201, r.text
    return r.json()["resource"]


def grant(srv, rid, user_id, perm):
    import sqlite3

    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        conn.execute("INSERT INTO resource_perms (resource_id, user_id, perm) VALUES (?, ?, ?)", (rid, user_id, perm))
    conn.close()


def test_create_matrix_and_shapes(w):
    srv = w["srv"]
    with srv.client() as anon:
        assert_envelope(anon.post("/api/v2/resources/", json={"title": "x", "resource_type": "map"}), 401,
                        "not_authenticated")
    with login(srv, w["owner"]) as c:
        doc = create(c, abstract="<p>Hello</p>", category={"identifier": "biota"}, license="cc-by",
                     keywords=["Rivers", {"name": "Lakes"}], date="2024-02-03T04:05:06+02:00")
        assert doc["owner"]["username"] == w["owner"]["username"]
        assert doc["category"]["identifier"] == "biota" and doc["license"] == {"identifier": "cc-by"}
        assert {k["name"] for k in doc["keywords"]} == {"Rivers", "Lakes"}
        assert doc["date"] == "2024-02-03T02:05:06.000000Z" and doc["raw_abstract"] == "Hello"
        assert "delete_resourcebase" in doc["perms"] and doc["is_published"] is True
        r = c.post("/api/v2/resources", json={"resource": {"resource_type": "map", "title": "M"}})
        assert r.status_code == 201 and r.json()["resource"]["resource_type"] == "map"
        r = c.post("/api/v2/resources/", json={"resources": [{"resource_type": "geostory", "title": "G"},
                                                              {"resource_type": "dashboard", "title": "D"}]})
        assert r.status_code == 201 and [x["resource_type"] for x in r.json()["resources"]] == ["geostory", "dashboard"]
        r = c.post("/api/v2/maps/", json=[{"title": "M1"}, {"title": "M2"}])
        assert r.status_code == 201 and [x["resource_type"] for x in r.json()["maps"]] == ["map", "map"]
        assert_envelope(c.post("/api/v2/resources/", json={"resource_type": "dataset", "title": "x"}), 400, "invalid")
        assert_envelope(c.post("/api/v2/resources/", json={"title": "no type"}), 400, "invalid")
        assert_envelope(c.post("/api/v2/resources/", json={"resource_type": "map"}), 400, "invalid",
                        "title: This field is required.")
        assert_envelope(c.post("/api/v2/resources/", json={"resource_type": "map", "title": "x", "category": "nope"}),
                        400, "invalid", "Invalid value for 'category': TopicCategory object with ID=nope not found")
        assert_envelope(c.post("/api/v2/resources/", json=[{"resource_type": "map", "title": "ok"},
                                                           {"resource_type": "map", "title": "x", "license": 9999}]),
                        400, "invalid")
        assert c.get("/api/v2/maps/", params={"filter{title}": "ok"}).json()["total"] == 0  # all or nothing
    with srv.client() as anon:  # new resources are public by default
        assert anon.get(f"/api/v2/resources/{doc['pk']}").status_code == 200


def test_relations_in_every_input_form(w):
    with login(w["srv"], w["owner"]) as c:
        doc = create(c)
        url = f"/api/v2/resources/{doc['pk']}/"
        for value in (1, "1", {"identifier": "biota"}, '{"identifier": "biota"}', "biota"):
            r = c.patch(url, json={"category": value})
            assert r.status_code == 200 and r.json()["resource"]["category"]["identifier"] == "biota", value
        assert c.patch(url, json={"category": None}).json()["resource"]["category"] is None
        r = c.patch(url, json={"poc": [{"pk": w["editor"]["pk"]}], "metadata_author": [{"username": w["owner"]["username"]}]})
        body = r.json()["resource"]
        assert [u["pk"] for u in body["poc"]] == [w["editor"]["pk"]]
        assert body["metadata_author"][0]["username"] == w["owner"]["username"]
        assert_envelope(c.patch(url, json={"poc": [{"pk": 99999}]}), 400, "invalid")
        assert_envelope(c.patch(url, json={"poc": [{"pk": w["editor"]["pk"], "username": w["owner"]["username"]}]}),
                        400, "invalid")
        assert_envelope(c.patch(url, json={"group": 99999}), 400, "invalid")


def test_update_matrix(w):
    srv = w["srv"]
    with login(srv, w["owner"]) as c:
        doc = create(c, title="Owned")
    url = f"/api/v2/resources/{doc['pk']}/"
    with srv.client() as anon:
        assert_envelope(anon.patch(url, json={"title": "x"}), 401, "not_authenticated")
    with login(srv, w["stranger"]) as c:
        assert_envelope(c.patch(url, json={"title": "x"}), 403, "permission_denied")
        assert_envelope(c.put(url, json={"title": "x"}), 403, "permission_denied")
    grant(srv, int(doc["pk"]), w["editor"]["pk"], "change_resourcebase_metadata")
    with login(srv, w["editor"]) as c:
        r = c.patch(url, json={"resource": {"abstract": "by the editor"}})
        assert r.status_code == 200 and r.json()["resource"]["abstract"] == "by the editor"
    with login(srv, w["owner"]) as c:
        r = c.put(f"/api/v2/documents/{doc['pk']}", json={"title": "Renamed", "featured": True, "is_published": False,
                                                           "bbox_polygon": {"type": "Polygon", "coordinates": []},
                                                           "pk": "999", "owner": {"pk": 1}})
        body = r.json()["document"]
        assert r.status_code == 200 and body["title"] == "Renamed" and body["pk"] == doc["pk"]
        assert body["is_published"] is False        # the owner may
        assert body["featured"] is False            # only admins and group managers may: ignored
        assert body["owner"]["pk"] == w["owner"]["pk"]
        assert_envelope(c.patch(url, json={"date": "not-a-date"}), 400, "invalid",
                        "'not-a-date' has wrong format. Use one of these formats instead: "
                        "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].")
        assert_envelope(c.patch(url, json={"title": ""}), 400, "invalid")
        assert_envelope(c.patch(url, content=b"[1]", headers={"Content-Type": "application/json"}), 400, "invalid")
        assert_envelope(c.patch(f"/api/v2/datasets/{doc['pk']}/", json={"title": "x"}), 404, "not_found")
    r = w["admin"].patch(url, json={"featured": True})
    assert r.json()["resource"]["featured"] is True
    with srv.client() as anon:
        assert anon.get(url).json()["resource"]["title"] == "Renamed"


def test_extent_is_reprojected_for_documents_only(w):
    with login(w["srv"], w["owner"]) as c:
        doc = create(c)
        r = c.patch(f"/api/v2/resources/{doc['pk']}", json={"extent": {"coords": [939258.2, 5780349.2, 1001875.4, 5889661.9],
                                                                         "srid": "EPSG:3857"}})
        body = r.json()["resource"]
        x0, y0, x1, y1 = body["extent"]["coords"]
        assert 8.4 < x0 < 8.5 and 45.9 < y0 < 46.1 and 8.9 < x1 < 9.1 and 46.5 < y1 < 46.8
        assert body["srid"] == "EPSG:3857" and body["bbox_polygon"]["coordinates"][0][0] == [939258.2, 5780349.2]
        assert "CHE" in {g["code"] for g in body["regions"]}
        assert c.get("/api/v2/resources/", params={"extent": "8.5,46,8.6,46.1", "filter{pk}": doc["pk"]}).json()["total"] == 1
        assert_envelope(c.patch(f"/api/v2/resources/{doc['pk']}", json={"extent": {"coords": [1, 2, 3]}}), 400,
                        "invalid", "The standard bbox provided is invalid")
        assert_envelope(c.patch(f"/api/v2/resources/{doc['pk']}", json={"extent": {"coords": [1, 2, 3, 4], "srid": "EPSG:0"}}),
                        400, "invalid")
        m = c.post("/api/v2/resources/", json={"resource_type": "map", "title": "m"}).json()["resource"]
        r = c.patch(f"/api/v2/resources/{m['pk']}", json={"extent": {"coords": [1, 2, 3, 4], "srid": "EPSG:4326"}})
        assert r.json()["resource"]["extent"]["coords"] == [-180, -90, 180, 90]  # ignored for maps


def test_delete_matrix(w):
    srv = w["srv"]
    with login(srv, w["owner"]) as c:
        doc = create(c)
    url = f"/api/v2/resources/{doc['pk']}"
    with srv.client() as anon:
        assert_envelope(anon.delete(url), 401, "not_authenticated")
    with login(srv, w["stranger"]) as c:
        assert_envelope(c.delete(url), 403, "permission_denied")
    with login(srv, w["owner"]) as c:
        assert_envelope(c.delete(f"/api/v2/documents/{doc['pk']}"), 405, "method_not_allowed")
        assert c.delete(url + "/").status_code == 204
        assert_envelope(c.get(url), 404, "not_found")
        a = create(c)
        r = c.request("DELETE", "/api/v2/resources/", json=[{"id": int(a["pk"])}])
        assert_envelope(r, 405, "method_not_allowed")  # bulk delete needs ENABLE_BULK_UPDATE
        assert c.get(f"/api/v2/resources/{a['pk']}").status_code == 200


def test_bulk_update_is_off_by_default(w):
    with login(w["srv"], w["owner"]) as c:
        doc = create(c)
        assert_envelope(c.patch("/api/v2/resources/", json=[{"id": int(doc["pk"]), "title": "x"}]), 405,
                        "method_not_allowed")
        assert_envelope(c.patch("/api/v2/resources/?patch-all=true", json={"title": "x"}), 405, "method_not_allowed")


def test_bulk_update_and_patch_all_check_every_record(flagged_server):
    srv = flagged_server
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        me, other = make_user(admin), make_user(admin)
    with login(srv, me) as c, login(srv, other) as o:
        mine = [create(c, title=f"Mine {i}") for i in range(3)]
        theirs = create(o, title="Theirs")
        r = c.patch("/api/v2/resources/", json=[{"id": int(mine[0]["pk"]), "title": "x"},
                                                {"id": int(theirs["pk"]), "title": "hijacked"}])
        assert_envelope(r, 403, "permission_denied")
        assert o.get(f"/api/v2/resources/{theirs['pk']}").json()["resource"]["title"] == "Theirs"
        assert c.get(f"/api/v2/resources/{mine[0]['pk']}").json()["resource"]["title"] == "Mine 0"
        r = c.patch("/api/v2/resources/", json={"resources": [{"id": int(mine[0]["pk"]), "abstract": "bulk"}]})
        assert r.status_code == 200 and r.json()["resources"][0]["abstract"] == "bulk"
        r = c.patch("/api/v2/resources/?patch-all=true&filter{title.startswith}=Mine", json={"abstract": "all mine"})
        assert r.status_code == 200 and r.json() == {"meta": {"updated": 3}}
        r = c.patch(f"/api/v2/resources/?patch-all=true&search=mine&search_fields=title&filter{{owner.username}}="
                    f"{me['username']}", json={"abstract": "found mine"})  # through the text index
        assert r.status_code == 200 and r.json() == {"meta": {"updated": 3}}
        assert c.get(f"/api/v2/resources/{mine[2]['pk']}").json()["resource"]["abstract"] == "found mine"
        r = c.patch("/api/v2/resources/?patch-all=query", json={"abstract": "everything"})
        assert_envelope(r, 403, "permission_denied")  # "Theirs" is visible to me but not mine to change
        assert o.get(f"/api/v2/resources/{theirs['pk']}").json()["resource"]["abstract"] == ""
        assert_envelope(c.patch("/api/v2/resources/?patch-all=maybe", json={"abstract": "x"}), 400, "invalid")
        r = c.request("DELETE", "/api/v2/resources/", json=[{"id": int(mine[1]["pk"])}, {"id": int(theirs["pk"])}])
        assert_envelope(r, 403, "permission_denied")
        assert c.get(f"/api/v2/resources/{mine[1]['pk']}").status_code == 200  # nothing of the batch happened
        r = c.request("DELETE", "/api/v2/resources/", json={"resources": [{"id": int(mine[1]["pk"])}, {"id": int(mine[2]["pk"])}]})
        assert r.status_code == 204 and c.get(f"/api/v2/resources/{mine[2]['pk']}").status_code == 404


def test_managers_of_the_resource_group_may_edit_what_they_see(w):
    """GeoNode 5: a manager of the resource's group who holds some permission on it may also
    change it and its permissions; a plain member, or a manager of another group, may not."""
    import sqlite3

    from tests.conftest import make_group

    srv, admin = w["srv"], w["admin"]
    manager, member, other_manager = (make_user(admin) for _ in range(3))
    team, other = make_group(admin), make_group(admin)
    for group, users_, role in ((team, [manager["pk"]], "manager"), (team, [member["pk"], w["owner"]["pk"]], "member"),
                                (other, [other_manager["pk"]], "manager")):
        assert admin.post(f"/api/v2/groups/{team['pk'] if group is team else other['pk']}/members",
                          json={"users": users_, "role": role}).status_code == 200
    with login(srv, w["owner"]) as c:
        shared, unshared = create(c, title="Team map"), create(c, title="Team draft")
        for doc in (shared, unshared):
            r = c.patch(f"/api/v2/resources/{doc['pk']}/", json={"group": team["group"]["pk"]})
            assert r.status_code == 200 and r.json()["resource"]["group"]["pk"] == team["group"]["pk"], r.text
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:  # both private to the owner, then the team may view one
        for doc in (shared, unshared):
            conn.execute("DELETE FROM resource_perms WHERE resource_id = ? AND group_id IS NOT NULL", (int(doc["pk"]),))
            conn.execute("UPDATE resources SET public_view = 0 WHERE id = ?", (int(doc["pk"]),))
        conn.execute("INSERT INTO resource_perms (resource_id, group_id, perm) VALUES (?, ?, 'view_resourcebase')",
                     (int(shared["pk"]), team["group"]["pk"]))
    conn.close()
    url = f"/api/v2/resources/{shared['pk']}/"
    with login(srv, manager) as c:
        perms = c.get(url).json()["resource"]["perms"]
        assert {"view_resourcebase", "change_resourcebase", "change_resourcebase_metadata",
                "change_resourcebase_permissions"} <= set(perms)
        listed = c.get("/api/v2/resources/", params={"filter{pk}": shared["pk"]}).json()["resources"]
        assert set(listed[0]["perms"]) == set(perms)
        r = c.patch(url, json={"title": "Team map, checked"})
        assert r.status_code == 200 and r.json()["resource"]["title"] == "Team map, checked"
        # holding no permission on the other one, the manager does not even see it
        assert_envelope(c.get(f"/api/v2/resources/{unshared['pk']}/"), 404, "not_found")
        assert_envelope(c.patch(f"/api/v2/resources/{unshared['pk']}/", json={"title": "x"}), 404, "not_found")
    with login(srv, member) as c:
        assert c.get(url).json()["resource"]["perms"] == ["view_resourcebase"]
        assert_envelope(c.patch(url, json={"title": "x"}), 403, "permission_denied")
    with login(srv, other_manager) as c:
        assert_envelope(c.get(url), 404, "not_found")
    with srv.client() as anon:
        assert_envelope(anon.get(url), 404, "not_found")
    assert admin.get(url).json()["resource"]["title"] == "Team map, checked"
