"""``catalogue vacuum --drop-versions-before DATE`` forgets the metadata versions made before the
date, on request only; versions of data stay (their features are in the GeoPackages), and so does
each resource's newest version."""

from __future__ import annotations

from tests.conftest import assert_envelope
from tests.management.backup_helpers import job


def test_vacuum_drops_old_metadata_versions_on_request_only(world):
    admin, owner = world.client("admin"), world.client("owner")
    pk = world.new_map(title="Old map")
    for title in ("Old map, 1", "Old map, 2"):
        assert owner.patch(f"/api/v2/resources/{pk}", json={"title": title}).status_code == 200
    points = world.new_points(n=3)
    assert owner.post(f"/api/v2/datasets/{points}/edits", json={"delete": [1]}).status_code == 200
    assert owner.patch(f"/api/v2/resources/{points}", json={"title": "Points, old"}).status_code == 200
    assert owner.patch(f"/api/v2/resources/{pk}", json={"title": "Old map, 3"}).status_code == 200
    cutoff = world.latest(pk)["created"]  # version 3 of the map: made at the cutoff, kept

    plain = job(admin, "vacuum")  # never by itself
    assert plain["outcome"] == "SUCCESS" and "Versions:" not in plain["output_message"]
    assert world.count(pk) == 3 and world.count(points) == 2

    for bad, says in (("yesterday", "is not a date"), ("2999-01-01", "in the future")):
        refused = job(admin, "vacuum", drop_versions_before=bad)
        assert refused["outcome"] == "FAILURE" and says in refused["output_message"], refused
    assert world.count(pk) == 3

    done = job(admin, "vacuum", drop_versions_before=cutoff)
    assert done["outcome"] == "SUCCESS", done["output_message"]
    assert "metadata version(s) made before" in done["output_message"]
    assert "version(s) of data as old are kept" in done["output_message"]
    assert [v["number"] for v in world.versions(pk)["versions"]] == [3]
    # the newest version of each resource stays, so that numbers are never given twice
    assert [(v["number"], v["kind"]) for v in world.versions(points)["versions"]] == [(2, "metadata"), (1, "data")]
    # what is left still reads and reverts; what went is not found
    assert admin.get(f"/api/v2/resources/{pk}/versions/3").status_code == 200
    assert_envelope(admin.get(f"/api/v2/resources/{pk}/versions/1"), 404, "not_found")
    assert_envelope(owner.post(f"/api/v2/resources/{pk}/versions/0/revert"), 404, "not_found")
    assert len(admin.get(f"/api/v2/datasets/{points}/versions/0/features").json()["features"]) == 3
