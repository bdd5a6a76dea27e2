"""The R*Tree of the extents of the resources that anonymous callers list (migration 28): made
and filled on a catalogue made before it, then kept by triggers (tests/store/test_list_queries.py
follows it through every kind of change). Its entries' ids start with the hour the resource
was created, so that the newest in a box are found among a few entries."""

from __future__ import annotations

import re
import sqlite3

from catalogue_app.api.resources.params import resource_query
from catalogue_app.passwords import hash_password
from catalogue_app.seeding.resources import seed_resources
from catalogue_app.store import db, migrations, resource_writes, resources, users

BEFORE = migrations.MIGRATIONS.index(migrations.listed_extents)  # the schema version before it


def listed_entries(conn: sqlite3.Connection) -> dict[int, tuple[float, float, float, float]]:
    """The entries the index should hold, by id, made in Python from the resources as they are."""
    want = {}
    for rid, created, x0, y0, x1, y1 in conn.execute(
            f"SELECT id, created, ll_x0, ll_y0, ll_x1, ll_y1 FROM resources r WHERE {resources.ANONYMOUS_LISTING}"):
        found = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d)", created, re.ASCII)
        y, m, d, h = map(int, found.groups()) if found else (0, 0, 0, 0)
        hour = ((y * 12 + m - 1) * 31 + d - 1) * 24 + h if found and 1 <= m <= 12 and 1 <= d <= 31 and h <= 23 else 0
        first = hour << migrations.LISTED_EXTENT_SHIFT | rid << 1
        if x0 is None:
            want[first] = (-180, 180, -90, 90)
        elif x0 > x1:
            want[first], want[first + 1] = (x0, 180, y0, y1), (-180, x1, y0, y1)
        else:
            want[first] = (x0, x1, y0, y1)
    return want


def assert_in_step(conn: sqlite3.Connection) -> None:
    want = listed_entries(conn)
    kept = {r[0]: tuple(r[1:]) for r in conn.execute("SELECT id, minx, maxx, miny, maxy FROM listed_extents")}
    assert set(kept) == set(want)
    for entry, box in kept.items():  # (float32, rounded outwards)
        assert all(abs(a - b) < 1e-4 for a, b in zip(box, want[entry]))
    assert conn.execute("SELECT rtreecheck('listed_extents')").fetchone()[0] == "ok"


def test_a_catalogue_made_before_gets_its_listed_extents(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    db.migrate(path, upto=BEFORE)
    with db.transaction(path) as conn:
        users.create(conn, {"username": "keeper", "email": "k@example.org", "password": hash_password("pw-123456")})
        seed_resources(conn, 800, seed=5, public_share=0.7)
        ids = [r[0] for r in conn.execute("SELECT id FROM resources")]
        resource_writes.update(conn, ids[0], {"ll_x0": 170.0, "ll_y0": -10.0, "ll_x1": -170.0, "ll_y1": 10.0})
        resource_writes.update(conn, ids[1], {"advertised": 0})
        conn.execute("UPDATE resources SET dirty = 1 WHERE id = ?", (ids[2],))
        conn.execute("UPDATE resources SET created = 'yesterday' WHERE id = ?", (ids[3],))
    assert db.migrate(path) == len(migrations.MIGRATIONS)
    conn = db.connect(path)
    try:
        assert len(listed_entries(conn)) > 400
        assert_in_step(conn)
        anonymous = resources.viewer_of(conn, None)
        for box in ("-180,-90,180,90", "160,-20,-160,20", "5,40,25,60"):
            query, _, _ = resource_query([("extent", box)], None, ())
            cond, params, _, driver = resources._conditions(conn, anonymous, query)
            counted = conn.execute(f"SELECT count(*) FROM ({driver[0].sql}) c JOIN resources r ON r.id = c.id"
                                   f" WHERE {cond}", driver[0].params + params).fetchone()[0]
            total, rows = resources.page(conn, anonymous, query, 10, 0)
            assert total == counted and len(rows) == min(counted, 10)
    finally:
        conn.close()


def test_the_listed_extents_stand_for_what_anonymous_callers_list():
    for row in ("NEW", "OLD"):
        assert migrations.LISTED_ROW.format(row) == resources.ANONYMOUS_LISTING.replace("r.", f"{row}.")
