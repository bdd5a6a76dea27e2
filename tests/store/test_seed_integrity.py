"""The seed's bulk paths leave a valid database: SQLite's own checks pass, the extent and text
indexes hold exactly the seeded rows (the store's search and extent queries find them), every
index and trigger is back, and seeding on top of a catalogue leaves its rows as they were.

Loads on one file, each by `seed` (a transaction of its own; a large load's links and indexes
built by worker processes, or threads as in the single executable) or by `seed_resources` in the
caller's transaction: a fresh one (the extent index is packed), a small one on top (entries go
in row by row), larger ones on top (the links and the extent and text indexes built again
whole). A seed killed half-way leaves the catalogue as it was.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from catalogue_app.bootstrap import prepare
from catalogue_app.config import load_settings
from catalogue_app.store import db, resources, users
from catalogue_app.seeding import side as seed_side
from catalogue_app.store.filters import ListSpec
from catalogue_app.seeding.resources import KEYWORDS, seed, seed_resources

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


def schema(conn: sqlite3.Connection) -> set[tuple]:
    """Every table, index and trigger with its definition."""
    return {tuple(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")}


def changes(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT n FROM data_changes").fetchone()[0]


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
    # the counts of resources by type and state, as the triggers keep them
    assert [tuple(r) for r in conn.execute("SELECT * FROM resource_tally WHERE n <> 0 ORDER BY 1, 2, 3, 4")] == \
        [tuple(r) for r in conn.execute("SELECT resource_type, public_view, advertised, dirty, count(*) FROM resources"
                                        " GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4")]


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


@pytest.mark.parametrize("count, how", [(3000, "seed"), (200, "seed"), (4000, "seed"), (8000, "in a transaction"),
                                        (16000, "seed, its workers threads")])
def test_each_load_leaves_a_valid_database_whose_indexes_find_every_row(path, tmp_path, monkeypatch, count, how):
    conn = db.connect(path)
    try:
        before, shape, counted = snapshot(conn), schema(conn), changes(conn)
    finally:
        conn.close()
    if how.startswith("seed"):
        monkeypatch.setattr(seed_side, "FROZEN", how.endswith("threads"))  # as in the single executable
        first = seed(path, count, seed=count, scratch=tmp_path)
        assert not list(tmp_path.iterdir()), "the scratch database is removed"
    else:
        with db.transaction(path) as conn:
            first = seed_resources(conn, count, seed=count)
    conn = db.connect(path)
    try:
        check(conn)
        assert schema(conn) == shape  # every index and trigger dropped for the load is back
        # readers drop what they kept: counted once for the load (and once per keyword it adds)
        assert counted < changes(conn) <= counted + 1 + len(KEYWORDS)
        after = snapshot(conn)
        for name, rows in before.items():  # the rows already there are untouched
            assert [r for r in after[name] if r[0] < (2 * first if name == "resource_extents" else first)] == rows, name
        assert conn.execute("SELECT count(*) FROM resources WHERE id >= ?", (first,)).fetchone()[0] == count
        new = {r[0] for r in conn.execute("SELECT id FROM resources WHERE id >= ?", (first,))}
        for table in ("resource_perms", "resource_keywords", "resource_regions"):  # every new row has its links
            linked = {r[0] for r in conn.execute(f"SELECT resource_id FROM {table} WHERE resource_id >= ?", (first,))}
            assert linked <= new and (linked == new or table == "resource_perms"), table
        # the keywords of listed resources, as the triggers would have kept them
        assert [tuple(r) for r in conn.execute("SELECT keyword_id, resource_id FROM listed_keywords ORDER BY 1, 2")] == \
            [tuple(r) for r in conn.execute(
                "SELECT rk.keyword_id, rk.resource_id FROM resource_keywords rk JOIN resources r ON r.id = rk.resource_id"
                " WHERE r.public_view = 1 AND r.dirty = 0 AND r.advertised = 1 ORDER BY 1, 2")]
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


def test_a_seed_killed_half_way_leaves_the_catalogue_as_it_was(path):
    conn = db.connect(path)
    try:
        before, shape = snapshot(conn), schema(conn)
    finally:
        conn.close()
    data = path.parent
    env = {**os.environ, "CATALOGUE_ADMIN_PASSWORD": "seed-admin-1"}
    proc = subprocess.Popen([sys.executable, "-m", "catalogue_app", "seed", "--data-dir", str(data),
                             "--resources", "2000000"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # killed in the load: its scratch text index exists once the triggers and indexes are dropped
        scratch = data / "tmp" / f"seed-{proc.pid}" / "text.sqlite3"
        deadline = time.monotonic() + 60
        while not scratch.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        assert scratch.exists()
        time.sleep(1.5)
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    conn = db.connect(path)
    try:
        check(conn)
        assert snapshot(conn) == before and schema(conn) == shape
        check_queries(conn)
    finally:
        conn.close()


def test_a_load_built_alongside_after_other_changes_of_its_transaction_fails_whole(path, tmp_path):
    """What is built alongside reads the last commit: a transaction that changed resources
    before the load is refused rather than left with indexes and links that miss the change."""
    conn = db.connect(path)
    try:
        before = snapshot(conn)
        count = 2 * conn.execute("SELECT max(id) FROM resources").fetchone()[0]  # a large load
    finally:
        conn.close()
    with pytest.raises(RuntimeError, match="built alongside"), db.transaction(path) as conn:
        conn.execute("DELETE FROM resources WHERE id = (SELECT max(id) FROM resources)")
        seed_resources(conn, count, scratch=tmp_path)
    conn = db.connect(path)
    try:
        check(conn)
        assert snapshot(conn) == before
    finally:
        conn.close()


def _varint(block: bytes, i: int) -> tuple[int, int]:
    value = 0
    for k in range(9):
        byte = block[i]
        i += 1
        if k == 8:
            return (value << 8) | byte, i
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, i
    raise AssertionError("unreachable")


def segments_by_level(conn: sqlite3.Connection, table: str) -> list[int]:
    """How many segments each level of an FTS5 index holds, read from its structure record
    (row 10 of its _data table: a 4-byte cookie, the level and segment counts, a write counter,
    then per level a merge count, a segment count and three numbers per segment)."""
    block = conn.execute(f"SELECT block FROM {table}_data WHERE id = 10").fetchone()[0]
    levels, i = _varint(block, 4)
    _, i = _varint(block, i)
    _, i = _varint(block, i)
    out = []
    for _ in range(levels):
        _, i = _varint(block, i)
        count, i = _varint(block, i)
        for _ in range(3 * count):
            _, i = _varint(block, i)
        out.append(count)
    return out


@pytest.mark.parametrize("how", ["seed", "in a transaction"])
def test_a_large_load_leaves_no_text_index_segment_at_level_0(tmp_path, how):
    """A large load's text and word indexes end as one segment above level 0: a lone segment
    at level 0 would be merged with the few small ones that the next edits add, rewriting the
    whole index inside a client's write (measured: writes stalled for a second at 100,000)."""
    settings = load_settings(environ={"CATALOGUE_ADMIN_PASSWORD": "seed-secret-1"}, data_dir=tmp_path / "data")
    prepare(settings)
    if how == "seed":
        seed(settings.database_path, 30_000, scratch=tmp_path)
    else:
        with db.transaction(settings.database_path) as conn:
            seed_resources(conn, 30_000)
    conn = db.connect(settings.database_path)
    try:
        for table in ("resource_text", "resource_words"):
            levels = segments_by_level(conn, table)
            assert sum(levels) == 1 and levels[0] == 0, (table, levels)
    finally:
        conn.close()
