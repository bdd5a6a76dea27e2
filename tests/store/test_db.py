"""The database owner: where reads run (the event loop's thread or a reader thread) and the
snapshot a handler's reads share."""

from __future__ import annotations

import asyncio
import threading

import pytest

from catalogue_app.store import db as store_db
from catalogue_app.store.db import SLOW_SPELL, Database, WriteConflict, connect, migrate
from tests.conftest import LOOP_THREAD, run_loop


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    database = Database(path, read_threads=2)
    yield database
    database.close()


def where(_conn=None) -> str:
    return threading.current_thread().name


HEAVY = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) SELECT count(*) FROM n"


def heavy(conn) -> int:
    return conn.execute(HEAVY).fetchone()[0]


def test_cheap_reads_move_to_the_loop_and_costly_ones_stay_off_it(db):
    async def main():
        first = await db.read(where)               # unknown cost: a reader thread
        later = await db.read(where)               # it took microseconds: the loop's thread
        await db.read(heavy)                       # tens of milliseconds of CPU
        return first, later

    first, later = run_loop(main())
    assert first.startswith("sqlite-reader") and later == LOOP_THREAD
    assert db._costs[heavy.__code__] > 0.002
    assert not db._quick(heavy.__code__)  # the next heavy read goes to a thread


def test_reads_alike_are_timed_together_whatever_function_runs_them(db):
    """A list read names what its cost depends on (``like``): a query shape that proved cheap
    runs on the loop, another shape of the same function that proved costly stays on a thread."""
    def read(conn, costly: bool) -> str:
        if costly:
            conn.execute(HEAVY).fetchone()
        return threading.current_thread().name

    async def main():
        await db.read(read, False, like="small")
        small = await db.read(read, False, like="small")
        await db.read(read, True, like="large")
        large = await db.read(read, False, like="large")
        return small, large

    small, large = run_loop(main())
    assert small == LOOP_THREAD and large.startswith("sqlite-reader")


def test_the_loop_keeps_running_while_a_slow_read_runs(db):
    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.01)
        before = ticks
        assert await db.read(heavy) == 3_000_000  # its cost unknown: a reader thread
        after = ticks
        ticker.cancel()
        return after - before

    assert run_loop(main()) >= 5


def test_reads_inside_a_read_share_its_snapshot(db):
    db.write_sync(lambda conn: conn.execute("INSERT INTO keywords (name, slug) VALUES ('a', 'a')"))

    def count(conn) -> int:
        return conn.execute("SELECT count(*) FROM keywords").fetchone()[0]

    def handler(conn) -> tuple[int, int, bool]:
        first = db.read_sync(count)
        db.write_sync(lambda conn: conn.execute("INSERT INTO keywords (name, slug) VALUES ('b', 'b')"))
        second = count(conn)
        return first, second, conn.in_transaction

    async def main():
        return await db.read(handler)

    first, second, inside = run_loop(main())
    assert first == second == 1 and inside  # the write made meanwhile is not half-seen
    assert db.read_sync(count) == 2


def test_a_cheap_read_that_once_took_long_runs_on_a_thread_for_a_while(db):
    """A page whose count a write made stale takes long once; while writes keep coming that
    repeats, so reads like it leave the loop for SLOW_SPELL, then come back."""
    sometimes_heavy = {"heavy": False}

    def page(conn) -> str:
        if sometimes_heavy["heavy"]:
            conn.execute(HEAVY).fetchone()
        return threading.current_thread().name

    async def main():
        await db.read(page)
        quick = await db.read(page)
        sometimes_heavy["heavy"] = True
        await db.read(page)                         # on the loop still: its cost was low
        sometimes_heavy["heavy"] = False
        after = await db.read(page)                 # right after a long one: a reader thread
        db._slow_until[page.__code__] -= 2 * SLOW_SPELL  # as if the spell were over
        later = await db.read(page)
        return quick, after, later

    quick, after, later = run_loop(main())
    assert quick == LOOP_THREAD and after.startswith("sqlite-reader") and later == LOOP_THREAD


def test_what_one_reader_keeps_the_others_find(db):
    """The owner keeps derived values for all its readers: one kept on a reader thread is found
    by a read on the loop's thread, while the data are unchanged."""
    def keep(conn, value=None):
        here = db.kept(conn)
        if value is not None:
            here["mark"] = value
        return here.get("mark"), threading.current_thread().name

    async def main():
        return await db.read(keep, "shared")  # unknown cost: a reader thread

    assert run_loop(main())[1].startswith("sqlite-reader")
    assert db.read_sync(keep) == ("shared", threading.current_thread().name)


def test_what_readers_keep_goes_with_data_changes_only(db):
    """Kept values (counts, rendered resources) are dropped when another connection commits a
    change of data, and kept across commits that change none: merges of the text index,
    sessions."""
    from catalogue_app.store import resource_writes, sessions, text_index, users

    owner = db.write_sync(lambda conn: users.create(conn, {"username": "owner", "password": ""}))
    rid = db.write_sync(resource_writes.create, "document", owner, {"title": "River atlas"})
    for n in range(30):  # segments for the text index to merge
        db.write_sync(resource_writes.update, rid, {"title": f"River atlas, edition {n}"})

    def keep(conn, value=None):
        kept_here = db.kept(conn)
        if value is not None:
            kept_here["mark"] = value
        return kept_here.get("mark")

    db.read_sync(keep, "kept")
    # it merged something (negative: whatever is there, as few segments as the writer's upkeep left)
    assert db.write_sync(lambda conn: text_index.merge_step(conn, -1000))
    db.write_sync(sessions.begin_attempt, "someone")  # a failed sign-in is counted for its name only
    assert db.read_sync(keep) == "kept"
    db.write_sync(resource_writes.update, rid, {"title": "Flood atlas"})
    assert db.read_sync(keep) is None


def test_values_kept_by_kind_go_with_their_tables(db):
    """What is derived from favorites or execution requests is kept with its kind: a favorite
    set or a request stored empties that kind's values, and leaves those of the other data;
    any other change of data empties them all."""
    from catalogue_app.store import resource_extras, resource_writes, users

    owner = db.write_sync(lambda conn: users.create(conn, {"username": "owner", "password": ""}))
    rid = db.write_sync(resource_writes.create, "document", owner, {"title": "River atlas"})

    def keep(conn, kind, value=None):
        kept_here = db.kept(conn, kind)
        if value is not None:
            kept_here["mark"] = value
        return kept_here.get("mark")

    def keep_all():
        for kind in ("data", "favorites", "jobs", "all"):
            db.read_sync(keep, kind, kind)

    def still() -> set[str]:
        return {kind for kind in ("data", "favorites", "jobs", "all") if db.read_sync(keep, kind) == kind}

    keep_all()
    db.write_sync(resource_extras.add_favorite, owner, rid)
    assert still() == {"data", "jobs"}
    keep_all()
    db.write_sync(lambda conn: conn.execute(
        "INSERT INTO execution_requests (exec_id, func_name, action, input_params, created, last_updated)"
        " VALUES ('e1', 'delete', 'delete', '{}', '', '')"))
    assert still() == {"data", "favorites"}
    keep_all()
    db.write_sync(resource_writes.update, rid, {"title": "Flood atlas"})
    assert still() == set()


def test_counts_are_kept_with_the_kind_of_the_tables_they_read(db):
    """A kept count of a list that reads favorites (a user's favorites) or execution requests
    is recounted after those change; a count of resources is not."""
    from catalogue_app.store import filters

    sqls = {"data": "SELECT count(*) FROM resources",
            "favorites": "SELECT count(*) FROM favorites",
            "jobs": "SELECT count(*) FROM execution_requests e",
            "all": "SELECT (SELECT count(*) FROM favorites) + (SELECT count(*) FROM execution_requests)"}
    for kind, sql in sqls.items():
        db.read_sync(lambda conn: filters.remember_count(conn, sql, [], -1))
        assert db.read_sync(lambda conn: filters.known_count(conn, sql, [])) == -1
        assert db.read_sync(lambda conn: db.kept(conn, kind)["counts"][(sql, ())]) == [(-1,)]


def test_a_savepoint_rolls_back_its_part_only(db):
    from catalogue_app.store import users
    from catalogue_app.store.db import savepoint

    def write(conn):
        users.create(conn, {"username": "kept", "email": "kept@example.org", "password": ""})
        with pytest.raises(ValueError), savepoint(conn):
            users.create(conn, {"username": "dropped", "email": "dropped@example.org", "password": ""})
            raise ValueError("undo this part")
        with savepoint(conn):
            users.create(conn, {"username": "also kept", "email": "also@example.org", "password": ""})

    db.write_sync(write)
    names = {r[0] for r in db.read_sync(lambda conn: conn.execute("SELECT username FROM users").fetchall())}
    assert {"kept", "also kept"} <= names and "dropped" not in names


def _queued_behind_a_held_write(db, jobs, monkeypatch):
    """Submit ``jobs`` while the writer is held inside a first write, so that they queue and
    go in together once it is let go; returns their futures."""
    # All of them in one group, however slow this machine is now: the group's time limit (5 ms)
    # is for a server's short writes, and these open a connection of their own each.
    monkeypatch.setattr(store_db, "GROUP_TIME", 60.0)
    db.write_sync(lambda conn: conn.execute("CREATE TABLE marks (x INTEGER UNIQUE)"))
    holding, go = threading.Event(), threading.Event()

    def held(conn):
        holding.set()
        go.wait(10)

    first = db.submit(held)
    holding.wait(10)
    futures = [db.submit(job) for job in jobs]
    go.set()
    first.result(10)
    return futures


def _mark(x, fail=None):
    """A write that adds a mark, then fails as told; it answers how many marks an outside
    connection saw meanwhile (what earlier transactions committed)."""
    def job(conn):
        conn.execute("INSERT INTO marks (x) VALUES (?)", (x,))
        if fail == "raise":
            raise ValueError(f"mark {x} refused")
        if fail == "undo":  # as SQLite does on a full disk: the whole transaction rolled back
            conn.execute("ROLLBACK")
            raise OSError("disk full")
        outside = connect(job.path, readonly=True)
        try:
            return outside.execute("SELECT count(*) FROM marks").fetchone()[0]
        finally:
            outside.close()
    return job


def test_writes_queued_together_commit_together_and_fail_alone(db, monkeypatch):
    jobs = [_mark(1), _mark(2), _mark(3, "raise"), _mark(1), _mark(4)]  # the second 1 breaks UNIQUE
    for job in jobs:
        job.path = db.path
    futures = _queued_behind_a_held_write(db, jobs, monkeypatch)
    seen = [futures[i].result(10) for i in (0, 1, 4)]
    with pytest.raises(ValueError, match="mark 3 refused"):
        futures[2].result(10)
    with pytest.raises(WriteConflict, match="UNIQUE"):
        futures[3].result(10)
    assert seen == [0, 0, 0]  # one transaction: none saw another's mark committed
    assert db.read_sync(lambda conn: [r[0] for r in conn.execute("SELECT x FROM marks ORDER BY x")]) == [1, 2, 4]


def test_writes_undone_with_a_failing_one_go_again_alone(db, monkeypatch):
    jobs = [_mark(1), _mark(2), _mark(3, "undo"), _mark(4)]
    for job in jobs:
        job.path = db.path
    futures = _queued_behind_a_held_write(db, jobs, monkeypatch)
    assert futures[0].result(10) in (0, 1) and futures[1].result(10) in (0, 1, 2)
    with pytest.raises(OSError, match="disk full"):
        futures[2].result(10)
    futures[3].result(10)
    assert db.read_sync(lambda conn: [r[0] for r in conn.execute("SELECT x FROM marks ORDER BY x")]) == [1, 2, 4]
