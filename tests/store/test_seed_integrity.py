"""The seed's bulk paths leave a valid database: SQLite's own checks pass, the extent and text
indexes hold exactly the seeded rows (the store's search and extent queries find them), and
seeding on top of a catalogue leaves its rows as they were.

Three loads on one file: a fresh one (the extent index is packed), a small one on top (entries
go in row by row) and a larger one on top (the whole extent index is packed again).
"""

from __future__ import annotations

import sqlite3

import pytest

from catalogue_app.bootstrap import prepare
from catalogue_app.config import load_settings
from catalogue_app.store import db, resources, users
from catalogue_app.store.filters import ListSpec
from catalogue_app.store.seed import seed_resources

ADMIN = resources.Viewer(1, True)
TABLES = {
    "resources": "SELECT * FROM resources ORDER BY id",
    "resource_perms": "SELECT * FROM resource_perms ORDER BY resource_id, group_id, user_id, perm",
    "resource_keywords": "SELECT * FROM resource_keywords ORDER BY resource_id, keyword_id",
    "resource_regions": "SELECT * FROM resource_regions ORDER BY resource_id, region_id",
    "resource_extents": "SELECT * FROM resource_extents ORDER BY id",
}


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    settings = load_settings(environ={"CATALOGUE_ADMIN_PASSWORD": "seed-admin-1"},
                             data_dir=tmp_path_factory.mktemp("seed") / "data")
    prepare(settings)
    with db.transaction(settings.database_path) as conn:
        for i in range(5):
            users.create(conn, {"username": f"owner{i}", "email": f"owner{i}@example.org", "password": "x"})
    return settings.database_path


def snapshot(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    return {name: [tuple(r) for r in conn.execute(sql)] for name, sql in TABLES.items()}


def check(conn: sqlite3.Connection) -> None:
    assert [tuple(r) for r in conn.execute("PRAGMA integrity_check")] == [("ok",)]
    assert not conn.execute("PRAGMA foreign_key_check").fetchall()
    conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES ('integrity-check', 1)")
    assert conn.execute("SELECT rtreecheck('resource_extents')").fetchone()[0] == "ok"
    # one extent entry per resource, the same as SQLite's R*Tree makes of the row's box
    conn.execute("CREATE VIRTUAL TABLE temp.expected USING rtree(id, minx, maxx, miny, maxy)")
    try:
        conn.execute("INSERT INTO temp.expected SELECT id * 2, ll_x0, ll_x1, ll_y0, ll_y1 FROM resources")
        assert [tuple(r) for r in conn.execute("SELECT * FROM resource_extents ORDER BY id")] == \
            [tuple(r) for r in conn.execute("SELECT * FROM temp.expected ORDER BY id")]
    finally:
        conn.execute("DROP TABLE temp.expected")


def found(conn: sqlite3.Connection, query: resources.ResourceQuery) -> set[int]:
    total, rows = resources.page(conn, ADMIN, query, 100_000, 0)
    assert total == len(rows)
    return {r["id"] for r in rows}


def check_queries(conn: sqlite3.Connection) -> None:
    rows = conn.execute("SELECT id, title, abstract, ll_x0, ll_y0, ll_x1, ll_y1 FROM resources").fetchall()
    for term in ("river", "Kraków", "ZÜRICH", "école", "survey of"):
        term_cf = term.casefold()
        expected = {r["id"] for r in rows if term_cf in r["title"].casefold() or term_cf in r["abstract"].casefold()}
        assert expected, term
        query = resources.ResourceQuery(spec=ListSpec(search_terms=[term], search_fields=["title", "abstract"]))
        assert found(conn, query) == expected, term
    some = rows[len(rows) // 3]  # one row's own title finds that row, among others
    query = resources.ResourceQuery(spec=ListSpec(search_terms=[some["title"]], search_fields=["title"]))
    assert some["id"] in found(conn, query)
    for box in ((5.9, 45.8, 10.5, 47.8), (-20.0, -40.0, 55.0, 40.0), (100.0, -10.0, 160.0, 30.0)):
        x0, y0, x1, y1 = box
        surely = {r["id"] for r in rows if r["ll_x0"] <= x1 - 1e-4 and r["ll_x1"] >= x0 + 1e-4
                  and r["ll_y0"] <= y1 - 1e-4 and r["ll_y1"] >= y0 + 1e-4}
        maybe = {r["id"] for r in rows if r["ll_x0"] <= x1 + 1e-4 and r["ll_x1"] >= x0 - 1e-4
                 and r["ll_y0"] <= y1 + 1e-4 and r["ll_y1"] >= y0 - 1e-4}
        got = found(conn, resources.ResourceQuery(extents=[box]))
        assert surely and surely <= got <= maybe, box


@pytest.mark.parametrize("count", [3000, 200, 4000])
def test_each_load_leaves_a_valid_database_whose_indexes_find_every_row(path, count):
    with db.transaction(path) as conn:
        before = snapshot(conn)
        first = seed_resources(conn, count, seed=count)
    conn = db.connect(path)
    try:
        check(conn)
        after = snapshot(conn)
        for name, rows in before.items():  # the rows already there are untouched
            assert [r for r in after[name] if r[0] < (2 * first if name == "resource_extents" else first)] == rows, name
        assert conn.execute("SELECT count(*) FROM resources WHERE id >= ?", (first,)).fetchone()[0] == count
        check_queries(conn)
    finally:
        conn.close()


def test_a_write_after_the_load_keeps_the_indexes_in_step(path):
    """The triggers are back: an edit, a new row and a delete keep both indexes right."""
    with db.transaction(path) as conn:
        rid = conn.execute("SELECT max(id) FROM resources").fetchone()[0]
        conn.execute("UPDATE resources SET title = 'Quagga sightings', ll_x0 = 1, ll_x1 = 2 WHERE id = ?", (rid,))
        conn.execute("DELETE FROM resources WHERE id = ?", (rid - 1,))
    conn = db.connect(path)
    try:
        check(conn)
        query = resources.ResourceQuery(spec=ListSpec(search_terms=["quagga"], search_fields=["title"]))
        assert found(conn, query) == {rid}
    finally:
        conn.close()
