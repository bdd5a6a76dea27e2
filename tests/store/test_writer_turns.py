"""Writers of several server processes take turns on a lock file around their transactions
(store/db.py WriterTurns): a waiting writer is woken when the other one commits."""

from __future__ import annotations

import threading
import time

from catalogue_app.store import users
from catalogue_app.store.db import Database, WriterTurns, migrate


def test_a_writer_holds_the_turn_for_its_transaction_only(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    db = Database(path, read_threads=1)
    other = WriterTurns(path.with_name(path.name + "-writer.lock"))  # as another process would
    try:
        assert db.write_sync(lambda conn: other.take(wait=False)) is False
        deadline = time.monotonic() + 5
        while not other.take(wait=False):  # the writer lets go once it has committed
            assert time.monotonic() < deadline
            time.sleep(0.01)
        other.give()
    finally:
        other.close()
        db.close()


def test_two_processes_writers_both_get_every_write_through(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    first, second = Database(path, read_threads=1), Database(path, read_threads=1)
    errors: list[BaseException] = []

    def write(db: Database, prefix: str) -> None:
        try:
            for n in range(40):
                db.write_sync(users.create, {"username": f"{prefix}{n}", "email": f"{prefix}{n}@example.org",
                                             "password": "x"})
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=write, args=(db, p)) for db, p in ((first, "a"), (second, "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors
        assert first.read_sync(lambda conn: conn.execute(
            "SELECT count(*) FROM users WHERE username GLOB '[ab][0-9]*'").fetchone()[0]) == 80
    finally:
        first.close()
        second.close()
