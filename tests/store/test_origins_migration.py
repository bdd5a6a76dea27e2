"""The origins' migration on a catalogue made before it: copies made by earlier copy jobs name
their original (the job's request says which), harvested records their harvester and the remote's
page of the record, and those of a harvester since removed are still harvested; the rest stays
local. Deleting an original or a harvester keeps what its copies remember."""

from __future__ import annotations

import json
import sqlite3

from catalogue_app.store import db, migrations, resource_writes
from catalogue_app.store.origins import SOURCE_SQL

BEFORE = migrations.MIGRATIONS.index(migrations.resource_origins)  # the schema version before it
STAMP = "2026-01-01T00:00:00.000000Z"


def _before(path) -> dict[str, int]:
    db.migrate(path, upto=BEFORE)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    owner = conn.execute("INSERT INTO users (username, email, password, date_joined)"
                         " VALUES ('keeper', 'k@example.org', 'x', ?)", (STAMP,)).lastrowid
    ids = {name: resource_writes.create(conn, "document", owner, {"title": name.capitalize()})
           for name in ("original", "copy", "failed", "harvested", "orphan", "plain")}
    uuid = conn.execute("SELECT uuid FROM resources WHERE id = ?", (ids["copy"],)).fetchone()[0]
    for status, made in (("finished", {"uuid": uuid, "pk": ids["copy"]}), ("failed", {})):
        conn.execute("INSERT INTO execution_requests (exec_id, func_name, status, input_params, output_params,"
                     " created, last_updated) VALUES (?, 'copy', ?, ?, ?, ?, ?)",
                     (f"e-{status}", status, json.dumps({"instance": ids["original"]}), json.dumps({"output": made}),
                      STAMP, STAMP))
    harvester = conn.execute("INSERT INTO harvesters (name, remote_url, default_owner_id, harvester_type, last_updated)"
                             " VALUES ('central', 'https://central.example.org', ?, 'geonode', ?)",
                             (owner, STAMP)).lastrowid
    conn.execute("INSERT INTO harvestable_resources (harvester_id, unique_identifier, title, last_updated, resource_id)"
                 " VALUES (?, 'u1', 'Harvested there', ?, ?)", (harvester, STAMP, ids["harvested"]))
    conn.execute("INSERT INTO remote_links (resource_id, url, name, link_type) VALUES (?, ?, ?, 'html')",
                 (ids["harvested"], "https://central.example.org/catalogue/#/document/4", "Page on the remote catalogue"))
    conn.execute("UPDATE resources SET sourcetype = 'COPYREMOTE' WHERE id IN (?, ?)", (ids["harvested"], ids["orphan"]))
    conn.execute("COMMIT")
    conn.close()
    return ids


def test_copies_and_harvested_records_made_before_get_their_origin(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    ids = _before(path)
    assert db.migrate(path) == len(migrations.MIGRATIONS)
    conn = db.connect(path)
    try:
        found = {r["resource_id"]: dict(r) for r in conn.execute("SELECT * FROM resource_origins")}
        assert set(found) == {ids["copy"], ids["harvested"], ids["orphan"]}
        assert (found[ids["copy"]]["kind"], found[ids["copy"]]["original_id"], found[ids["copy"]]["title"]) == (
            "copy", ids["original"], "Original")
        harvested = found[ids["harvested"]]
        assert (harvested["kind"], harvested["harvester"], harvested["remote_url"], harvested["title"], harvested["url"]) == (
            "harvested", "central", "https://central.example.org", "Harvested there",
            "https://central.example.org/catalogue/#/document/4")
        assert (found[ids["orphan"]]["kind"], found[ids["orphan"]]["harvester_id"]) == ("harvested", None)
        source = {r[0]: r[1] for r in conn.execute(f"SELECT r.id, {SOURCE_SQL} FROM resources r")}
        assert source == {ids["original"]: "local", ids["copy"]: "copy", ids["failed"]: "local",
                          ids["harvested"]: "harvested", ids["orphan"]: "harvested", ids["plain"]: "local"}
        # the original and the harvester go; what the copies remember stays
        with conn:
            conn.execute("DELETE FROM resources WHERE id = ?", (ids["original"],))
            conn.execute("DELETE FROM harvesters")
        after = {r["resource_id"]: dict(r) for r in conn.execute("SELECT * FROM resource_origins")}
        assert (after[ids["copy"]]["original_id"], after[ids["copy"]]["title"]) == (None, "Original")
        assert (after[ids["harvested"]]["harvester_id"], after[ids["harvested"]]["harvester"]) == (None, "central")
    finally:
        conn.close()

