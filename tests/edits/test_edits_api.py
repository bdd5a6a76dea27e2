"""POST /api/v2/datasets/{pk}/edits: features inserted, changed and deleted as one version."""

from __future__ import annotations

from tests.conftest import login
from tests.edits.conftest import features


def test_an_owner_edits_points_and_sees_them_at_once(ed):
    points = ed["points"]
    with login(ed["srv"], ed["owner"]) as c:
        before = features(c, points)
        r = c.post(f"/api/v2/datasets/{points['pk']}/edits", json={
            "insert": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [5.5, 45.25]},
                        "properties": {"label": "new", "n": 99}}],
            "update": [{"id": 1, "properties": {"label": "changed"}}],
            "delete": [2]})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["version"]["kind"] == "data" and body["version"]["via"] == "ui"
        new = body["inserted"][0]
        after = features(c, points)
        assert new not in before and new in after
        assert after[new]["properties"]["label"] == "new"
        assert after[new]["geometry"]["coordinates"] == [5.5, 45.25]
        assert after[1]["properties"]["label"] == "changed"
        assert 2 not in after
