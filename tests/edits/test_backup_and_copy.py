"""Edited working copies in backups and copies: taken with SQLite's backup API, so that what
the write-ahead log holds is in them and the file is never shared (linked) with the dataset
that edits go on changing. A backup restores with the edits and their history; a copy of the
resource starts a history of its own."""

from __future__ import annotations

import sqlite3
import tarfile

from tests.api.test_copies import copy_of
from tests.conftest import ADMIN_PASSWORD, Server, login, make_user
from tests.edits.conftest import features, upload_points
from tests.edits.test_edits_api import edits_url, gpkg_versions, versions_of
from tests.edits.test_reads_after_edit import working_copy
from tests.management.backup_helpers import cli, job


def test_backup_restore_and_copy_of_an_edited_dataset(tmp_path):
    srv = Server(tmp_path / "data")
    restored = None
    try:
        admin = srv.client(auth=("admin", ADMIN_PASSWORD))
        owner = make_user(admin)
        with login(srv, owner) as c:
            points = upload_points(c, tmp_path / "src", n=10)
            assert c.post(edits_url(points), json={"update": [{"id": 1, "properties": {"label": "first"}}]}).status_code == 200
            # a reader elsewhere keeps the next edit in the write-ahead log
            reader = sqlite3.connect(working_copy(srv, points))
            reader.execute("SELECT COUNT(*) FROM gpkg_contents").fetchone()
            r = c.post(edits_url(points), json={"update": [{"id": 2, "properties": {"label": "in the log"}}],
                                                "delete": [3]})
            assert r.status_code == 200, r.text
            assert working_copy(srv, points).with_name("data.gpkg-wal").stat().st_size > 0
            done = job(admin, "backup", output="edited.tar")
            assert done["outcome"] == "SUCCESS", done["output_message"]
            archive = srv.data_dir / "backups" / "edited.tar"
            with tarfile.open(archive) as tar:
                names = tar.getnames()
            assert not [n for n in names if n.endswith(("-wal", "-shm"))], names
            # the copy of the resource
            copy = copy_of(c, points["pk"], title="Copied points")
            shown = features(c, copy)
            assert shown[2]["properties"]["label"] == "in the log" and 3 not in shown
            assert versions_of(srv, copy) == [] and gpkg_versions(srv, copy) == []
            r = c.post(edits_url(copy), json={"base": 0, "update": [{"id": 2, "properties": {"label": "copy's own"}}]})
            assert r.status_code == 200, r.text
            assert features(c, points)[2]["properties"]["label"] == "in the log"
        reader.close()
        history = versions_of(srv, points)

        r = cli("restore", str(archive), data_dir=tmp_path / "restored")
        assert r.returncode == 0, r.stderr
        restored = Server(tmp_path / "restored")
        with login(restored, owner) as c:
            shown = features(c, points)
            assert shown[1]["properties"]["label"] == "first" and shown[2]["properties"]["label"] == "in the log"
            assert 3 not in shown
            assert versions_of(restored, points) == history
            assert gpkg_versions(restored, points) == [v[:2] for v in history]
            r = c.post(edits_url(points), json={"base": history[-1][1], "delete": [4]})
            assert r.status_code == 200, r.text
    finally:
        srv.stop()
        if restored is not None:
            restored.stop()
