"""The write-ahead log is copied into the database file by a thread of its own after writes,
not by the commit that crosses SQLite's threshold (store/db.py)."""

from __future__ import annotations

import shutil
import sqlite3
import time

from catalogue_app.store import users
from catalogue_app.store.db import CHECKPOINT_EVERY, Database, migrate


def in_file_alone(path, tmp_path) -> int:
    """Users in the database file without its log: what checkpoints have copied there."""
    copy = tmp_path / "copy.sqlite3"
    shutil.copyfile(path, copy)
    conn = sqlite3.connect(copy)
    try:
        return conn.execute("SELECT count(*) FROM users WHERE username LIKE 'writer%'").fetchone()[0]
    finally:
        conn.close()


def test_writes_reach_the_database_file_soon_after(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    db = Database(path, read_threads=1)
    try:
        for n in range(20):
            db.write_sync(users.create, {"username": f"writer{n}", "email": f"w{n}@example.org", "password": "x"})
        deadline = time.monotonic() + 10 * CHECKPOINT_EVERY + 5
        while in_file_alone(path, tmp_path) < 20 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert in_file_alone(path, tmp_path) == 20
        assert db.read_sync(lambda conn: conn.execute("SELECT count(*) FROM users WHERE username LIKE 'writer%'")
                       .fetchone()[0]) == 20
    finally:
        db.close()


def test_the_writer_connection_leaves_checkpoints_to_the_checkpointer(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    db = Database(path, read_threads=1)
    try:
        assert db.write_sync(lambda conn: conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 0
    finally:
        db.close()
