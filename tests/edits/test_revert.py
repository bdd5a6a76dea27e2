"""services/edits.py ``revert``, ``data_changes`` and ``features_at``, as the history API calls
them: the edits are made through HTTP, the functions called in this process on the same
catalogue (a second process of it), and what they did read back through HTTP."""

from __future__ import annotations

import pytest

from catalogue_app.services import access, edits
from catalogue_app.services.errors import Forbidden, Invalid, NotFound
from catalogue_app.store.db import Database
from tests.conftest import login, run_loop
from tests.edits.conftest import features, upload_points
from tests.edits.test_edits_api import edits_url, versions_of
from tests.edits.test_reads_after_edit import working_copy


@pytest.fixture(scope="module")
def db(ed):
    database = Database(ed["srv"].data_dir / "catalogue.sqlite3")
    yield database
    database.close()


def viewer(db: Database, user: dict):
    return db.read_sync(access.viewer_of, user["pk"])


def test_revert_undoes_the_later_versions_and_keeps_ids(ed, db, tmp_path):
    srv = ed["srv"]
    with login(srv, ed["owner"]) as c:
        points = upload_points(c, tmp_path / "src", n=10, name="undone", title="Undone")
        r = c.patch(f"/api/v2/resources/{points['pk']}/permissions",
                    json={"groups": [{"id": ed["group"]["group"]["pk"], "permissions": "edit"}]})
        assert r.status_code == 200, r.text
        original = features(c, points)
        r1 = c.post(edits_url(points), json={"update": [{"id": 1, "properties": {"label": "one", "n": 100}}]}).json()
        r2 = c.post(edits_url(points), json={
            "update": [{"id": 2, "properties": {}, "geometry": {"type": "Point", "coordinates": [1, 2]}},
                       {"id": 1, "properties": {"label": "one again"}}],
            "delete": [3], "insert": [{"type": "Feature", "properties": {"label": "added"},
                                       "geometry": {"type": "Point", "coordinates": [3, 4]}}]}).json()
        at_one = features(c, points)
        r3 = c.post(edits_url(points), json={"delete": [4, r2["inserted"][0]]}).json()
    rid, path = int(points["pk"]), working_copy(srv, points)
    n1, n2, n3 = (r["version"]["number"] for r in (r1, r2, r3))

    # one version's changes
    changes = edits.data_changes(path, n2)
    assert [(c["op"], c["fid"]) for c in changes] == [("insert", r2["inserted"][0]), ("update", 2), ("update", 1), ("delete", 3)]
    inserted, moved, relabelled, deleted = changes
    assert moved["before"]["properties"] == {} and moved["after"]["geometry"] == {"type": "Point", "coordinates": [1.0, 2.0]}
    assert moved["before"]["geometry"]["coordinates"] == original[2]["geometry"]["coordinates"]
    assert relabelled["before"] == {"properties": {"label": "one"}} and relabelled["after"] == {"properties": {"label": "one again"}}
    assert deleted["after"] is None and deleted["before"]["properties"]["label"] == "p2"
    assert deleted["before"]["properties"]["ok"] is True and deleted["before"]["geometry"]["type"] == "Point"
    assert inserted["before"] is None and inserted["after"]["properties"]["label"] == "added"
    assert set(inserted["after"]["properties"]) == {"label", "n", "height", "ok", "day"}

    # the features as at each version
    def shown(collection):
        return {f["id"]: (f["properties"], f["geometry"]) for f in collection["features"]}

    assert shown(edits.features_at(path, 0)) == {fid: (f["properties"], f["geometry"]) for fid, f in original.items()}
    assert shown(edits.features_at(path, n2)) == {fid: (f["properties"], f["geometry"]) for fid, f in at_one.items()}
    assert edits.features_at(path, n3)["numberReturned"] == 8

    # only those who may edit may revert; an unknown version is not found
    with pytest.raises(Forbidden):
        run_loop(edits.revert(db, viewer(db, ed["other"]), rid, n1))
    with pytest.raises(NotFound):
        run_loop(edits.revert(db, viewer(db, ed["owner"]), rid, 999))
    assert len(versions_of(srv, points)) == 3

    # back to version n1: feature 3 comes back with its id, the inserted one goes, 1 and 2 as then
    row = run_loop(edits.revert(db, viewer(db, ed["member"]), rid, n1, "api"))
    assert (row["kind"], row["via"], row["reverts_to"], row["state"]) == ("revert", "api", r1["version"]["uuid"], "done")
    assert row["number"] == n3 + 1 and row["user_id"] == ed["member"]["pk"]
    with login(srv, ed["owner"]) as c:
        now = features(c, points)
    assert set(now) == set(original)
    assert now[3]["properties"] == original[3]["properties"] and now[3]["geometry"] == original[3]["geometry"]
    assert now[1]["properties"]["label"] == "one" and now[1]["properties"]["n"] == 100
    assert now[2]["geometry"] == original[2]["geometry"]
    assert [c["op"] for c in edits.data_changes(path, row["number"])].count("insert") == 2

    # nothing to revert to the version just made; back to the upload as it came (number 0)
    with pytest.raises(Invalid):
        run_loop(edits.revert(db, viewer(db, ed["owner"]), rid, row["number"]))
    row = run_loop(edits.revert(db, viewer(db, ed["owner"]), rid, 0, "ui"))
    assert row["reverts_to"] is None and row["kind"] == "revert"
    with login(srv, ed["owner"]) as c:
        assert features(c, points) == original
