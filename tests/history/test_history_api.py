"""The history API through HTTP: the list (paged, newest first), one version with its changes, the
difference between two versions, reverts of fields and of data, a dataset's features as at a
version; who may use each; bad input answered in the error envelope, changing nothing."""

from __future__ import annotations

import pytest

from tests.conftest import assert_envelope

VERSION_KEYS = {"uuid", "number", "created", "user", "via", "kind", "summary", "reverts_to", "reverts_to_number"}


def patch(world, pk: int, who: str = "owner", **fields) -> None:
    r = world.client(who).patch(f"/api/v2/resources/{pk}", json=fields)
    assert r.status_code == 200, r.text


def resource(world, pk: int) -> dict:
    return world.client("admin").get(f"/api/v2/resources/{pk}").json()["resource"]


@pytest.fixture(scope="module")
def three(world):
    """A map with three metadata versions: title A -> B, abstract, title B -> C."""
    pk = world.new_map(title="Title A", abstract="")
    patch(world, pk, title="Title B")
    patch(world, pk, abstract="Wells and springs")
    patch(world, pk, title="Title C", keywords=["wells"])
    return pk


def test_the_list_is_paged_newest_first(world, three):
    admin = world.client("admin")
    r = admin.get(f"/api/v2/resources/{three}/versions", params={"page_size": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"links", "total", "page", "page_size", "versions"}
    assert (body["total"], body["page"], body["page_size"]) == (3, 1, 2)
    assert [v["number"] for v in body["versions"]] == [3, 2]
    assert body["links"]["next"].endswith("page=2&page_size=2") and body["links"]["previous"] is None
    v = body["versions"][0]
    assert set(v) == VERSION_KEYS
    assert v["kind"] == "metadata" and v["via"] == "api" and v["reverts_to"] is None
    assert v["user"] == {"pk": world.users["owner"]["pk"], "username": world.users["owner"]["username"]}
    assert v["summary"] == {"fields": ["keywords", "title"]}
    assert len({x["uuid"] for x in body["versions"]}) == 2
    page2 = admin.get(body["links"]["next"]).json()
    assert [v["number"] for v in page2["versions"]] == [1] and page2["links"]["next"] is None
    # past the end: the API's "Invalid page."
    assert_envelope(admin.get(f"/api/v2/resources/{three}/versions", params={"page": 3, "page_size": 2}),
                    404, "not_found", "Invalid page.")


def test_one_version_and_the_difference_between_two(world, three):
    admin = world.client("admin")
    v = admin.get(f"/api/v2/resources/{three}/versions/1").json()["version"]
    assert set(v) == VERSION_KEYS | {"changes"}
    assert v["changes"] == {"fields": {"title": {"before": "Title A", "after": "Title B"}}, "features": None}

    d = admin.get(f"/api/v2/resources/{three}/versions/1/diff", params={"to": 3}).json()["diff"]
    assert (d["from"], d["to"], d["versions"], d["features"], d["data_replaced"]) == (1, 3, [2, 3], None, False)
    assert d["fields"] == {"title": {"before": "Title B", "after": "Title C"},
                           "abstract": {"before": "", "after": "Wells and springs"},
                           "keywords": {"before": [], "after": ["wells"]}}
    back = admin.get(f"/api/v2/resources/{three}/versions/3/diff", params={"to": 1}).json()["diff"]
    assert back["fields"]["title"] == {"before": "Title C", "after": "Title B"} and back["versions"] == [2, 3]
    # without "to": to the latest; 0 is the resource before its first version
    latest = admin.get(f"/api/v2/resources/{three}/versions/0/diff").json()["diff"]
    assert latest["to"] == 3 and latest["fields"]["title"] == {"before": "Title A", "after": "Title C"}
    same = admin.get(f"/api/v2/resources/{three}/versions/2/diff", params={"to": 2}).json()["diff"]
    assert same["fields"] == {} and same["versions"] == []


def test_revert_of_fields_is_a_new_version(world):
    pk = world.new_map(title="Before", abstract="old words")
    patch(world, pk, title="After", abstract="new words")  # 1
    patch(world, pk, title="Later")  # 2
    owner = world.client("owner")
    r = owner.post(f"/api/v2/resources/{pk}/versions/1/revert")
    assert r.status_code == 201, r.text
    made = r.json()["version"]
    one = world.client("admin").get(f"/api/v2/resources/{pk}/versions/1").json()["version"]
    assert (made["number"], made["kind"], made["via"], made["reverts_to"], made["reverts_to_number"]) == (
        3, "revert", "api", one["uuid"], 1)
    assert made["summary"] == {"fields": ["title"], "reverts_to": 1}
    assert resource(world, pk)["title"] == "After"
    detail = world.client("admin").get(f"/api/v2/resources/{pk}/versions/3").json()["version"]
    assert detail["changes"]["fields"] == {"title": {"before": "Later", "after": "After"}}
    # again: nothing to revert, nothing recorded
    assert_envelope(owner.post(f"/api/v2/resources/{pk}/versions/1/revert"), 400, "invalid")
    assert world.count(pk) == 3
    # to 0: as the resource was made
    r = owner.post(f"/api/v2/resources/{pk}/versions/0/revert")
    assert r.status_code == 201, r.text
    assert r.json()["version"]["reverts_to"] is None and r.json()["version"]["reverts_to_number"] == 0
    assert (resource(world, pk)["title"], resource(world, pk)["abstract"]) == ("Before", "old words")
    # a revert is reverted like any version
    assert owner.post(f"/api/v2/resources/{pk}/versions/3/revert").status_code == 201
    assert resource(world, pk)["title"] == "After"


def test_data_versions_their_features_and_their_revert(world):
    pk = world.new_points(n=6)
    owner, admin = world.client("owner"), world.client("admin")
    r = owner.post(f"/api/v2/datasets/{pk}/edits", json={
        "insert": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [5.5, 45.25]},
                    "properties": {"label": "new", "n": 99}}],
        "update": [{"id": 1, "properties": {"label": "first"}}],
        "delete": [2]})
    assert r.status_code == 200, r.text
    new = r.json()["inserted"][0]
    patch(world, pk, title="Points, checked")  # 2: metadata
    r = owner.post(f"/api/v2/datasets/{pk}/edits", json={"update": [{"id": 1, "properties": {"label": "second"}}],
                                                           "delete": [3]})
    assert r.status_code == 200, r.text  # 3: data

    kinds = [(v["number"], v["kind"]) for v in world.versions(pk)["versions"]]
    assert kinds == [(3, "data"), (2, "metadata"), (1, "data")]
    v1 = admin.get(f"/api/v2/resources/{pk}/versions/1").json()["version"]
    assert v1["changes"]["fields"] == {}
    features = v1["changes"]["features"]
    assert [f["id"] for f in features["inserted"]] == [new]
    assert features["inserted"][0]["properties"]["label"] == "new"
    assert features["inserted"][0]["geometry"] == {"type": "Point", "coordinates": [5.5, 45.25]}
    assert [f["id"] for f in features["deleted"]] == [2] and features["deleted"][0]["properties"]["label"] == "p1"
    assert features["updated"] == [{"id": 1, "before": {"type": "Feature", "id": 1, "properties": {"label": "p0"}},
                                    "after": {"type": "Feature", "id": 1, "properties": {"label": "first"}}}]

    d = admin.get(f"/api/v2/resources/{pk}/versions/0/diff").json()["diff"]
    assert d["versions"] == [1, 2, 3] and set(d["fields"]) == {"title"}
    assert {f["id"] for f in d["features"]["deleted"]} == {2, 3}
    assert d["features"]["updated"][0]["before"]["properties"] == {"label": "p0"}
    assert d["features"]["updated"][0]["after"]["properties"] == {"label": "second"}
    back = admin.get(f"/api/v2/resources/{pk}/versions/3/diff", params={"to": 1}).json()["diff"]
    assert [f["id"] for f in back["features"]["inserted"]] == [3]
    assert back["features"]["updated"][0]["after"]["properties"] == {"label": "first"}

    def at(number: int) -> dict:
        r = admin.get(f"/api/v2/datasets/{pk}/versions/{number}/features")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/geo+json")
        return {f["id"]: f["properties"]["label"] for f in r.json()["features"]}

    assert at(0) == {i: f"p{i - 1}" for i in range(1, 7)}
    assert at(1) == at(2) == {1: "first", 3: "p2", 4: "p3", 5: "p4", 6: "p5", new: "new"}
    assert 3 not in at(3) and at(3)[1] == "second"

    # a revert to a metadata version puts back the fields by default, the data with part=data
    assert_envelope(owner.post(f"/api/v2/resources/{pk}/versions/2/revert"), 400, "invalid")
    r = owner.post(f"/api/v2/resources/{pk}/versions/2/revert", params={"part": "data"})
    assert r.status_code == 201, r.text
    made = r.json()["version"]
    assert (made["number"], made["kind"], made["reverts_to_number"]) == (4, "revert", 2)
    assert set(made) == VERSION_KEYS
    assert at(4) == at(2)
    # to a data version: the data (as they were at 1 and 2 now: nothing to revert)
    assert_envelope(owner.post(f"/api/v2/resources/{pk}/versions/1/revert"), 400, "invalid")
    r = owner.post(f"/api/v2/resources/{pk}/versions/3/revert")
    assert r.status_code == 201 and r.json()["version"]["kind"] == "revert", r.text
    assert at(5) == at(3)
    assert_envelope(owner.post(f"/api/v2/resources/{pk}/versions/1/revert", params={"part": "sideways"}), 400,
                    "invalid")
    # to 0 (as uploaded): both the fields and the data changed since, so say which
    r = owner.post(f"/api/v2/resources/{pk}/versions/0/revert")
    assert_envelope(r, 400, "invalid")
    assert "part=data" in r.json()["errors"][0]
    r = owner.post(f"/api/v2/resources/{pk}/versions/0/revert", params={"part": "data"})
    assert r.status_code == 201, r.text
    made = r.json()["version"]
    assert (made["kind"], made["reverts_to"], made["reverts_to_number"]) == ("revert", None, 0)
    assert at(made["number"]) == at(0)
    assert world.latest(pk)["reverts_to_number"] == 0
    r = owner.post(f"/api/v2/resources/{pk}/versions/0/revert", params={"part": "metadata"})
    assert r.status_code == 201 and r.json()["version"]["summary"]["fields"] == ["title"], r.text
    assert_envelope(owner.post(f"/api/v2/resources/{world.new_map()}/versions/0/revert", params={"part": "data"}),
                    404, "not_found")  # a map has no version 0 (it has no version at all)


def test_bad_input_is_answered_in_the_envelope_and_changes_nothing(world, three):
    admin, base = world.client("admin"), f"/api/v2/resources/{three}/versions"
    title, count = resource(world, three)["title"], world.count(three)
    assert_envelope(admin.get(base, params={"page": -1}), 400, "invalid", "Invalid page: -1 is less than 1.")
    assert_envelope(admin.get(base, params={"page": "x"}), 400, "invalid")
    assert_envelope(admin.get(base, params={"page_size": 0}), 400, "invalid")
    huge = admin.get(base, params={"page_size": 10**30})
    assert huge.status_code == 200 and huge.json()["page_size"] == 10_000 and huge.json()["total"] == count
    assert_envelope(admin.get(base, params={"page": 10**12}), 404, "not_found")
    for bad in ("abc", "-1", "1.5", "9" * 30):
        assert_envelope(admin.get(f"{base}/{bad}"), 400, "invalid")
        assert_envelope(admin.get(f"{base}/{bad}/diff"), 400, "invalid")
        assert_envelope(admin.post(f"{base}/{bad}/revert"), 400, "invalid")
        assert_envelope(admin.get(f"{base}/1/diff", params={"to": bad}), 400, "invalid")
    for unknown in ("999", "0"):
        assert_envelope(admin.get(f"{base}/{unknown}"), 404, "not_found")
    assert_envelope(admin.get(f"{base}/999/diff"), 404, "not_found")
    assert_envelope(admin.get(f"{base}/1/diff", params={"to": 999}), 404, "not_found")
    assert_envelope(admin.post(f"{base}/999/revert"), 404, "not_found")
    for pk in ("abc", "999999"):
        assert_envelope(admin.get(f"/api/v2/resources/{pk}/versions"), 404, "not_found")
        assert_envelope(admin.post(f"/api/v2/resources/{pk}/versions/1/revert"), 404, "not_found")
    assert_envelope(admin.get(f"/api/v2/datasets/{three}/versions/0/features"), 404, "not_found")  # a map
    assert_envelope(admin.get("/api/v2/tombstones", params={"page": 0}), 400, "invalid")
    assert resource(world, three)["title"] == title and world.count(three) == count


WHO = ("anonymous", "other", "member", "owner", "staff", "superuser")


def test_who_may_read_and_revert_a_private_resources_history(world):
    pk = world.new_map(title="Private map")
    world.share(pk)  # the owner, and the group at view level
    patch(world, pk, title="Private map, renamed")
    sees = {"anonymous": False, "other": False, "member": True, "owner": True, "staff": False, "superuser": True}
    for who in WHO:
        c = world.client(who)
        for path in (f"/api/v2/resources/{pk}/versions", f"/api/v2/resources/{pk}/versions/1",
                     f"/api/v2/resources/{pk}/versions/1/diff"):
            r = c.get(path)
            if sees[who]:
                assert r.status_code == 200, (who, path, r.text)
            else:
                assert_envelope(r, 404, "not_found")
    # a revert needs the right to change the metadata; those who cannot see it find nothing
    expected = {"anonymous": 404, "other": 404, "member": 403, "owner": 201, "staff": 404, "superuser": 201}
    for who in WHO:
        r = world.client(who).post(f"/api/v2/resources/{pk}/versions/0/revert")
        if expected[who] == 201:
            assert r.status_code == 201, (who, r.text)
            patch(world, pk, title="Private map, renamed")  # and changed again for the next
        else:
            assert_envelope(r, expected[who], {403: "permission_denied", 404: "not_found"}[expected[who]])
    # a public resource: anonymous callers are asked to sign in, others refused
    public = world.new_map(title="Public map")
    patch(world, public, title="Public map, renamed")
    assert world.client("anonymous").get(f"/api/v2/resources/{public}/versions").status_code == 200
    assert_envelope(world.client("anonymous").post(f"/api/v2/resources/{public}/versions/0/revert"), 401,
                    "not_authenticated")
    for who in ("other", "member", "staff"):
        assert_envelope(world.client(who).post(f"/api/v2/resources/{public}/versions/0/revert"), 403,
                        "permission_denied")
    assert resource(world, public)["title"] == "Public map, renamed" and world.count(public) == 1


def test_a_revert_that_would_set_a_flag_needs_that_flags_permission(world):
    pk = world.new_map(title="Flagged")
    patch(world, pk, who="admin", featured=True)  # 1: only administrators feature resources
    patch(world, pk, title="Flagged, renamed")
    r = world.client("owner").post(f"/api/v2/resources/{pk}/versions/0/revert")
    assert_envelope(r, 403, "permission_denied")
    assert "featured" in r.json()["errors"][0]
    assert resource(world, pk)["title"] == "Flagged, renamed" and world.count(pk) == 2
    assert world.client("owner").post(f"/api/v2/resources/{pk}/versions/1/revert").status_code == 201


def test_features_at_a_version_need_the_download_permission(world):
    pk = world.new_points(n=3)
    world.share(pk)  # the group may view, not download
    r = world.client("owner").post(f"/api/v2/datasets/{pk}/edits", json={"delete": [1]})
    assert r.status_code == 200, r.text
    expected = {"anonymous": 404, "other": 404, "member": 403, "owner": 200, "staff": 404, "superuser": 200}
    for who in WHO:
        r = world.client(who).get(f"/api/v2/datasets/{pk}/versions/0/features")
        if expected[who] == 200:
            assert r.status_code == 200 and len(r.json()["features"]) == 3, (who, r.text)
        else:
            assert_envelope(r, expected[who], {403: "permission_denied", 404: "not_found"}[expected[who]])
    # the member sees that version 1 changed the data, not the features it changed
    v = world.client("member").get(f"/api/v2/resources/{pk}/versions/1").json()["version"]
    assert v["kind"] == "data" and v["changes"]["features"] is None
    assert world.client("owner").get(f"/api/v2/resources/{pk}/versions/1").json()["version"]["changes"][
        "features"]["deleted"][0]["id"] == 1
