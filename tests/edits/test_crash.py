"""A server killed (SIGKILL) in the middle of an edit: the dataset and its history are exactly as
before the edit or exactly as after it, nothing is left pending, and the next start serves. And
the catalogue made to agree with the GeoPackages at start: a version whose GeoPackage transaction
committed but whose catalogue write did not is settled; one whose GeoPackage transaction did not
commit is dropped; versions a GeoPackage holds that an older, restored catalogue lacks are added."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
import uuid

import httpx
import pytest

from catalogue_app.geo import gpkg_edit
from tests.conftest import ADMIN_PASSWORD, Server, login, make_user
from tests.edits.conftest import features, upload_points
from tests.edits.test_reads_after_edit import working_copy

AT_ONCE = 15


def kill(srv: Server) -> None:
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=10)


def catalogue_rows(srv: Server, rid: int) -> tuple[list[tuple], int, int]:
    """The dataset's versions (uuid, number, kind, state), data_version and feature_count."""
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        rows = conn.execute("SELECT uuid, number, kind, state FROM resource_versions WHERE resource_id = ?"
                            " ORDER BY number", (rid,)).fetchall()
        version, count = conn.execute("SELECT data_version, feature_count FROM datasets WHERE resource_id = ?",
                                      (rid,)).fetchone()
    finally:
        conn.close()
    return rows, version, count


def gpkg_history(path) -> tuple[list[tuple], int, tuple]:
    """The GeoPackage's versions (uuid, number), how many change rows, and its applied mark."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'gpkgext_catalogue_state'").fetchone()
        if not found:
            return [], 0, (0, None)
        return (conn.execute("SELECT uuid, number FROM gpkgext_catalogue_versions ORDER BY number").fetchall(),
                conn.execute("SELECT COUNT(*) FROM gpkgext_catalogue_changes").fetchone()[0],
                conn.execute("SELECT applied_version, applied_uuid FROM gpkgext_catalogue_state").fetchone())
    finally:
        conn.close()


def snapshot(srv: Server, dataset: dict) -> dict:
    path = working_copy(srv, dataset)
    with httpx.Client(base_url=srv.url, timeout=60) as anon:
        shown = features(anon, dataset, count="100000")
    return {"features": {fid: (f["properties"], f["geometry"]) for fid, f in shown.items()},
            "catalogue": catalogue_rows(srv, int(dataset["pk"])), "gpkg": gpkg_history(path)}


def _big_edit(url: str, auth, n: int, outcome: dict) -> None:
    inserts = [{"type": "Feature", "properties": {"label": f"bulk {i}", "n": i},
                "geometry": {"type": "Point", "coordinates": [-170 + (i % 3400) / 10, -80 + (i // 3400) / 10]}}
               for i in range(n)]
    try:
        r = httpx.post(url, json={"insert": inserts, "update": [{"id": 3, "properties": {"label": "bulk"}}],
                                  "delete": [4]}, auth=auth, timeout=120)
        outcome["status"] = r.status_code
    except httpx.HTTPError as exc:
        outcome["error"] = exc


def test_a_kill_in_the_middle_of_a_large_edit_leaves_it_all_or_nothing(tmp_path):
    srv = Server(tmp_path / "data")
    try:
        admin = srv.client(auth=("admin", ADMIN_PASSWORD))
        owner = make_user(admin)
        with login(srv, owner) as c:
            points = upload_points(c, tmp_path / "src", n=200)
            r = c.post(f"/api/v2/datasets/{points['pk']}/edits", json={"update": [{"id": 1, "properties": {"n": 7}}]})
            assert r.status_code == 200, r.text  # the file is in WAL mode from now on
        before = snapshot(srv, points)
        wal = working_copy(srv, points).with_name("data.gpkg-wal")
        outcome: dict = {}
        edit = threading.Thread(target=_big_edit, args=(f"{srv.url}/api/v2/datasets/{points['pk']}/edits",
                                                        (owner["username"], owner["password"]), 40_000, outcome))
        edit.start()
        # kill once the edit's transaction has spilled pages into the write-ahead log, uncommitted
        deadline = time.monotonic() + 60
        while not (wal.exists() and wal.stat().st_size > 200_000) and "status" not in outcome:
            assert time.monotonic() < deadline, "the edit never reached the GeoPackage"
            time.sleep(0.005)
        kill(srv)
        edit.join(timeout=60)
        assert "status" not in outcome, "the edit ended before the kill: make it larger"
        started = time.monotonic()
        again = Server(srv.data_dir, port=srv.port)
        srv = again
        assert time.monotonic() - started < AT_ONCE
        after = snapshot(again, points)
        rows, version, count = after["catalogue"]
        assert all(state == "done" for *_rest, state in rows)
        if after != before:  # the kill came after the GeoPackage's commit: the whole edit is there
            assert len(after["features"]) == len(before["features"]) + 40_000 - 1
            assert after["features"][3][0]["label"] == "bulk" and 4 not in after["features"]
            assert len(rows) == len(before["catalogue"][0]) + 1 and version == rows[-1][1]
            assert count == len(after["features"]) and after["gpkg"][2] == (rows[-1][1], rows[-1][0])
        else:
            assert len(after["features"]) == 200
        # and the dataset is edited as before
        with login(again, owner) as c:
            r = c.post(f"/api/v2/datasets/{points['pk']}/edits", json={"delete": [5]})
            assert r.status_code == 200, r.text
            assert 5 not in features(c, points, count="100000")
    finally:
        srv.stop()


def _reserve_pending(srv: Server, rid: int) -> gpkg_edit.Reserved:
    """A pending version in the catalogue, as an edit reserves it."""
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            number = conn.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM resource_versions WHERE resource_id = ?",
                                  (rid,)).fetchone()[0]
            version = str(uuid.uuid4())
            conn.execute("INSERT INTO resource_versions (uuid, resource_id, number, created, via, kind, state)"
                         " VALUES (?, ?, ?, '2026-01-01T00:00:00Z', 'api', 'data', 'pending')", (version, rid, number))
    finally:
        conn.close()
    return gpkg_edit.Reserved(number, version, "2026-01-01T00:00:00Z")


def test_start_up_settles_or_drops_pending_versions_and_adds_unknown_ones(tmp_path):
    import shapely

    srv = Server(tmp_path / "data")
    try:
        admin = srv.client(auth=("admin", ADMIN_PASSWORD))
        owner = make_user(admin)
        with login(srv, owner) as c:
            points = upload_points(c, tmp_path / "src", n=20)
            other = upload_points(c, tmp_path / "src2", n=20, name="others", title="Others")
        rid, path = int(points["pk"]), working_copy(srv, points)
        srv.stop()
        # 1. the server stopped after the GeoPackage transaction, before the catalogue's write
        committed = _reserve_pending(srv, rid)
        gpkg_edit.apply(path, [gpkg_edit.Insert({"label": "far"}, shapely.Point(150, -40), "EPSG:4326")],
                        reserve=lambda: committed, via="api")
        # 2. ... and before the GeoPackage transaction committed
        lost = _reserve_pending(srv, rid)
        # 3. an older catalogue restored: the other dataset's GeoPackage holds a version it lacks
        other_path = working_copy(srv, other)
        unknown = gpkg_edit.Reserved(7, str(uuid.uuid4()), "2026-01-01T00:00:00Z")
        gpkg_edit.apply(other_path, [gpkg_edit.Delete(1), gpkg_edit.Delete(2)], reserve=lambda: unknown, via="wfs-t")

        srv = Server(srv.data_dir, port=srv.port)
        rows, version, count = catalogue_rows(srv, rid)
        assert (committed.uuid, committed.number, "data", "done") in rows
        assert lost.uuid not in [r[0] for r in rows]
        assert (version, count) == (committed.number, 21)
        with httpx.Client(base_url=srv.url) as anon:
            detail = anon.get(f"/api/v2/datasets/{rid}").json()["dataset"]
            assert detail["bbox_polygon"]["coordinates"][0][2][0] == pytest.approx(150, abs=1e-3)
        deadline = time.monotonic() + 20
        while (unknown.uuid, 7, "data", "done") not in catalogue_rows(srv, int(other["pk"]))[0]:
            assert time.monotonic() < deadline, catalogue_rows(srv, int(other["pk"]))
            time.sleep(0.1)
        assert catalogue_rows(srv, int(other["pk"]))[1:] == (7, 18)
    finally:
        srv.stop()
