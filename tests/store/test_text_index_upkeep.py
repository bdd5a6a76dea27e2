"""The text index (FTS5) is merged by the writer between writes, in small steps, never inside
an ordinary write (store/text_index.py, store/db.py)."""

from __future__ import annotations

import time

from catalogue_app.store import text_index, users
from catalogue_app.seeding import resources as seed
from catalogue_app.store.db import Database, migrate, transaction


def segments(conn) -> int:
    return conn.execute("SELECT count(DISTINCT segid) FROM resource_text_idx").fetchone()[0]


def resources(path, count: int) -> int:
    """``count`` made-up resources (and their owner); the first id."""
    with transaction(path) as conn:
        users.create(conn, {"username": "owner", "email": "owner@example.org", "password": "x"})
        return seed.seed_resources(conn, count)


def settings(conn) -> dict:
    return dict(conn.execute("SELECT k, v FROM resource_text_config").fetchall())


def test_writes_leave_merging_to_the_writer_s_idle_time(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    first = resources(path, 50)
    with transaction(path) as conn:
        assert settings(conn)["automerge"] == 0
    db = Database(path, read_threads=1)
    try:
        # each write adds a segment to the index; with writes back to back, none is merged
        for n in range(40):
            db.write_sync(lambda conn, n=n: conn.execute(
                "UPDATE resources SET title = ? WHERE id = ?", (f"Renamed lighthouse {n}", first + n)))
        deadline = time.monotonic() + 10
        while db.read_sync(segments) > 12 and time.monotonic() < deadline:
            time.sleep(0.05)  # the writer merges them once it has nothing else to do
        assert db.read_sync(segments) <= 12
        found = db.read_sync(lambda conn: conn.execute(
            "SELECT count(*) FROM resource_text WHERE resource_text MATCH '\"lighthouse\"'").fetchone()[0])
        assert found == 40
    finally:
        db.close()


def test_a_merge_step_says_whether_it_merged_anything(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    first = resources(path, 10)
    with transaction(path) as conn:
        conn.execute("UPDATE resources SET title = 'Title' WHERE id = ?", (first,))
    for n in range(20):  # a segment each
        with transaction(path) as conn:
            conn.execute("UPDATE resources SET title = ? WHERE id = ?", (f"Title {n}", first + n % 10))
    with transaction(path) as conn:
        assert segments(conn) >= 20
        steps = 0
        while text_index.merge_step(conn):
            steps += 1
            assert steps < 1000
        assert steps >= 1 and segments(conn) < 20
        assert not text_index.merge_step(conn)


def test_no_level_of_a_text_index_is_merged_whole_inside_a_write(tmp_path):
    """crisismerge (the segments of one level that make the next write merge them all) is far
    out of reach on a new catalogue and on one brought up from before migration 23."""
    fresh, upgraded = tmp_path / "fresh.sqlite3", tmp_path / "upgraded.sqlite3"
    migrate(fresh)
    migrate(upgraded, upto=22)
    with transaction(upgraded) as conn:  # as catalogues made before it hold them
        for table in text_index.TABLES:
            text_index.configure(conn, table, crisismerge=64)
    migrate(upgraded)
    for path in (fresh, upgraded):
        with transaction(path) as conn:
            for table in text_index.TABLES:
                config = dict(conn.execute(f"SELECT k, v FROM {table}_config").fetchall())
                assert config["crisismerge"] == 1000 and config["automerge"] == 0, (path.name, table)
