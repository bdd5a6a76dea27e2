"""GET /api/v2/datasets/{pk}/data_state: the data version an edit is made on (its ``base``), the
feature count and the geometry type, as the web UI reads them; seen by whoever may see the
dataset, and following every edit at once."""

from __future__ import annotations

from tests.api.test_uploads import imported
from tests.conftest import login
from tests.edits.conftest import points_gpkg
from tests.ogc.conftest import PRIVATE


def state(client, pk) -> dict:
    r = client.get(f"/api/v2/datasets/{pk}/data_state")
    assert r.status_code == 200, r.text
    return r.json()["data_state"]


def test_the_state_follows_each_edit(ed):
    points, countries = ed["points"], ed["countries"]
    anonymous = ed["srv"].client()
    with login(ed["srv"], ed["owner"]) as owner:
        before = state(anonymous, points["pk"])
        assert before["geometry_type"] == "Point" and before["features_editable"] is True
        r = owner.post(f"/api/v2/datasets/{points['pk']}/edits", json={
            "base": before["data_version"],
            "insert": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 45]}, "properties": {"label": "state"}}]})
        assert r.status_code == 200, r.text
        after = state(anonymous, points["pk"])
        assert after["data_version"] == r.json()["version"]["number"] > before["data_version"]
        assert after["feature_count"] == before["feature_count"] + 1
        # a metadata change is a version too, but not of the data: the base stays
        assert owner.patch(f"/api/v2/resources/{points['pk']}", json={"title": "Points, renamed"}).status_code == 200
        assert state(owner, points["pk"])["data_version"] == after["data_version"]
        # the base read here is the one the edit endpoint takes
        r = owner.post(f"/api/v2/datasets/{points['pk']}/edits", json={"base": after["data_version"], "delete": [r.json()["inserted"][0]]})
        assert r.status_code == 200, r.text
    shape = state(anonymous, countries["pk"])
    assert shape["geometry_type"] == "MultiPolygon" and shape["feature_count"] == 177
    anonymous.close()


def test_who_sees_the_state_of_a_private_dataset(ed, tmp_path):
    path = points_gpkg(tmp_path, 5, "hidden_points")
    with login(ed["srv"], ed["owner"]) as owner:
        r = owner.post("/api/v2/uploads/upload", files={"base_file": (path.name, path.read_bytes(), "application/geopackage+sqlite3")},
                       data={"permissions": PRIVATE})
        pk = imported(owner, r)["pk"]
        assert state(owner, pk) == {"data_version": 0, "feature_count": 5, "geometry_type": "Point", "features_editable": True}
    assert state(ed["admin"], pk)["feature_count"] == 5
    with ed["srv"].client() as anonymous, login(ed["srv"], ed["other"]) as other:
        for client in (anonymous, other):
            r = client.get(f"/api/v2/datasets/{pk}/data_state")
            assert r.status_code == 404 and r.json()["code"] == "not_found", r.text
        for bad in ("999999", "abc", "-1"):
            r = anonymous.get(f"/api/v2/datasets/{bad}/data_state")
            assert r.status_code == 404, r.text
