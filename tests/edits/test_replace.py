"""A new upload replacing a dataset's data is a version of it (kind "replace"): the new working
copy carries on the history of the old one, edits go on from there, and the originals of both
uploads are never touched by the edits."""

from __future__ import annotations

import hashlib

from catalogue_app.geo import gpkg_edit
from tests.api.test_uploads import imported
from tests.conftest import login
from tests.edits.conftest import features, points_gpkg, upload_points
from tests.edits.test_edits_api import edits_url, gpkg_versions, versions_of
from tests.edits.test_reads_after_edit import working_copy


def _originals(srv, dataset: dict) -> dict[str, str]:
    folder = working_copy(srv, dataset).parent.parent
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


def test_a_replacing_upload_is_a_version_and_keeps_the_history(ed, tmp_path):
    srv = ed["srv"]
    with login(srv, ed["owner"]) as c:
        points = upload_points(c, tmp_path / "one", n=10, name="replaced", title="Replaced")
        originals = _originals(srv, points)
        first = c.post(edits_url(points), json={"update": [{"id": 1, "properties": {"label": "edited"}}]}).json()
        assert _originals(srv, points) == originals  # the upload's own file is as it came
        new = points_gpkg(tmp_path / "two", 15, "replaced")
        r = c.post("/api/v2/uploads/upload", files={"base_file": (new.name, new.read_bytes(), "application/geopackage+sqlite3")},
                   data={"overwrite_existing_layer": "true", "resource_pk": points["pk"]})
        imported(c, r)
        rows = versions_of(srv, points)
        assert [r[2] for r in rows[-2:]] == ["data", "replace"] and rows[-1][4] == "upload"
        replace_number = rows[-1][1]
        path = working_copy(srv, points)
        assert gpkg_versions(srv, points) == [(first["version"]["uuid"], first["version"]["number"]),
                                              (rows[-1][0], replace_number)]
        assert gpkg_edit.applied(path) == (replace_number, rows[-1][0])
        assert len(features(c, points)) == 15 and features(c, points)[1]["properties"]["label"] == "p0"
        # the first edit's changes are still readable; a base older than the upload is stale
        assert [c["op"] for c in gpkg_edit.data_changes(path, first["version"]["number"])] == ["update"]
        r = c.post(edits_url(points), json={"base": first["version"]["number"], "delete": [1]})
        assert r.status_code == 409, r.text
        r = c.post(edits_url(points), json={"base": replace_number, "delete": [1]})
        assert r.status_code == 200, r.text
        originals = _originals(srv, points)
        assert "replaced.gpkg" in originals
        r = c.post(edits_url(points), json={"update": [{"id": 2, "properties": {"label": "again"}}]})
        assert r.status_code == 200 and _originals(srv, points) == originals
