"""store/harvesters.py on a real SQLite file: what a long harvest leaves in its session."""

from __future__ import annotations

from catalogue_app.store import db, harvesters, users


def test_a_session_of_many_failures_keeps_bounded_details(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    db.migrate(path)
    with db.transaction(path) as conn:
        owner = users.create(conn, {"username": "owner", "email": "owner@example.org", "password": "x"})
        hid = harvesters.create(conn, {"name": "h", "remote_url": "http://example.org/", "default_owner_id": owner,
                                       "harvester_type": "geonode.harvesting.harvesters.wms.OgcWmsHarvester"})
        session = harvesters.start_session(conn, hid, "harvesting")
        harvesters.session_progress(conn, session, detail="first")
        for i in range(3000):
            harvesters.session_progress(conn, session, failed=1, detail=f"record-{i}: " + "x" * 400)
        row = harvesters.session(conn, session)
    assert row["records_failed"] == 3000
    assert row["details"].startswith("first\nrecord-0: ")
    assert len(row["details"]) <= harvesters.MAX_DETAILS + len(harvesters.MORE) + 1
    assert row["details"].endswith(harvesters.MORE) and row["details"].count(harvesters.MORE) == 1
