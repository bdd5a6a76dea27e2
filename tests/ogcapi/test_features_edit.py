"""OGC API - Features, Part 4 over plain HTTP: create, replace, update and delete features of real
data (tests/data's countries), each change seen through WFS GetFeature and the dataset's history
(via "ogcapi"); entity tags and If-Match (a stale tag: 412, nothing changed; two clients with the
same tag, one after the other or at once: one wins); who may edit; bad bodies refused with the
standard's JSON error, the data and history as they were."""

from __future__ import annotations

import re
import threading

import pytest

from tests.api.test_uploads import CITIES, COUNTRIES
from tests.conftest import ADMIN_PASSWORD, in_process, login, make_user, poll
from tests.ogc.conftest import PRIVATE, PUBLIC, upload_shapefile, upload_tif
from tests.ogc.wfst_helpers import fresh, make_world

ATLANTIS = {"type": "MultiPolygon", "coordinates": [[[[-30.0, 30.0], [-20.0, 30.0], [-20.0, 38.0], [-30.0, 30.0]]]]}
MOVED = {"type": "MultiPolygon", "coordinates": [[[[-40.0, 20.0], [-35.0, 20.0], [-35.0, 25.0], [-40.0, 20.0]]]]}
FEATURE = {"type": "Feature", "geometry": ATLANTIS,
           "properties": {"name": "Atlantis", "continent": "Ocean", "iso_a3": "ATL", "pop_est": 1000.0,
                          "gdp_md_est": 15}}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A server; the admin, an owner, another user and a member of a group that may edit the
    owner's datasets; the countries (public, owned by the owner, editable by the group)."""
    w = make_world(tmp_path_factory, "ogcapi-edit", in_process)
    w["countries"] = countries(w)
    yield w
    w["admin"].close()
    w["srv"].stop()


def share(w: dict, client, detail: dict) -> None:
    r = client.put(f"/api/v2/resources/{detail['pk']}/permissions",
                   json={"organizations": [{"id": w["group"]["group"]["pk"], "permissions": "edit"}]})
    assert poll(client, r.json()["status_url"])["status"] == "finished"


def countries(w: dict, permissions: str = PUBLIC) -> dict:
    """A new upload of the countries by the owner, which the group may edit: its detail."""
    with login(w["srv"], w["owner"]) as c:
        detail = upload_shapefile(c, COUNTRIES, permissions)
        share(w, c, detail)
    return detail


def cid(detail: dict) -> str:
    return detail["alternate"].partition(":")[2]


def items(detail: dict) -> str:
    return f"/ogcapi/collections/{cid(detail)}/items"


def wfs_features(client, detail: dict) -> dict[int, dict]:
    """The layer's features by fid, as WFS GetFeature gives them (GeoJSON, longitude/latitude)."""
    r = client.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typeNames": detail["alternate"], "outputFormat": "application/json",
                                             "count": "10000"})
    assert r.status_code == 200, r.text
    return {int(f["id"].rpartition(".")[2]): f for f in r.json()["features"]}


def history(client, detail: dict) -> list[dict]:
    r = client.get(f"/api/v2/resources/{detail['pk']}/versions", params={"page_size": 100})
    assert r.status_code == 200, r.text
    return r.json()["versions"]


def snapshot(client, detail: dict) -> tuple:
    return wfs_features(client, detail), history(client, detail)


def fid_of(response) -> int:
    """The new feature's id, from the Location of a response (or of headers)."""
    location = getattr(response, "headers", response)["location"]
    match = re.fullmatch(r".*/ogcapi/collections/[a-z0-9_]+/items/(\d+)", location)
    assert match, location
    return int(match.group(1))


def rings(geometry: dict) -> list:
    return [[[round(x, 6), round(y, 6)] for x, y, *_ in ring] for polygon in geometry["coordinates"] for ring in polygon]


def ogc_error(response, status: int, *words: str) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) >= {"code", "description"} and body["code"] and body["description"], body
    for word in words:
        assert word in body["description"], body
    return body["description"]


def latest_change(client, detail: dict) -> dict:
    """The newest version of the dataset with its feature changes."""
    newest = history(client, detail)[0]
    r = client.get(f"/api/v2/resources/{detail['pk']}/versions/{newest['number']}")
    assert r.status_code == 200, r.text
    return r.json()["version"]


# --- the whole story ---------------------------------------------------------------------------


def test_create_replace_update_delete(world):
    detail = countries(world)
    srv = world["srv"]
    with srv.client() as anon, login(srv, world["member"]) as member:
        before = wfs_features(anon, detail)
        versions_before = len(history(anon, detail))

        # create
        r = member.post(items(detail), json=FEATURE, headers={"Content-Type": "application/geo+json"})
        assert r.status_code == 201, r.text
        fid = fid_of(r)
        created_tag = r.headers["etag"]
        assert re.fullmatch(r'"[0-9a-f]{32}"', created_tag)
        now = wfs_features(anon, detail)
        assert set(now) - set(before) == {fid} and len(now) == len(before) + 1
        assert now[fid]["properties"]["name"] == "Atlantis" and now[fid]["properties"]["pop_est"] == 1000
        assert rings(now[fid]["geometry"]) == rings(ATLANTIS)
        made = latest_change(anon, detail)
        assert made["via"] == "ogcapi" and made["kind"] == "data" and made["user"]["username"] == world["member"]["username"]
        assert made["summary"]["inserted"] == 1 and len(history(anon, detail)) == versions_before + 1

        # replace: every property (those left out emptied) and the geometry
        r = member.put(f"{items(detail)}/{fid}", json={"type": "Feature", "geometry": MOVED,
                                                       "properties": {"name": "Atlantis II", "pop_est": 5}},
                       headers={"If-Match": created_tag})
        assert r.status_code == 204, r.text
        replaced_tag = r.headers["etag"]
        assert replaced_tag != created_tag
        now = wfs_features(anon, detail)
        props = now[fid]["properties"]
        assert props["name"] == "Atlantis II" and props["pop_est"] == 5
        assert props["continent"] is None and props["iso_a3"] is None and props["gdp_md_est"] is None
        assert rings(now[fid]["geometry"]) == rings(MOVED)
        made = latest_change(anon, detail)
        assert made["via"] == "ogcapi" and made["summary"]["updated"] == 1
        assert [u["id"] for u in made["changes"]["features"]["updated"]] == [fid]

        # update: only what the patch names
        r = member.patch(f"{items(detail)}/{fid}", json={"properties": {"continent": "Oceania"}},
                         headers={"Content-Type": "application/merge-patch+json", "If-Match": replaced_tag})
        assert r.status_code == 204, r.text
        patched_tag = r.headers["etag"]
        assert patched_tag not in (created_tag, replaced_tag)
        now = wfs_features(anon, detail)
        assert now[fid]["properties"]["continent"] == "Oceania" and now[fid]["properties"]["name"] == "Atlantis II"
        assert rings(now[fid]["geometry"]) == rings(MOVED)
        update = latest_change(anon, detail)["changes"]["features"]["updated"][0]
        assert update["before"]["properties"] == {"continent": None}
        assert update["after"]["properties"] == {"continent": "Oceania"}

        # a patch that moves it
        r = member.patch(f"{items(detail)}/{fid}", json={"geometry": ATLANTIS})
        assert r.status_code == 204, r.text
        assert rings(wfs_features(anon, detail)[fid]["geometry"]) == rings(ATLANTIS)

        # delete
        r = member.delete(f"{items(detail)}/{fid}", headers={"If-Match": r.headers["etag"]})
        assert r.status_code == 204, r.text
        assert not r.content
        assert wfs_features(anon, detail) == before
        made = latest_change(anon, detail)
        assert made["via"] == "ogcapi" and made["summary"]["deleted"] == 1
        assert [f["id"] for f in made["changes"]["features"]["deleted"]] == [fid]
        assert len(history(anon, detail)) == versions_before + 5

        # the feature is gone: every edit of it is a 404
        for method in ("PUT", "PATCH", "DELETE"):
            r = member.request(method, f"{items(detail)}/{fid}", json=FEATURE)
            ogc_error(r, 404, str(fid))
        assert len(history(anon, detail)) == versions_before + 5


def test_existing_features_of_the_upload_can_be_edited(world):
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner:
        some = min(wfs_features(owner, detail))
        name = wfs_features(owner, detail)[some]["properties"]["name"]
        r = owner.patch(f"{items(detail)}/{some}", json={"properties": {"name": name + " (renamed)"}})
        assert r.status_code == 204, r.text
        assert wfs_features(owner, detail)[some]["properties"]["name"] == name + " (renamed)"
        r = owner.patch(f"{items(detail)}/{some}", json={"properties": {"name": name}})
        assert r.status_code == 204, r.text


def test_a_feature_collection_is_added_all_or_nothing(world):
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner:
        before = snapshot(owner, detail)
        second = {**FEATURE, "properties": {"name": "Lemuria"}}
        r = owner.post(items(detail), json={"type": "FeatureCollection", "features": [FEATURE, second]})
        assert r.status_code == 201, r.text
        ids = r.json()["ids"]
        now = wfs_features(owner, detail)
        assert [now[i]["properties"]["name"] for i in ids] == ["Atlantis", "Lemuria"]
        assert [link["href"].rpartition("/")[2] for link in r.json()["links"]] == [str(i) for i in ids]
        for i in ids:
            assert owner.delete(f"{items(detail)}/{i}").status_code == 204
        after_cleanup = snapshot(owner, detail)
        bad = {**FEATURE, "properties": {"colour": "blue"}}
        r = owner.post(items(detail), json={"type": "FeatureCollection", "features": [FEATURE, bad]})
        ogc_error(r, 400, "colour")
        assert snapshot(owner, detail) == after_cleanup
        assert after_cleanup[0] == before[0]


# --- geometries in other CRSs (Part 2's Content-Crs) ------------------------------------------------


def test_content_crs(world):
    detail = world["countries"]
    point_layer = world.setdefault("cities", cities(world))
    with login(world["srv"], world["owner"]) as owner:
        # Web Mercator metres, east first
        x, y = 1113194.9079327357, 5621521.486192066  # 10 E, 45 N
        r = owner.post(items(point_layer), json={"type": "Feature", "geometry": {"type": "Point", "coordinates": [x, y]},
                                                 "properties": {"name": "Mercator"}},
                       headers={"Content-Crs": "<http://www.opengis.net/def/crs/EPSG/0/3857>"})
        assert r.status_code == 201, r.text
        got = wfs_features(owner, point_layer)[fid_of(r)]["geometry"]["coordinates"]
        assert got == pytest.approx([10, 45], abs=1e-6)
        # EPSG:4326 by its URI: latitude first
        r = owner.post(items(point_layer), json={"type": "Feature", "geometry": {"type": "Point", "coordinates": [45, 10]},
                                                 "properties": {"name": "Latitude first"}},
                       headers={"Content-Crs": "<http://www.opengis.net/def/crs/EPSG/0/4326>"})
        assert r.status_code == 201, r.text
        assert wfs_features(owner, point_layer)[fid_of(r)]["geometry"]["coordinates"] == pytest.approx([10, 45])
        # a safe CURIE
        r = owner.post(items(point_layer), json={"type": "Feature", "geometry": {"type": "Point", "coordinates": [x, y]},
                                                 "properties": {"name": "Mercator CURIE"}},
                       headers={"Content-Crs": "<[EPSG:3857]>"})
        assert r.status_code == 201, r.text
        assert wfs_features(owner, point_layer)[fid_of(r)]["geometry"]["coordinates"] == pytest.approx([10, 45], abs=1e-6)
        # CRS84, said aloud: longitude first
        r = owner.patch(f"{items(point_layer)}/{fid_of(r)}", json={"geometry": {"type": "Point", "coordinates": [11, 46]}},
                        headers={"Content-Crs": "<http://www.opengis.net/def/crs/OGC/1.3/CRS84>"})
        assert r.status_code == 204, r.text
        before = snapshot(owner, detail)
        for header in ("<http://www.opengis.net/def/crs/EPSG/0/99999999>", "<somewhere>", "EPSG:4326"):
            r = owner.post(items(detail), json=FEATURE, headers={"Content-Crs": header})
            ogc_error(r, 400, "Content-Crs")
        assert snapshot(owner, detail) == before


def cities(w: dict) -> dict:
    with login(w["srv"], w["owner"]) as c:
        detail = upload_shapefile(c, CITIES)
        share(w, c, detail)
    return detail


# --- entity tags and If-Match ----------------------------------------------------------------


def test_the_feature_read_carries_the_tag_edits_expect(world):
    """The single-feature GET sends the tag the edits answer and check; an edit through another
    route (the web UI's JSON edits) changes it too, and an If-Match from before is then stale."""
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner:
        r = owner.post(items(detail), json=FEATURE)
        fid, tag = fid_of(r), r.headers["etag"]
        item = f"{items(detail)}/{fid}"
        read = owner.get(item)
        assert read.status_code == 200 and read.headers["etag"] == tag
        other = min(wfs_features(owner, detail))
        other_tag = owner.get(f"{items(detail)}/{other}").headers["etag"]
        r = owner.patch(item, json={"properties": {"name": "Read, then changed"}}, headers={"If-Match": read.headers["etag"]})
        assert r.status_code == 204, r.text
        assert owner.get(item).headers["etag"] == r.headers["etag"] != tag
        assert owner.get(item, params={"crs": "http://www.opengis.net/def/crs/EPSG/0/3857"}).headers["etag"] == r.headers["etag"]
        assert owner.get(f"{items(detail)}/{other}").headers["etag"] == other_tag
        before_ui = r.headers["etag"]
        r = owner.post(f"/api/v2/datasets/{detail['pk']}/edits", json={"update": [{"id": fid, "properties": {"name": "In the web UI"}}]})
        assert r.status_code == 200, r.text
        assert owner.get(item).headers["etag"] != before_ui
        ogc_error(owner.delete(item, headers={"If-Match": before_ui}), 412)
        assert owner.delete(item, headers={"If-Match": owner.get(item).headers["etag"]}).status_code == 204
        ogc_error(owner.get(item), 404)



def test_tags_follow_each_feature(world):
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner:
        a = owner.post(items(detail), json=FEATURE)
        b = owner.post(items(detail), json={**FEATURE, "properties": {"name": "B"}})
        fa, fb = fid_of(a), fid_of(b)
        assert a.headers["etag"] != b.headers["etag"]
        # a change of A leaves B's tag as it was
        r = owner.patch(f"{items(detail)}/{fa}", json={"properties": {"name": "A2"}}, headers={"If-Match": a.headers["etag"]})
        assert r.status_code == 204
        r = owner.patch(f"{items(detail)}/{fb}", json={"properties": {"name": "B2"}}, headers={"If-Match": b.headers["etag"]})
        assert r.status_code == 204, r.text
        b_tag = r.headers["etag"]
        # a patch that changes nothing keeps the tag
        r = owner.patch(f"{items(detail)}/{fb}", json={"properties": {"name": "B2"}}, headers={"If-Match": b_tag})
        assert r.status_code == 204 and r.headers["etag"] == b_tag
        # If-Match: *, a list holding the current tag, and a weak tag (never matches)
        r = owner.patch(f"{items(detail)}/{fb}", json={"properties": {"name": "B3"}}, headers={"If-Match": "*"})
        assert r.status_code == 204, r.text
        b_tag = r.headers["etag"]
        r = owner.patch(f"{items(detail)}/{fb}", json={"properties": {"name": "B4"}},
                        headers={"If-Match": f'"0123", {b_tag}'})
        assert r.status_code == 204, r.text
        b_tag = r.headers["etag"]
        r = owner.patch(f"{items(detail)}/{fb}", json={"properties": {"name": "B5"}}, headers={"If-Match": f"W/{b_tag}"})
        assert ogc_error(r, 412)
        r = owner.patch(f"{items(detail)}/{fb}", json={"properties": {"name": "B5"}}, headers={"If-Match": "nonsense"})
        ogc_error(r, 400, "If-Match")
        assert wfs_features(owner, detail)[fb]["properties"]["name"] == "B4"
        # If-Match: * on a feature that is not there
        assert owner.delete(f"{items(detail)}/{fb}", headers={"If-Match": b_tag}).status_code == 204
        ogc_error(owner.delete(f"{items(detail)}/{fb}", headers={"If-Match": "*"}), 404)
        assert owner.delete(f"{items(detail)}/{fa}").status_code == 204


def test_a_stale_tag_changes_nothing(world):
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner, login(world["srv"], world["member"]) as member:
        r = owner.post(items(detail), json=FEATURE)
        fid, old = fid_of(r), r.headers["etag"]
        r = member.patch(f"{items(detail)}/{fid}", json={"properties": {"name": "Changed by the member"}})
        assert r.status_code == 204
        current = r.headers["etag"]
        before = snapshot(owner, detail)
        for method, body in (("PUT", FEATURE), ("PATCH", {"properties": {"name": "Stale"}}), ("DELETE", None)):
            r = owner.request(method, f"{items(detail)}/{fid}", json=body, headers={"If-Match": old})
            ogc_error(r, 412, str(fid))
            assert r.json()["code"] == "PreconditionFailed"
            assert r.headers["etag"] == current  # what the feature's tag is now
        assert snapshot(owner, detail) == before
        assert wfs_features(owner, detail)[fid]["properties"]["name"] == "Changed by the member"
        assert owner.delete(f"{items(detail)}/{fid}", headers={"If-Match": current}).status_code == 204


def test_two_puts_with_the_same_tag_one_after_the_other(world):
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner, login(world["srv"], world["member"]) as member:
        r = owner.post(items(detail), json=FEATURE)
        fid, tag = fid_of(r), r.headers["etag"]
        first = owner.put(f"{items(detail)}/{fid}", json={**FEATURE, "properties": {"name": "First"}},
                          headers={"If-Match": tag})
        assert first.status_code == 204, first.text
        before = snapshot(owner, detail)
        second = member.put(f"{items(detail)}/{fid}", json={**FEATURE, "properties": {"name": "Second"}},
                            headers={"If-Match": tag})
        ogc_error(second, 412)
        assert snapshot(owner, detail) == before
        assert wfs_features(owner, detail)[fid]["properties"]["name"] == "First"


def test_two_puts_with_the_same_tag_at_once(world):
    """The tag is checked under the GeoPackage's write lock: of two clients racing with the same
    tag, exactly one wins, each time."""
    detail = world["countries"]
    srv = world["srv"]
    with login(srv, world["owner"]) as owner, login(srv, world["member"]) as member:
        r = owner.post(items(detail), json=FEATURE)
        fid, tag = fid_of(r), r.headers["etag"]
        for round_ in range(4):
            barrier = threading.Barrier(2)
            answers: dict[str, int] = {}

            def put(client, name):
                barrier.wait()
                answers[name] = client.put(f"{items(detail)}/{fid}",
                                           json={**FEATURE, "properties": {"name": f"{name} {round_}"}},
                                           headers={"If-Match": tag}).status_code

            threads = [threading.Thread(target=put, args=(c, n)) for c, n in ((owner, "owner"), (member, "member"))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert sorted(answers.values()) == [204, 412], answers
            winner = next(n for n, s in answers.items() if s == 204)
            assert wfs_features(owner, detail)[fid]["properties"]["name"] == f"{winner} {round_}"
            tag = owner.patch(f"{items(detail)}/{fid}", json={}).headers["etag"]
        assert owner.delete(f"{items(detail)}/{fid}").status_code == 204


# --- who may edit ------------------------------------------------------------------------------


def test_who_may_edit(world):
    detail = world["countries"]
    srv = world["srv"]
    staff = make_user(world["admin"], is_staff=True)  # staff hold nothing on resources
    with srv.client() as anon, login(srv, world["other"]) as other, login(srv, world["owner"]) as owner, \
            login(srv, staff) as staff_client:
        fid = fid_of(owner.post(items(detail), json=FEATURE))
        before = snapshot(anon, detail)
        tries = (("POST", items(detail), FEATURE), ("PUT", f"{items(detail)}/{fid}", FEATURE),
                 ("PATCH", f"{items(detail)}/{fid}", {"properties": {"name": "x"}}),
                 ("DELETE", f"{items(detail)}/{fid}", None))
        for method, path, body in tries:
            r = anon.request(method, path, json=body)
            ogc_error(r, 401)
            assert r.headers["www-authenticate"].startswith("Basic")
            ogc_error(other.request(method, path, json=body), 403, "may not change")
            ogc_error(staff_client.request(method, path, json=body), 403, "may not change")
        assert snapshot(anon, detail) == before
        for who in ("member", "owner"):
            with login(srv, world[who]) as c:
                r = c.patch(f"{items(detail)}/{fid}", json={"properties": {"name": who}})
                assert r.status_code == 204, (who, r.text)
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:  # a superuser
            assert admin.patch(f"{items(detail)}/{fid}", json={"properties": {"name": "admin"}}).status_code == 204
            assert admin.delete(f"{items(detail)}/{fid}").status_code == 204
        assert [v["user"]["username"] for v in history(anon, detail)[:4]] == [
            "admin", "admin", world["owner"]["username"], world["member"]["username"]]


def test_a_private_collection_is_unknown_to_those_who_cannot_see_it(world):
    detail = world.setdefault("private", countries(world, PRIVATE))
    srv = world["srv"]
    with srv.client() as anon, login(srv, world["other"]) as other:
        ogc_error(anon.post(items(detail), json=FEATURE), 401)
        ogc_error(other.post(items(detail), json=FEATURE), 404)
        ogc_error(other.delete(f"{items(detail)}/1"), 404)
    with login(srv, world["member"]) as member:  # the group may edit it
        r = member.post(items(detail), json=FEATURE)
        assert r.status_code == 201, r.text
        assert member.delete(r.headers["location"].partition(str(srv.port))[2]).status_code == 204


def test_viewers_who_may_not_edit_are_refused(world):
    """A user who may view and download the data but not change it: 403."""
    detail = world.setdefault("private", countries(world, PRIVATE))
    viewer = make_user(world["admin"])
    with login(world["srv"], world["owner"]) as owner:
        r = owner.put(f"/api/v2/resources/{detail['pk']}/permissions",
                      json={"users": [{"id": viewer["pk"], "permissions": "download"}],
                            "organizations": [{"id": world["group"]["group"]["pk"], "permissions": "edit"}]})
        assert poll(owner, r.json()["status_url"])["status"] == "finished"
        before = snapshot(owner, detail)
    with login(world["srv"], viewer) as c:
        assert len(wfs_features(c, detail)) == len(before[0])
        ogc_error(c.post(items(detail), json=FEATURE), 403)
        ogc_error(c.delete(f"{items(detail)}/{min(before[0])}"), 403)
    with login(world["srv"], world["owner"]) as owner:
        assert snapshot(owner, detail) == before


def test_unknown_collections_and_features(world):
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner:
        ogc_error(owner.post("/ogcapi/collections/no_such_layer/items", json=FEATURE), 404)
        ogc_error(owner.post("/ogcapi/collections/geonode:x/items", json=FEATURE), 404)
        for fid in ("abc", "0", "-1", "1.5", "99999999", "12345678901234567890"):
            ogc_error(owner.patch(f"{items(detail)}/{fid}", json={"properties": {}}), 404)
        raster = world.setdefault("raster", upload_tif(world["admin"], "RGB.byte.tif"))
    with world["srv"].client(auth=("admin", ADMIN_PASSWORD)) as admin:
        ogc_error(admin.post(items(raster), json=FEATURE), 404)


# --- bad bodies --------------------------------------------------------------------------------


def points_layer(w: dict) -> dict:
    """A GeoPackage of points with text, integer, real and date fields, uploaded by the owner."""
    return fresh(w)  # tests/ogc/wfst_helpers.py: fields name (text), n (integer), v (real), day (date)


def test_bad_bodies_change_nothing(world):
    detail = world["countries"]
    points = world.setdefault("points", points_layer(world))
    with login(world["srv"], world["owner"]) as owner:
        fid = min(wfs_features(owner, detail))
        point_fid = min(wfs_features(owner, points))
        before = snapshot(owner, detail), snapshot(owner, points)
        item = f"{items(detail)}/{fid}"
        point_item = f"{items(points)}/{point_fid}"
        cases = [
            ("not JSON", "POST", items(detail), {"content": b"{nope", "headers": {"Content-Type": "application/json"}},
             400, "JSON"),
            ("empty", "POST", items(detail), {"content": b"", "headers": {"Content-Type": "application/json"}},
             400, "empty"),
            ("not a feature", "POST", items(detail), {"json": [1, 2]}, 400, "Feature"),
            ("a geometry, not a feature", "POST", items(detail), {"json": ATLANTIS}, 400, "Feature"),
            ("a feature of nothing, replacing", "PUT", item, {"json": {"type": "Feature"}}, 400, "geometry"),
            ("a feature without properties", "POST", items(detail),
             {"json": {"type": "Feature", "geometry": FEATURE["geometry"]}}, 400, "properties"),
            ("a point on a polygon layer", "POST", items(detail),
             {"json": {**FEATURE, "geometry": {"type": "Point", "coordinates": [1, 2]}}}, 400, "Point"),
            ("a point on a polygon layer, replaced", "PUT", item,
             {"json": {**FEATURE, "geometry": {"type": "Point", "coordinates": [1, 2]}}}, 400, "Point"),
            ("unknown property", "POST", items(detail),
             {"json": {**FEATURE, "properties": {"colour": "blue"}}}, 400, "colour"),
            ("unknown property, patched", "PATCH", item, {"json": {"properties": {"colour": "blue"}}}, 400, "colour"),
            ("text in an integer field", "POST", items(points),
             {"json": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 2]},
                       "properties": {"n": "ten"}}}, 400, "field n"),
            ("text in an integer field, patched", "PATCH", point_item, {"json": {"properties": {"n": "ten"}}},
             400, "field n"),
            ("text in an integer field of the countries", "PATCH", item,
             {"json": {"properties": {"gdp_md_est": "lots"}}}, 400, "field gdp_md_est"),
            ("text in a real field", "PATCH", point_item, {"json": {"properties": {"v": "x"}}}, 400, "field v"),
            ("not a date", "PATCH", point_item, {"json": {"properties": {"day": "yesterday"}}}, 400, "field day"),
            ("an object as a value", "PATCH", point_item, {"json": {"properties": {"name": {"a": 1}}}}, 400, "name"),
            ("properties not an object", "PATCH", item, {"json": {"properties": [1]}}, 400, "properties"),
            ("properties null in a patch", "PATCH", item, {"json": {"properties": None}}, 400, "properties"),
            ("not a patch", "PATCH", item, {"json": [1]}, 400, "patch"),
            ("another type in a patch", "PATCH", item, {"json": {"type": "FeatureCollection"}}, 400, "type"),
            ("geometry of no type", "PATCH", item, {"json": {"geometry": {"type": "Circle", "coordinates": [1]}}},
             400, "geometry"),
            ("broken coordinates", "PATCH", item,
             {"json": {"geometry": {"type": "MultiPolygon", "coordinates": [[["a"]]]}}}, 400, "geometry"),
            ("invalid polygon", "PATCH", item,
             {"json": {"geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]}}},
             400, "invalid"),
            ("outside the world", "PATCH", item,
             {"json": {"geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 95], [0, 0]]]}}},
             400, "outside"),
            ("an empty collection", "POST", items(detail), {"json": {"type": "FeatureCollection", "features": []}},
             400, "features"),
            ("XML", "POST", items(detail), {"content": b"<a/>", "headers": {"Content-Type": "application/xml"}},
             415, "application/geo+json"),
            ("too deep", "POST", items(detail), {"content": b"[" * 100_000 + b"]" * 100_000,
                                                 "headers": {"Content-Type": "application/json"}}, 400, "deep"),
            ("huge", "POST", items(detail), {"content": b'{"type": "Feature", "properties": {"name": "'
                                             + b"x" * (11 * 1024 * 1024) + b'"}}',
                                             "headers": {"Content-Type": "application/geo+json"}}, 413, ""),
        ]
        for name, method, path, kw, status, word in cases:
            r = owner.request(method, path, **kw)
            assert r.headers["content-type"].startswith("application/json"), (name, r.headers)
            try:
                ogc_error(r, status, word)
            except AssertionError as exc:
                raise AssertionError(f"{name}: {exc}") from None
        assert (snapshot(owner, detail), snapshot(owner, points)) == before


def test_a_geometry_may_be_removed_where_the_layer_allows(world):
    """Uploaded layers take features without a geometry (a layer whose geometry is required
    refuses: tests/ogcapi/test_features_edit_gpkg.py)."""
    detail = world["countries"]
    with login(world["srv"], world["owner"]) as owner:
        fid = fid_of(owner.post(items(detail), json=FEATURE))
        r = owner.patch(f"{items(detail)}/{fid}", json={"geometry": None})
        assert r.status_code == 204, r.text
        assert wfs_features(owner, detail)[fid]["geometry"] is None
        assert owner.delete(f"{items(detail)}/{fid}").status_code == 204
