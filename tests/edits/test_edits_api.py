"""POST /api/v2/datasets/{pk}/edits: features inserted, changed and deleted as one version, for
those the rule book lets change the dataset's data; every bad input refused whole with the 400
envelope, leaving the data and the history as they were."""

from __future__ import annotations

import sqlite3
import threading

import httpx
import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, login, make_user
from tests.edits.conftest import PRIVATE, features, upload_countries, upload_points
from tests.edits.test_reads_after_edit import working_copy


def edits_url(dataset: dict) -> str:
    return f"/api/v2/datasets/{dataset['pk']}/edits"


def versions_of(srv, dataset: dict) -> list[tuple]:
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        return conn.execute("SELECT uuid, number, kind, state, via FROM resource_versions WHERE resource_id = ?"
                            " ORDER BY number", (int(dataset["pk"]),)).fetchall()
    finally:
        conn.close()


def gpkg_versions(srv, dataset: dict) -> list[tuple]:
    conn = sqlite3.connect(working_copy(srv, dataset), timeout=30)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'gpkgext_catalogue_versions'").fetchone():
            return []
        return conn.execute("SELECT uuid, number FROM gpkgext_catalogue_versions ORDER BY number").fetchall()
    finally:
        conn.close()


def test_an_owner_edits_points_and_sees_them_at_once(ed):
    points = ed["points"]
    with login(ed["srv"], ed["owner"]) as c:
        before = features(c, points)
        r = c.post(edits_url(points), json={
            "insert": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [5.5, 45.25]},
                        "properties": {"label": "new", "n": 99, "ok": True, "day": "2024-02-03"}}],
            "update": [{"id": 1, "properties": {"label": "changed", "height": 2}}],
            "delete": [2]})
        assert r.status_code == 200, r.text
        body = r.json()
        version = body["version"]
        assert set(version) == {"uuid", "number", "created", "user", "via", "kind", "summary", "reverts_to",
                                "reverts_to_number"}
        assert (version["kind"], version["via"], version["reverts_to"]) == ("data", "api", None)  # Basic: a script; the web UI (session) is "ui"
        assert version["user"] == {"pk": ed["owner"]["pk"], "username": ed["owner"]["username"]}
        assert version["summary"]["inserted"] == 1 and version["summary"]["updated"] == 1
        assert version["summary"]["deleted"] == 1
        [new] = body["inserted"]
        assert new > max(before)
        after = features(c, points)
        assert new not in before and new in after and 2 not in after
        assert after[new]["properties"]["label"] == "new" and after[new]["properties"]["n"] == 99
        assert after[new]["geometry"]["coordinates"] == [5.5, 45.25]
        assert after[1]["properties"]["label"] == "changed" and after[1]["properties"]["height"] == 2
        assert after[1]["geometry"] == before[1]["geometry"]
        detail = c.get(f"/api/v2/datasets/{points['pk']}").json()["dataset"]
    assert (version["uuid"], version["number"], "data", "done", "api") in versions_of(ed["srv"], points)
    assert (version["uuid"], version["number"]) in gpkg_versions(ed["srv"], points)
    assert detail["perms"]


def _expected(client: httpx.Client, dataset: dict) -> bool:
    """Whether the rule book lets this caller change the dataset's data (its ``perms``)."""
    r = client.get(f"/api/v2/resources/{dataset['pk']}")
    return r.status_code == 200 and "change_dataset_data" in r.json()["resource"]["perms"]


def test_who_may_edit(ed):
    srv, countries = ed["srv"], ed["countries"]
    staff = make_user(ed["admin"], is_staff=True)
    callers = {"anonymous": (srv.client(), 401), "other": (login(srv, ed["other"]), 403),
               "staff": (login(srv, staff), None), "member": (login(srv, ed["member"]), 200),
               "owner": (login(srv, ed["owner"]), 200), "superuser": (srv.client(auth=("admin", ADMIN_PASSWORD)), 200)}
    for name, (client, status) in callers.items():
        with client:
            may = _expected(client, countries)
            if status is None:
                status = 200 if may else 403
            assert may == (status == 200), name
            before = versions_of(srv, countries)
            r = client.post(edits_url(countries), json={"update": [{"id": 10, "properties": {"name": f"by {name}"}}]})
            if status == 200:
                assert r.status_code == 200, (name, r.text)
                assert features(client, countries)[10]["properties"]["name"] == f"by {name}"
                assert len(versions_of(srv, countries)) == len(before) + 1
            else:
                assert_envelope(r, status, {401: "not_authenticated", 403: "permission_denied"}[status])
                assert versions_of(srv, countries) == before
    # a dataset the caller may not see is not found; so are unknown ids and datasets without features
    with login(srv, ed["owner"]) as c:
        r = c.post("/api/v2/uploads/upload", files={"base_file": ("RGB.byte.tif", (ed_data() / "RGB.byte.tif").read_bytes(),
                                                                  "image/tiff")})
        from tests.api.test_uploads import imported
        raster = imported(c, r)
        private = upload_points(c, ed["root"] / "private", n=3, name="private", title="Private", permissions=PRIVATE)
        assert_envelope(c.post(edits_url(raster), json={"delete": [1]}), 404, "not_found")
        assert_envelope(c.post("/api/v2/datasets/999999/edits", json={"delete": [1]}), 404, "not_found")
        assert_envelope(c.post("/api/v2/datasets/abc/edits", json={"delete": [1]}), 404, "not_found")
    with login(srv, ed["other"]) as c:
        assert_envelope(c.post(edits_url(private), json={"delete": [1]}), 404, "not_found")


def ed_data():
    from tests.api.test_uploads import DATA
    return DATA


BOWTIE = {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]]}
BAD = [
    # (dataset, body, words the message holds)
    ("points", {"insert": [{"type": "Feature", "properties": {},
                            "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}]},
     "LineString does not fit"),
    ("countries", {"insert": [{"type": "Feature", "properties": {"name": "x"}, "geometry": BOWTIE}]}, "invalid"),
    ("countries", {"update": [{"id": 5, "properties": {}, "geometry": {"type": "MultiPolygon", "coordinates": []}}]},
     "empty"),
    ("points", {"insert": [{"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": []}}]},
     "empty"),
    ("points", {"insert": [{"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [5, 95]}}]},
     "outside the area"),
    ("points", {"update": [{"id": 3, "properties": {"nope": 1}}]}, "no field 'nope'"),
    ("points", {"update": [{"id": 3, "properties": {"n": "abc"}}]}, "feature 3, field n"),
    ("points", {"update": [{"id": 3, "properties": {"height": "tall"}}]}, "expected a number"),
    ("points", {"update": [{"id": 3, "properties": {"ok": "perhaps"}}]}, "expected true or false"),
    ("points", {"update": [{"id": 3, "properties": {"day": "yesterday"}}]}, "expected a date"),
    ("points", {"update": [{"id": 3, "properties": {"label": 12}}]}, "expected text"),
    ("points", {"update": [{"id": 999999, "properties": {"label": "x"}}]}, "feature 999999 does not exist"),
    ("points", {"delete": [999999]}, "feature 999999 does not exist"),
    ("points", {"delete": [3, 3]}, "feature 3 does not exist"),
    ("points", {"insert": [{"type": "Feature", "properties": {}, "geometry": {"type": "Point"}}]}, "geometry"),
    ("points", {"insert": [{"type": "Feature", "properties": {}, "geometry": {"type": "Nonsense", "coordinates": [1]}}]},
     "not a GeoJSON geometry"),
    ("points", {"update": [{"id": "three", "properties": {}}]}, "update"),
    ("points", {"delete": "all"}, "delete"),
    ("points", {"inserts": []}, "inserts"),
    ("points", {"base": "latest"}, "base"),
]


@pytest.mark.parametrize("name,body,words", BAD, ids=[f"{i}-{b[2][:20]}" for i, b in enumerate(BAD)])
def test_bad_input_is_refused_whole(ed, name, body, words):
    srv, dataset = ed["srv"], ed[name]
    # every bad change comes after a good one: the good one must not stay either
    good = {"update": [{"id": 6, "properties": {"name" if name == "countries" else "label": "kept?"}}]}
    body = {**body, "update": good["update"] + body.get("update", [])} if isinstance(body.get("update", []), list) else body
    with login(srv, ed["owner"]) as c:
        before, history, kept = features(c, dataset), versions_of(srv, dataset), gpkg_versions(srv, dataset)
        r = c.post(edits_url(dataset), json=body)
        assert_envelope(r, 400, "invalid")
        assert words in r.json()["errors"][0], r.json()["errors"][0]
        assert features(c, dataset) == before
    assert versions_of(srv, dataset) == history
    assert gpkg_versions(srv, dataset) == kept


def test_a_stale_base_is_refused_and_a_current_one_accepted(ed):
    points = ed["points"]
    with login(ed["srv"], ed["owner"]) as c:
        current = c.get(f"/api/v2/datasets/{points['pk']}/data_state").json()["data_state"]["data_version"]
        r = c.post(edits_url(points), json={"base": current, "update": [{"id": 7, "properties": {"label": "based"}}]})
        assert r.status_code == 200, r.text
        before, history = features(c, points), versions_of(ed["srv"], points)
        r = c.post(edits_url(points), json={"base": current, "update": [{"id": 7, "properties": {"label": "stale"}}]})
        assert_envelope(r, 409, "conflict")
        assert "changed since version" in r.json()["errors"][0]
        assert r.json()["data_version"] == history[-1][1]
        assert features(c, points) == before and versions_of(ed["srv"], points) == history


def test_two_editors_of_one_dataset_take_turns(ed, tmp_path):
    """Two large edits at once: the second waits for the first, both are kept, numbered in turn."""
    with login(ed["srv"], ed["owner"]) as c:
        points = upload_points(c, tmp_path / "src", n=10, name="busy", title="Busy")
    before = versions_of(ed["srv"], points)
    outcome: dict = {}

    def edit(who: dict, label: str) -> None:
        inserts = [{"type": "Feature", "properties": {"label": label},
                    "geometry": {"type": "Point", "coordinates": [i / 1000, 0]}} for i in range(3000)]
        with login(ed["srv"], who) as client:
            r = client.post(edits_url(points), json={"insert": inserts, "update": [{"id": 1, "properties": {"label": label}}]})
        outcome[label] = r

    threads = [threading.Thread(target=edit, args=(ed["owner"], "first")),
               threading.Thread(target=edit, args=(ed["admin_user"], "second"))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert all(r.status_code == 200 for r in outcome.values()), {k: r.text for k, r in outcome.items()}
    numbers = sorted(r.json()["version"]["number"] for r in outcome.values())
    rows = versions_of(ed["srv"], points)
    assert [r[1] for r in rows[len(before):]] == numbers and all(r[3] == "done" for r in rows)
    with httpx.Client(base_url=ed["srv"].url, timeout=60) as anon:
        shown = features(anon, points, count="100000")
    assert len(shown) == 10 + 6000
    # the one that went second wrote over the first's label, knowing it (its version is later)
    last = max(outcome, key=lambda k: outcome[k].json()["version"]["number"])
    assert shown[1]["properties"]["label"] == last
    assert sorted(f for r in outcome.values() for f in r.json()["inserted"]) == sorted(set(shown) - set(range(1, 11)))


def test_the_extent_follows_the_edits(ed):
    with login(ed["srv"], ed["owner"]) as c:
        countries = upload_countries(c, "Countries to grow")
        north = lambda: max(p[1] for p in c.get(f"/api/v2/datasets/{countries['pk']}").json()["dataset"]  # noqa: E731
                            ["bbox_polygon"]["coordinates"][0])
        assert north() == pytest.approx(83.645, abs=1e-3)
        r = c.post(edits_url(countries), json={"insert": [{"type": "Feature", "properties": {"name": "Far north"},
                                                           "geometry": {"type": "Polygon", "coordinates": [
                                                               [[10, 85], [11, 85], [11, 86.5], [10, 85]]]}}]})
        assert r.status_code == 200, r.text
        assert north() == pytest.approx(86.5, abs=1e-3)
        r = c.post(edits_url(countries), json={"delete": r.json()["inserted"]})  # and shrinks back
        assert r.status_code == 200, r.text
        assert north() == pytest.approx(83.645, abs=1e-3)
