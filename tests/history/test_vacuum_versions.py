"""``catalogue vacuum --drop-versions-before DATE`` forgets the versions made before the date, on
request only: versions of fields and of data, each resource's history cut at one number, in the
catalogue and in the datasets' GeoPackages alike (with their feature changes, and the space given
back), but each resource's newest version and newest version of data. What lies before a cut is
refused plainly from then on; a restart brings nothing back; numbers go on."""

from __future__ import annotations

import sqlite3
import time

import httpx

from catalogue_app.geo import gpkg_edit
from catalogue_app.store import versions as store_versions
from tests.conftest import ADMIN_PASSWORD, Server, assert_envelope, login, make_user
from tests.edits.conftest import features, upload_points
from tests.edits.test_crash import gpkg_history
from tests.edits.test_reads_after_edit import working_copy
from tests.management.backup_helpers import cli, job


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
    assert "metadata version(s) and " in done["output_message"]  # (the package's other tests' versions too)
    assert [v["number"] for v in world.versions(pk)["versions"]] == [3]
    # the newest version of each resource stays, so that numbers are never given twice, and the
    # newest version of a dataset's data (its GeoPackage's applied version)
    assert [(v["number"], v["kind"]) for v in world.versions(points)["versions"]] == [(2, "metadata"), (1, "data")]
    # what is left still reads and reverts; what went is not found, or refused plainly
    assert admin.get(f"/api/v2/resources/{pk}/versions/3").status_code == 200
    gone = admin.get(f"/api/v2/resources/{pk}/versions/1")
    assert_envelope(gone, 404, "not_found")
    assert "the history before version 3 was dropped by vacuum on" in gone.json()["errors"][0]
    refused = owner.post(f"/api/v2/resources/{pk}/versions/0/revert")
    assert_envelope(refused, 400, "invalid")
    assert "Version 0 " in refused.json()["errors"][0] and "before version 3 was dropped" in refused.json()["errors"][0]
    assert len(admin.get(f"/api/v2/datasets/{points}/versions/0/features").json()["features"]) == 3


# -- versions of data ---------------------------------------------------------------------------
def _edit(c: httpx.Client, rid: int, body: dict) -> dict:
    r = c.post(f"/api/v2/datasets/{rid}/edits", json=body)
    assert r.status_code == 200, r.text
    time.sleep(0.01)  # versions made at distinct times
    return r.json()


def _numbers(c: httpx.Client, rid: int) -> list[int]:
    r = c.get(f"/api/v2/resources/{rid}/versions", params={"page_size": 100})
    assert r.status_code == 200, r.text
    return [v["number"] for v in r.json()["versions"]]


def _at(c: httpx.Client, rid: int, number: int) -> dict[int, dict]:
    r = c.get(f"/api/v2/datasets/{rid}/versions/{number}/features")
    assert r.status_code == 200, r.text
    return {f["id"]: f["properties"] for f in r.json()["features"]}


def _refused(response: httpx.Response, before: int) -> None:
    assert_envelope(response, 400, "invalid")
    assert f"the history before version {before} was dropped by vacuum on 20" in response.json()["errors"][0]


def _on_disk(path) -> int:
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def _many(n: int) -> list[dict]:
    return [{"type": "Feature", "properties": {"label": f"bulk {i}", "n": i},
             "geometry": {"type": "Point", "coordinates": [-170 + i / 100, -60 + i / 200]}} for i in range(n)]


def test_vacuum_drops_old_data_versions_in_the_catalogue_and_the_geopackage(tmp_path):
    srv = Server(tmp_path / "data")
    try:
        admin = srv.client(auth=("admin", ADMIN_PASSWORD))
        owner = make_user(admin)
        with login(srv, owner) as c:
            points = upload_points(c, tmp_path / "src", n=20)
            rid, path = int(points["pk"]), working_copy(srv, points)
            # 1, 2: a large insert and its removal (history worth forgetting); 3: a change kept
            bulk = _edit(c, rid, {"insert": _many(3000)})["inserted"]
            _edit(c, rid, {"delete": bulk, "update": [{"id": 1, "properties": {"label": "second"}}]})
            _edit(c, rid, {"update": [{"id": 1, "properties": {"label": "third"}}], "delete": [2]})
            cutoff = c.get(f"/api/v2/resources/{rid}/versions/3").json()["version"]["created"]
            assert c.patch(f"/api/v2/resources/{rid}", json={"title": "Points, renamed"}).status_code == 200  # 4
            _edit(c, rid, {"update": [{"id": 3, "properties": {"n": 99}}]})  # 5
            assert _numbers(c, rid) == [5, 4, 3, 2, 1]
            at_three = _at(c, rid, 3)
            assert at_three[1]["label"] == "third" and 2 not in at_three and at_three[3]["n"] == 2
            size = _on_disk(path)

            done = job(admin, "vacuum", drop_versions_before=cutoff)
            assert done["outcome"] == "SUCCESS", done["output_message"]
            said = done["output_message"]
            assert "0 metadata version(s) and 2 data version(s) made before" in said, said
            assert "2 data version(s) and 6001 feature change(s) deleted from 1 dataset GeoPackage(s)" in said, said
            assert " given back." in said and "Note:" not in said, said

            # the catalogue and the GeoPackage hold the later versions only
            assert _numbers(c, rid) == [5, 4, 3]
            versions, changes, applied = gpkg_history(path)
            assert [n for _uuid, n in versions] == [3, 5] and changes == 3 and applied[0] == 5
            assert _on_disk(path) < size * 0.6, (size, _on_disk(path))  # the space given back
            # the features at a kept version are right, and the data themselves untouched
            assert _at(c, rid, 3) == at_three and _at(c, rid, 4) == at_three
            now = features(c, points)
            assert now[3]["properties"]["n"] == 99 and now[1]["properties"]["label"] == "third" and len(now) == 19
            # at a dropped version, or as uploaded: refused plainly; a dropped version is not found
            for number in (0, 1, 2):
                _refused(c.get(f"/api/v2/datasets/{rid}/versions/{number}/features"), 3)
                _refused(c.post(f"/api/v2/resources/{rid}/versions/{number}/revert", params={"part": "data"}), 3)
                _refused(c.get(f"/api/v2/resources/{rid}/versions/{number}/diff"), 3)
            assert_envelope(c.get(f"/api/v2/resources/{rid}/versions/2"), 404, "not_found")
            assert c.get(f"/api/v2/resources/{rid}/versions/3").json()["version"]["changes"]["features"]["updated"]
            assert _numbers(c, rid) == [5, 4, 3]  # the refusals changed nothing
        srv.stop()

        # a restart does not bring the dropped versions back; numbers go on
        srv = Server(srv.data_dir, port=srv.port)
        with login(srv, owner) as c:
            assert _numbers(c, rid) == [5, 4, 3]
            assert [n for _uuid, n in gpkg_history(path)[0]] == [3, 5]
            assert _edit(c, rid, {"update": [{"id": 4, "properties": {"label": "sixth"}}]})["version"]["number"] == 6
            r = c.post(f"/api/v2/resources/{rid}/versions/3/revert")  # back to a kept version: 5 and 6 undone
            assert r.status_code == 201, r.text
            assert r.json()["version"]["number"] == 7
            now = features(c, points)
            assert now[3]["properties"]["n"] == 2 and now[4]["properties"]["label"] == "p3"
            assert now[1]["properties"]["label"] == "third" and 2 not in now
            assert _numbers(c, rid) == [7, 6, 5, 4, 3]
    finally:
        srv.stop()


def _catalogue(srv: Server) -> sqlite3.Connection:
    return sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)


def test_a_vacuum_stopped_between_the_catalogue_and_a_geopackage(tmp_path):
    """The catalogue is cut first, then the GeoPackages: a crash between leaves GeoPackage
    versions the catalogue no longer lists. Nothing shows them, the start does not bring them back,
    and the next vacuum finishes the work. (And the other way round, a GeoPackage cut whose
    catalogue was not, as an older catalogue restored beside it would be: what the catalogue still
    lists is answered plainly, and the start minds nothing.)"""
    srv = Server(tmp_path / "data")
    try:
        admin = srv.client(auth=("admin", ADMIN_PASSWORD))
        owner = make_user(admin)
        with login(srv, owner) as c:
            points = upload_points(c, tmp_path / "src", n=10)
            others = upload_points(c, tmp_path / "src2", n=10, name="others", title="Others")
            rid, path = int(points["pk"]), working_copy(srv, points)
            oid, other_path = int(others["pk"]), working_copy(srv, others)
            for n in range(1, 4):
                _edit(c, rid, {"update": [{"id": n, "properties": {"label": f"edit {n}"}}]})
                _edit(c, oid, {"update": [{"id": n, "properties": {"label": f"edit {n}"}}]})
            cutoff = c.get(f"/api/v2/resources/{rid}/versions/3").json()["version"]["created"]
        srv.stop()

        # 1. the catalogue cut (as the vacuum's first step commits it), its GeoPackage not yet
        conn = _catalogue(srv)
        with conn:
            for resource, upto in store_versions.cuts_before(conn, cutoff):
                if resource == rid:
                    store_versions.cut(conn, resource, upto, "2026-01-02T00:00:00.000000Z")
        conn.close()
        assert [n for _u, n in gpkg_history(path)[0]] == [1, 2, 3]
        # 2. a GeoPackage cut whose catalogue was not
        gpkg_edit.forget_versions(other_path, 2, "2026-01-03T00:00:00.000000Z")
        assert [n for _u, n in gpkg_history(other_path)[0]] == [3]

        srv = Server(srv.data_dir, port=srv.port)
        with login(srv, owner) as c:
            assert _numbers(c, rid) == [3]  # not brought back
            _refused(c.get(f"/api/v2/datasets/{rid}/versions/1/features"), 3)
            _refused(c.post(f"/api/v2/resources/{rid}/versions/0/revert"), 3)
            assert _at(c, rid, 3)[1]["label"] == "edit 1"
            # the other: its catalogue lists what its GeoPackage forgot, and says so when asked
            assert _numbers(c, oid) == [3, 2, 1]
            for number in (1, 2):
                _refused(c.get(f"/api/v2/resources/{oid}/versions/{number}"), 3)
                _refused(c.get(f"/api/v2/datasets/{oid}/versions/{number}/features"), 3)
                _refused(c.post(f"/api/v2/resources/{oid}/versions/{number}/revert"), 3)
            _refused(c.post(f"/api/v2/resources/{oid}/versions/0/revert", params={"part": "data"}), 3)
            assert _at(c, oid, 3)[3]["label"] == "edit 3"
            assert c.get(f"/api/v2/resources/{oid}/versions/3").status_code == 200

        # the next vacuum (here on the command line, beside the running server) finishes the work
        done = cli("vacuum", "--drop-versions-before", cutoff, data_dir=srv.data_dir)
        assert done.returncode == 0, done.stderr
        # the other's catalogue rows; the first's GeoPackage versions (the other's were gone already)
        assert "0 metadata version(s) and 2 data version(s) made before" in done.stdout, done.stdout
        assert "2 data version(s) and 2 feature change(s) deleted from 1 dataset GeoPackage(s)" in done.stdout, done.stdout
        assert [n for _u, n in gpkg_history(path)[0]] == [3]
        assert [n for _u, n in gpkg_history(other_path)[0]] == [3]
        with login(srv, owner) as c:
            assert _numbers(c, oid) == [3]
            assert _edit(c, rid, {"delete": [5]})["version"]["number"] == 4
            assert 5 not in features(c, points)
    finally:
        srv.stop()
