"""Favorites, ratings, extra metadata, linked resources and single fields of a resource."""

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user


@pytest.fixture(scope="module")
def a(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("actions") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, fan = make_user(admin), make_user(admin)
    with login(srv, owner) as c:
        doc = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "Doc",
                                                 "keywords": ["alpha", "beta"]}).json()["resource"]
        mp = c.post("/api/v2/resources/", json={"resource_type": "map", "title": "Map"}).json()["resource"]
    with login(srv, fan) as c:
        secret = c.post("/api/v2/resources/", json={"resource_type": "map", "title": "Fan's own"}).json()["resource"]
    import sqlite3
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3")
    with conn:  # make the fan's map private
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ?", (int(secret["pk"]),))
        conn.execute("UPDATE resources SET public_view = 0 WHERE id = ?", (int(secret["pk"]),))
    conn.close()
    yield {"srv": srv, "admin": admin, "owner": owner, "fan": fan, "doc": doc, "map": mp, "secret": secret}
    admin.close()
    srv.stop()


def test_favorites(a):
    srv, pk = a["srv"], a["doc"]["pk"]
    with srv.client() as anon:
        assert_envelope(anon.post(f"/api/v2/resources/{pk}/favorite"), 401, "not_authenticated")
    with login(srv, a["fan"]) as c:
        r = c.post(f"/api/v2/resources/{pk}/favorite/")
        assert r.status_code == 201 and r.json() == {"message": "Successfuly added resource to favorites"}
        r = c.post(f"/api/v2/resources/{pk}/favorite")
        assert_envelope(r, 400, "invalid", "Resource is already in favorites")
        assert r.json()["message"] == "Resource is already in favorites"
        assert c.get(f"/api/v2/resources/{pk}").json()["resource"]["favorite"] is True
        favorites = c.get("/api/v2/resources/favorites/").json()
        assert [f["pk"] for f in favorites["favorites"]] == [pk] and favorites["total"] == 1
        assert [r["pk"] for r in c.get("/api/v2/resources/", params={"favorite": "true"}).json()["resources"]] == [pk]
        r = c.delete(f"/api/v2/resources/{pk}/favorite")
        assert r.status_code == 200 and r.json() == {"message": "Successfuly removed resource from favorites"}
        assert_envelope(c.delete(f"/api/v2/resources/{pk}/favorite"), 404, "not_found")
    with login(srv, a["owner"]) as c:
        assert c.get(f"/api/v2/resources/{pk}").json()["resource"]["favorite"] is False
        assert_envelope(c.post(f"/api/v2/resources/{a['secret']['pk']}/favorite"), 404, "not_found")


def test_ratings(a):
    srv, pk = a["srv"], a["doc"]["pk"]
    with srv.client() as anon:
        assert anon.get(f"/api/v2/resources/{pk}/ratings").json() == {"rating": 0.0, "count": 0, "user_rating": None}
        assert_envelope(anon.post(f"/api/v2/resources/{pk}/ratings", json={"rating": 5}), 401, "not_authenticated")
    with login(srv, a["fan"]) as c:
        assert c.post(f"/api/v2/resources/{pk}/ratings", json={"rating": 5}).json()["user_rating"] == 5
        for bad in (0, 6, "x", None, True):
            assert_envelope(c.post(f"/api/v2/resources/{pk}/ratings", json={"rating": bad}), 400, "invalid")
    with login(srv, a["owner"]) as c:
        r = c.post(f"/api/v2/resources/{pk}/ratings", json={"rating": 2}).json()
        assert r == {"rating": 3.5, "count": 2, "user_rating": 2}
    with srv.client() as anon:
        assert anon.get(f"/api/v2/resources/{pk}").json()["resource"]["rating"] == "4"


def test_extra_metadata(a):
    srv, pk = a["srv"], a["doc"]["pk"]
    url = f"/api/v2/resources/{pk}/extra_metadata"
    item = {"filter_header": "Source", "field_name": "source", "field_label": "Source", "field_value": "survey"}
    with login(srv, a["fan"]) as c:
        assert_envelope(c.post(url, json=[item]), 403, "permission_denied")
    with login(srv, a["owner"]) as c:
        r = c.post(url, json=[item, {**item, "field_name": "year", "field_value": 2020}])
        assert r.status_code == 201
        items = r.json()
        assert [i["field_name"] for i in items] == ["source", "year"] and all(isinstance(i["id"], int) for i in items)
        assert_envelope(c.post(url, json=[{"field_name": "x"}]), 400, "invalid", "Missing key: 'field_label' at index 0")
        assert_envelope(c.post(url, json=[{**item, "colour": "red"}]), 400, "invalid")
        assert_envelope(c.post(url, json={"not": "a list"}), 400, "invalid")
        r = c.put(url, json=[{**item, "id": items[0]["id"], "field_value": "census"}])
        assert r.status_code == 200 and r.json()[0]["field_value"] == "census"
        assert_envelope(c.put(url, json=[{**item, "id": 99999}]), 400, "invalid")
        r = c.request("DELETE", url, json=[items[1]["id"]])
        assert r.status_code == 200 and [i["id"] for i in r.json()] == [items[0]["id"]]
    with srv.client() as anon:
        assert [i["field_value"] for i in anon.get(url, params={"field_name": "source"}).json()] == ["census"]
        assert anon.get(url, params={"field_name": "nope"}).json() == []
        detail = anon.get(f"/api/v2/resources/{pk}", params={"include[]": "metadata"}).json()["resource"]
        assert detail["metadata"][0]["field_value"] == "census"


def test_linked_resources(a):
    srv, doc, mp, secret = a["srv"], a["doc"], a["map"], a["secret"]
    url = f"/api/v2/resources/{doc['pk']}/linked_resources"
    with login(srv, a["fan"]) as c:
        assert_envelope(c.post(url, json={"target": [int(mp["pk"])]}), 403, "permission_denied")
    with login(srv, a["owner"]) as c:
        assert_envelope(c.post(url, json={"target": "x"}), 400, "invalid", "Payload is not valid")
        r = c.post(url, json={"target": [int(mp["pk"]), int(doc["pk"]), int(secret["pk"]), 99999]})
        assert r.status_code == 400
        assert r.json() == {"success": [int(mp["pk"])], "error": [int(doc["pk"]), int(secret["pk"]), 99999],
                            "message": "Some error has occurred during the saving"}
        body = c.get(url).json()
        assert [x["pk"] for x in body["linked_to"]] == [int(mp["pk"])] and body["linked_by"] == []
        item = body["linked_to"][0]
        assert set(item) == {"internal", "pk", "title", "resource_type", "detail_url", "thumbnail_url"}
        assert item["internal"] is False and item["resource_type"] == "map"
        back = c.get(f"/api/v2/resources/{mp['pk']}/linked_resources").json()
        assert [x["pk"] for x in back["linked_by"]] == [int(doc["pk"])]
        assert c.get(url, params={"resource_type": "dataset,document"}).json()["linked_to"] == []
        assert list(c.get(url, params={"link_type": "linked_by"}).json()) == ["linked_by"]
        assert c.get(url, params={"page": 2}).json()["WARNINGS"] == {"PAGINATION": "Pagination is not supported on this call"}
        assert c.get(f"/api/v2/documents/{doc['pk']}/linked_resources").json()["linked_to"][0]["pk"] == int(mp["pk"])
        detail = c.get(f"/api/v2/resources/{doc['pk']}", params={"include[]": "linked_resources"}).json()["resource"]
        assert detail["linked_resources"]["linked_to"][0]["pk"] == int(mp["pk"])
        r = c.request("DELETE", url, json={"target": [int(mp["pk"])]})
        assert r.status_code == 200 and r.json()["success"] == [int(mp["pk"])]
        assert c.get(url).json()["linked_to"] == []
    with login(srv, a["fan"]) as c:  # the fan may link to their private map; the owner will not see it
        fan_doc = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "Fan doc"}).json()["resource"]
        assert c.post(f"/api/v2/resources/{fan_doc['pk']}/linked_resources",
                      json={"target": [int(secret["pk"]), int(doc["pk"])]}).status_code == 200
    with login(srv, a["owner"]) as c:
        links = c.get(f"/api/v2/resources/{fan_doc['pk']}/linked_resources").json()["linked_to"]
        assert [x["pk"] for x in links] == [int(doc["pk"])]


def test_single_fields(a):
    with a["srv"].client() as anon:
        r = anon.get(f"/api/v2/resources/{a['doc']['pk']}/keywords/")
        assert r.status_code == 200 and {k["name"] for k in r.json()["keywords"]} == {"alpha", "beta"}
        assert anon.get(f"/api/v2/resources/{a['doc']['pk']}/owner").json()["owner"]["username"] == a["owner"]["username"]
        assert_envelope(anon.get(f"/api/v2/resources/{a['doc']['pk']}/nosuchfield"), 404, "not_found")
        assert_envelope(anon.get(f"/api/v2/resources/{a['secret']['pk']}/keywords"), 404, "not_found")
        # one handler: /resources and a document's own family answer alike
        for field in ("title", "keywords", "owner", "perms", "metadata", "executions", "extension", "nosuchfield"):
            both = [anon.get(f"/api/v2/{family}/{a['doc']['pk']}/{field}") for family in ("resources", "documents")]
            if field == "extension":  # a document's own field, not a resource's
                assert both[0].status_code == 404 and list(both[1].json()) == ["extension"]
                continue
            assert [r.status_code for r in both] == [200, 200] or field == "nosuchfield", field
            assert both[0].json() == both[1].json(), field


def test_favorites_never_show_what_became_private(a):
    srv = a["srv"]
    with login(srv, a["owner"]) as c:
        doc = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "Soon private"}).json()["resource"]
    with login(srv, a["fan"]) as c:
        assert c.post(f"/api/v2/resources/{doc['pk']}/favorite").status_code == 201
        assert doc["pk"] in [f["pk"] for f in c.get("/api/v2/resources/favorites").json()["favorites"]]
    import sqlite3
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3")
    with conn:
        conn.execute("DELETE FROM resource_perms WHERE resource_id = ?", (int(doc["pk"]),))
        conn.execute("UPDATE resources SET public_view = 0 WHERE id = ?", (int(doc["pk"]),))
    conn.close()
    with login(srv, a["fan"]) as c:
        body = c.get("/api/v2/resources/favorites").json()
        assert doc["pk"] not in [f["pk"] for f in body["favorites"]]
        assert c.get("/api/v2/resources/", params={"favorite": "true", "filter{pk}": doc["pk"]}).json()["total"] == 0
