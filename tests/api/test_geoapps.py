"""Geoapps on /api/v2/geoapps as GeoNode's serializer has them: name and resource_type required
(the owner is the caller), a name used once (409), the JSON document written as blob or data and
read with include[]=data, geostory and dashboard; who may read, change, copy and delete one."""

from __future__ import annotations

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user, poll

STORY = {"sections": [{"type": "title", "contents": [{"html": "<h1>Once</h1>"}]}], "settings": {"theme": "dark"}}


@pytest.fixture(scope="module")
def ga(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("geoapps") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other = make_user(admin), make_user(admin)
    yield {"srv": srv, "admin": admin, "owner": owner, "other": other}
    admin.close()
    srv.stop()


def made(response) -> dict:
    assert response.status_code == 201, response.text
    assert set(response.json()) == {"geoapp"}
    return response.json()["geoapp"]


def test_create_with_name_and_type_and_read_the_document_back(ga):
    with login(ga["srv"], ga["owner"]) as c:
        app = made(c.post("/api/v2/geoapps", json={"name": "story-one", "resource_type": "geostory",
                                                    "title": "Story one", "blob": STORY,
                                                    "owner": ga["other"]["pk"]}))
        assert app["name"] == "story-one" and app["resource_type"] == "geostory" and app["title"] == "Story one"
        assert app["owner"]["pk"] == ga["owner"]["pk"], "the owner is always the caller"
        assert "data" not in app and "blob" not in app
        assert app["link"].endswith(f"/api/v2/geoapps/{app['pk']}")
        assert app["embed_url"].endswith(f"/apps/{app['pk']}/embed")
        r = c.get(f"/api/v2/geoapps/{app['pk']}", params={"include[]": "data"})
        assert r.status_code == 200 and r.json()["geoapp"]["data"] == STORY
        assert r.json()["geoapp"]["name"] == "story-one"
        # "data" on input is the same as "blob"; GeoNode's wrapped shape; a dashboard
        board = made(c.post("/api/v2/geoapps", json={"geoapp": {"name": "board-one", "resource_type": "dashboard",
                                                                "data": {"widgets": [1, 2]}}}))
        assert board["resource_type"] == "dashboard" and board["title"] == "board-one"
        rows = c.get("/api/v2/geoapps/", params={"include[]": "data", "page_size": 100}).json()["geoapps"]
        by_pk = {row["pk"]: row for row in rows}
        assert by_pk[board["pk"]]["data"] == {"widgets": [1, 2]} and by_pk[board["pk"]]["name"] == "board-one"
        assert by_pk[app["pk"]]["data"] == STORY
        assert "data" not in c.get("/api/v2/geoapps/").json()["geoapps"][0]
        # the document replaced through PATCH, with data or blob
        r = c.patch(f"/api/v2/geoapps/{board['pk']}", json={"data": {"widgets": []}})
        assert r.status_code == 200, r.text
        assert c.get(f"/api/v2/geoapps/{board['pk']}", params={"include[]": "data"}).json()["geoapp"]["data"] == \
            {"widgets": []}
        # the same resource on /resources
        assert c.get(f"/api/v2/resources/{app['pk']}").json()["resource"]["resource_type"] == "geostory"


@pytest.mark.parametrize("body", [{"resource_type": "geostory", "title": "No name"}, {"name": "no-type"},
                                  {"name": "", "resource_type": "geostory"}, {}])
def test_name_and_resource_type_are_mandatory(ga, body):
    with login(ga["srv"], ga["owner"]) as c:
        before = c.get("/api/v2/geoapps/").json()["total"]
        assert_envelope(c.post("/api/v2/geoapps", json=body), 400, "geoapp_exception",
                        "No valid data: ['name', 'owner', 'resource_type'] are mandatory fields!")
        assert c.get("/api/v2/geoapps/").json()["total"] == before


def test_a_name_is_used_once(ga):
    srv = ga["srv"]
    with login(srv, ga["owner"]) as c:
        first = made(c.post("/api/v2/geoapps", json={"name": "unique-app", "resource_type": "geostory"}))
    with login(srv, ga["other"]) as o:  # another user's geoapp of another type: still taken
        before = o.get("/api/v2/geoapps/").json()["total"]
        assert_envelope(o.post("/api/v2/geoapps", json={"name": "unique-app", "resource_type": "dashboard"}),
                        409, "geoapp_exception", "A GeoApp with the same 'name' already exists!")
        assert o.get("/api/v2/geoapps/").json()["total"] == before
        # several at once: all or nothing
        r = o.post("/api/v2/geoapps", json=[{"name": "batch-a", "resource_type": "geostory"},
                                            {"name": "unique-app", "resource_type": "geostory"}])
        assert_envelope(r, 409, "geoapp_exception")
        assert o.get("/api/v2/geoapps/").json()["total"] == before
        second = made(o.post("/api/v2/geoapps", json={"name": "Unique-App", "resource_type": "dashboard"}))
    with login(srv, ga["other"]) as o:  # renaming onto a taken name is refused too
        assert_envelope(o.patch(f"/api/v2/geoapps/{second['pk']}", json={"name": "unique-app"}), 409,
                        "geoapp_exception")
        r = o.patch(f"/api/v2/geoapps/{second['pk']}", json={"name": "renamed-app"})
        assert r.status_code == 200 and r.json()["geoapp"]["name"] == "renamed-app"
    with login(srv, ga["owner"]) as c:  # once deleted, its name is free again
        r = c.delete(f"/api/v2/resources/{first['pk']}/delete")
        assert poll(c, r.json()["status_url"])["status"] == "finished"
        made(c.post("/api/v2/geoapps", json={"name": "unique-app", "resource_type": "geostory"}))


def test_wrong_values_are_refused(ga):
    with login(ga["srv"], ga["owner"]) as c:
        assert_envelope(c.post("/api/v2/geoapps", json={"name": "wrong", "resource_type": "map"}), 400, "invalid")
        assert_envelope(c.post("/api/v2/geoapps", json={"name": "wrong", "resource_type": "dataset"}), 400, "invalid")
        assert_envelope(c.post("/api/v2/geoapps", json={"name": 5, "resource_type": "geostory"}), 400, "invalid")
        assert_envelope(c.post("/api/v2/geoapps", json={"name": "x" * 256, "resource_type": "geostory"}), 400,
                        "invalid")


def test_who_may_do_what(ga):
    """Anonymous reads a public geoapp and writes nothing; another user reads, copies (the copy
    gets a name of its own) and may not change or delete; the owner and an admin may do all."""
    srv, admin = ga["srv"], ga["admin"]
    with login(srv, ga["owner"]) as c:
        app = made(c.post("/api/v2/geoapps", json={"name": "guarded", "resource_type": "geostory", "blob": STORY}))
        private = made(c.post("/api/v2/geoapps", json={"name": "hidden", "resource_type": "dashboard"}))
        r = c.put(f"/api/v2/resources/{private['pk']}/permissions", json={"groups": [{"id": 1, "permissions": "none"},
                                                                                   {"id": 2, "permissions": "none"}]})
        assert poll(c, r.json()["status_url"])["status"] == "finished"
    url = f"/api/v2/geoapps/{app['pk']}"
    with srv.client() as anon:
        assert anon.get(url, params={"include[]": "data"}).json()["geoapp"]["data"] == STORY
        assert_envelope(anon.get(f"/api/v2/geoapps/{private['pk']}"), 404, "not_found")
        assert_envelope(anon.post("/api/v2/geoapps", json={"name": "anon", "resource_type": "geostory"}), 401,
                        "not_authenticated")
        assert_envelope(anon.patch(url, json={"title": "x"}), 401, "not_authenticated")
        assert_envelope(anon.put(f"/api/v2/resources/{app['pk']}/copy"), 401, "not_authenticated")
    with login(srv, ga["other"]) as o:
        assert o.get(url).json()["geoapp"]["name"] == "guarded"
        assert_envelope(o.get(f"/api/v2/geoapps/{private['pk']}"), 404, "not_found")
        assert_envelope(o.patch(url, json={"title": "Taken over"}), 403, "permission_denied")
        assert_envelope(o.patch(url, json={"name": "stolen"}), 403, "permission_denied")
        assert_envelope(o.delete(f"/api/v2/resources/{app['pk']}/delete"), 403, "permission_denied")
        assert_envelope(o.put(f"/api/v2/resources/{private['pk']}/copy"), 404, "not_found")
        r = o.put(f"/api/v2/resources/{app['pk']}/copy")
        status = poll(o, r.json()["status_url"])
        assert status["status"] == "finished", status
        copy = o.get(f"/api/v2/geoapps/{status['output_params']['output']['pk']}",
                     params={"include[]": "data"}).json()["geoapp"]
        assert copy["owner"]["pk"] == ga["other"]["pk"] and copy["resource_type"] == "geostory"
        assert copy["name"] == "guarded_2" and copy["data"] == STORY
        assert o.get(url).json()["geoapp"]["title"] == app["title"]
    with login(srv, ga["owner"]) as c:
        r = c.patch(url, json={"title": "Changed by the owner", "name": "guarded-renamed"})
        assert r.status_code == 200 and r.json()["geoapp"]["name"] == "guarded-renamed"
    r = admin.patch(f"/api/v2/geoapps/{private['pk']}", json={"title": "Changed by an admin"})
    assert r.status_code == 200 and r.json()["geoapp"]["title"] == "Changed by an admin"
    r = admin.delete(f"/api/v2/resources/{private['pk']}/delete")
    assert poll(admin, r.json()["status_url"])["status"] == "finished"
    assert_envelope(admin.get(f"/api/v2/geoapps/{private['pk']}"), 404, "not_found")


def test_geoapps_made_through_resources_show_their_title_as_name(ga):
    with login(ga["srv"], ga["owner"]) as c:
        r = c.post("/api/v2/resources/", json={"resource_type": "dashboard", "title": "Board via resources"})
        assert r.status_code == 201, r.text
        pk = r.json()["resource"]["pk"]
        assert c.get(f"/api/v2/geoapps/{pk}").json()["geoapp"]["name"] == "Board via resources"
