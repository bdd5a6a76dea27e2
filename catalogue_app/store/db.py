"""The SQLite database: one writer thread, per-thread readers, numbered migrations.

Every write is a function handed to the single writer thread, which runs it inside
``BEGIN IMMEDIATE ... COMMIT``; callers await the result. Writes inside a process are therefore
serialised by construction, and writes of other processes wait on SQLite's lock (busy timeout).
Writes that queue up while one runs go in together: one transaction, each write in a savepoint
of its own (a failing one is rolled back alone), answered after the one commit (a group commit:
under load, the lock is taken and the log written once for several writes).
Between writes, when its queue is empty, the writer does the database's upkeep in small steps
(merging the text index), and a thread of its own copies the write-ahead log into the database
file (a checkpoint, with its fsync) every CHECKPOINT_EVERY seconds while writes go on, so that
no write has to do either at once.
Reads run on a connection owned by the calling thread, inside a read transaction so that a count
and the page it belongs to come from the same snapshot. There is one way to read: ``await
db.read(fn, *args)`` from async code, which runs ``fn(conn, *args)`` on the event loop's thread when
reads like it have lately cost little, else on a small pool of reader threads (so that a slow
search never holds the loop while other requests wait); and ``db.read_sync(fn, *args)``, the same
on the calling thread, for code that is already on a thread of its own (jobs, renderers, the
command line). What reads derive from the database (counts, rendered records) the owner keeps
until the data change (``kept``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from catalogue_app.store import cql2_sql, text_index

try:
    import fcntl
except ImportError:  # Windows, where one process serves (the single executable)
    fcntl = None
from catalogue_app.store.migrations import MIGRATIONS, count_changes, statements

T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000
READ_THREADS = 4  # reader threads per process: SQLite reads in parallel, the GIL is released in its C code
QUICK_READ = 0.002  # seconds of CPU: reads alike that lately took less run on the event loop's thread
SLOW_SPELL = 1.0  # seconds: after one read took much longer, reads like it go to a thread that long
LONG_READ = 4 * QUICK_READ  # seconds of CPU: a read that took longer starts such a spell (a recount after a
# write does; a garbage collection or a cold cache during a cheap read does not)
MAX_KINDS_TIMED = 4096  # kinds of reads whose cost is remembered
CHECKPOINT_EVERY = 0.5  # seconds between checkpoints of the write-ahead log while writes go on
UPKEEP_PAUSE = 0.01  # seconds without a write before, and between, steps of upkeep
UPKEEP_EVERY = 8  # writes after which one step of upkeep is done even if more are waiting
GROUP_MAX = 32  # writes that go in one transaction at most
GROUP_TIME = 0.005  # seconds: no waiting write joins a transaction that has run that long
# Steps of upkeep, each run in a transaction of its own; each returns whether work remains.
UPKEEP_STEPS: tuple[Callable[[sqlite3.Connection], bool], ...] = (text_index.merge_step,)

log = logging.getLogger(__name__)


class WriteConflict(Exception):
    """A write broke a uniqueness or reference rule; the message names it."""


def _casefold(value: object) -> object:
    return value.casefold() if isinstance(value, str) else value


@functools.lru_cache(maxsize=256)
def _pattern(expression: str) -> re.Pattern:
    return re.compile(expression)


def _regexp(expression: str, value: object) -> bool:
    return isinstance(value, str) and _pattern(expression).search(value) is not None


class Connection(sqlite3.Connection):
    """A connection that knows the database owner whose reader it is (``owner``), so that reads
    on it may use what the owner keeps (``kept``)."""

    owner: "Database | None" = None  # set on the reader connections of a Database
    versions: tuple[int, int, int] | None = None  # the change counts seen in this read transaction
    current: dict[str, dict[Any, Any]]  # the kept dicts of this read transaction, by kind


# What kept values of each kind depend on: a position in Connection.versions (data_changes,
# then the favorites and jobs rows of kind_changes).
DEPENDS = {"data": (0,), "favorites": (0, 1), "jobs": (0, 2), "all": (0, 1, 2)}
VERSIONS = ("SELECT (SELECT n FROM data_changes),"
            " (SELECT n FROM kind_changes WHERE kind = 'favorites'),"
            " (SELECT n FROM kind_changes WHERE kind = 'jobs')")


def kept(conn: sqlite3.Connection, kind: str = "data") -> dict[Any, Any]:
    """The dict in which reads keep what they derived from the database (counts, rendered
    records, whole answers). It belongs to the database owner, and is shared by all its reader
    connections whose read transaction sees the same data; it is emptied as soon as a
    connection has committed a change of data (triggers count them in ``data_changes``; merges
    of the text index, sessions and tokens are not counted), so that nothing kept outlives the
    rows it came from. Values derived from favorites or execution requests go in the dict of
    their ``kind`` ("favorites", "jobs"), which changes of those tables empty too, while the
    others ("data") stay (migrations.KINDS). Call it inside the read transaction whose
    snapshot the kept values come from. Any other connection (the writer's own, which reads
    its own uncommitted writes) keeps nothing: it gets a new, empty dict."""
    owner = conn.owner if isinstance(conn, Connection) else None
    if owner is None or not conn.in_transaction:
        return {}
    if conn.versions is None:  # one look at the counts per transaction: its snapshot holds
        conn.versions = conn.execute(VERSIONS).fetchone()
        conn.current = {}
    found = conn.current.get(kind)
    if found is None:
        found = conn.current[kind] = owner._kept_at(kind, tuple(conn.versions[i] for i in DEPENDS[kind]))
    return found


def connect(path: Path | str, *, readonly: bool = False) -> Connection:
    """A connection with the pragmas and SQL functions (ci, REGEXP, meets_box, unaccent) every query may use."""
    conn = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000,
        factory=Connection,
    )
    conn.row_factory = sqlite3.Row
    conn.create_function("ci", 1, _casefold, deterministic=True)
    conn.create_function("regexp", 2, _regexp, deterministic=True)
    conn.create_function("meets_box", 5, cql2_sql.meets_box, deterministic=True)  # CQL2 S_INTERSECTS
    conn.create_function("unaccent", 1, cql2_sql.unaccent, deterministic=True)  # CQL2 ACCENTI
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -65536")
    conn.execute("PRAGMA temp_store = MEMORY")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    return conn


@contextlib.contextmanager
def transaction(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A short-lived connection in one write transaction (command line, start-up)."""
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()


@contextlib.contextmanager
def savepoint(conn: sqlite3.Connection) -> Iterator[None]:
    """A part of the caller's write transaction that is rolled back alone if the block raises
    (the exception goes on; what was written before the block stays)."""
    conn.execute("SAVEPOINT part")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK TO part")
        conn.execute("RELEASE part")
        raise
    conn.execute("RELEASE part")


def migrate(path: Path | str, upto: int | None = None) -> int:
    """Bring the database file up to the newest schema (or to schema ``upto``, as an older
    version left it: for tests of upgrades); returns the schema version."""
    conn = connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        # Steps may rebuild a table (create, copy, drop, rename): with foreign keys on, dropping
        # the old one would cascade into the rows that refer to it. (Only settable outside a
        # transaction.)
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for number, step in enumerate(MIGRATIONS[:upto], start=1):
                if number <= version:
                    continue
                if callable(step):
                    step(conn)
                else:
                    for statement in statements(step):
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
                version = number
            count_changes(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return version
    finally:
        conn.close()


class WriterTurns:
    """A lock file that the writers of every server process take before ``BEGIN IMMEDIATE`` and
    let go after ``COMMIT``. A writer waiting for another process's transaction is woken as soon
    as it ends, where SQLite's busy handler sleeps in growing steps (up to 100 ms) between tries.
    Writers that do not take it (the command line) still meet SQLite's own lock and its busy
    timeout. Where the platform has no ``flock`` it does nothing."""

    def __init__(self, path: Path):
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if fcntl is not None else None

    def __enter__(self) -> None:
        self.take(wait=True)

    def __exit__(self, *exc: object) -> None:
        self.give()

    def take(self, wait: bool) -> bool:
        """Take the lock, waiting for it or not; whether this writer has it."""
        if self._fd is None:
            return True
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def give(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Database:
    """Owns the database file: the writer thread and the reader connections."""

    def __init__(self, path: Path | str, read_threads: int = READ_THREADS):
        self.path = Path(path)
        self._read_pool = concurrent.futures.ThreadPoolExecutor(read_threads, thread_name_prefix="sqlite-reader")
        self._costs: dict[Any, float] = {}  # recent CPU time of reads, by what they are like
        self._slow_until: dict[Any, float] = {}  # until when reads like that go to a thread
        self._kept: dict[str, tuple[tuple[int, ...], dict[Any, Any]]] = {}  # by kind: (version, values)
        self._kept_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_loop, name="sqlite-writer", daemon=True)
        self._written = threading.Event()  # set by the writer after a commit
        self._closing = threading.Event()
        self._checkpointer = threading.Thread(target=self._checkpoint_loop, name="sqlite-checkpointer", daemon=True)
        self._closed = False
        self._held_back: tuple | None = None  # a job outside a transaction, met while grouping writes
        self._writer.start()
        self._checkpointer.start()

    # -- reads -------------------------------------------------------------------------------
    def _reader(self) -> Connection:
        """This thread's reader connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, readonly=True)
            conn.owner = self
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def _kept_at(self, kind: str, version: tuple[int, ...]) -> dict[Any, Any]:
        """The dict of ``kind`` kept for the data at ``version``; another version starts a new
        one (each dict only ever holds values read at its own version)."""
        held = self._kept.get(kind)
        if held is not None and held[0] == version:
            return held[1]
        with self._kept_lock:
            held = self._kept.get(kind)
            if held is None or held[0] != version:
                held = self._kept[kind] = (version, {})
            return held[1]

    def kept(self, conn: sqlite3.Connection, kind: str = "data") -> dict[Any, Any]:
        """``kept(conn, kind)``: what this owner keeps for reads on its reader connections."""
        return kept(conn, kind)

    def read_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(conn, *args)`` in one read transaction on this thread's connection, for code that
        runs on a thread of its own. A read inside another joins its snapshot."""
        conn = self._reader()
        if conn.in_transaction:
            return fn(conn, *args)
        conn.execute("BEGIN")
        conn.versions = None
        try:
            return fn(conn, *args)
        finally:
            conn.execute("COMMIT")

    async def read(self, fn: Callable[..., T], *args: Any, like: Any = None) -> T:
        """``read_sync(fn, *args)``, awaited: on the event loop's thread when reads like it
        (``like``, by default those of the same function) have lately cost little, else on a
        reader thread, so that the loop serves other requests meanwhile (see ``_quick``)."""
        key = like if like is not None else getattr(fn, "__code__", fn)
        if self._quick(key):
            return self._timed(key, fn, args)
        return await asyncio.wrap_future(self._read_pool.submit(self._timed, key, fn, args))

    def _quick(self, key: Any) -> bool:
        """Whether a read may run on the event loop's own thread: when reads alike took less
        than QUICK_READ seconds of CPU lately and none took longer than LONG_READ in the last
        SLOW_SPELL.
        Handing a read to a thread costs a switch of the GIL each way, which under load halves
        what a worker serves, and for a small query costs more than the query; a read of
        unknown cost goes to a thread, and so does, for a while, one that just took long (a text
        search in a large catalogue; a page whose count a write made stale: while writes keep
        coming, its recounts would hold the loop)."""
        cost = self._costs.get(key)
        return cost is not None and cost < QUICK_READ and time.monotonic() >= self._slow_until.get(key, 0.0)

    def _timed(self, key: Any, fn: Callable[..., T], args: tuple) -> T:
        """Run the read and remember what it cost: the CPU time of this thread, which the waits
        for the GIL under load do not inflate (opening this thread's connection is not counted)."""
        self._reader()
        started = time.thread_time()
        try:
            return self.read_sync(fn, *args)
        finally:
            # one long sample (a garbage collection, a first count) weighs at most 3x the limit:
            # reads that cost more only once in a while stay on the loop's thread
            took = time.thread_time() - started
            if took > LONG_READ:  # it may be long again soon (a count after a write): a thread's, for a while
                self._slow_until[key] = time.monotonic() + SLOW_SPELL
            took = min(took, 3 * QUICK_READ)
            known = self._costs.get(key)
            if len(self._costs) > MAX_KINDS_TIMED:  # keys made of queries' shapes: bounded
                self._costs.clear()
            self._costs[key] = took if known is None else known * 0.8 + took * 0.2

    # -- writes ------------------------------------------------------------------------------
    def _write_loop(self) -> None:
        conn = connect(self.path)
        turns = WriterTurns(self.path.with_name(self.path.name + "-writer.lock"))
        # the checkpoints are the checkpointer's (a commit that crosses SQLite's threshold would
        # otherwise copy the log and fsync before the write is answered)
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        upkeep, writes = False, 0  # whether writes have left upkeep to do; writes since a step
        try:
            while True:
                if self._held_back is not None:
                    job, self._held_back = self._held_back, None
                elif upkeep:  # a pause first: a burst of writes goes before the upkeep
                    try:
                        job = self._jobs.get(timeout=UPKEEP_PAUSE)
                    except queue.Empty:
                        upkeep, writes = self._upkeep(conn, turns), 0
                        continue
                else:
                    job = self._jobs.get()
                if job is None:
                    return
                if len(job) == 4:  # outside a transaction (maintenance_sync)
                    with turns:
                        self._run_outside(conn, job)
                    self._written.set()
                    continue
                with turns:
                    done, closing = self._run_writes(conn, job)
                self._written.set()
                if closing:
                    return
                upkeep, writes = True, writes + done
                if writes >= UPKEEP_EVERY:  # never idle: upkeep still gets a step now and then
                    self._upkeep(conn, turns)
                    writes = 0
        finally:
            turns.close()
            conn.close()

    def _checkpoint_loop(self) -> None:
        """A passive checkpoint after writes: it copies what no reader still needs, and neither
        waits for nor holds up the writers (of this process or another)."""
        conn = connect(self.path)
        try:
            while not self._closing.wait(CHECKPOINT_EVERY):
                if not self._written.is_set():
                    continue
                self._written.clear()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as exc:  # tried again after the next write
                    log.warning("checkpoint of the write-ahead log failed: %s", exc)
        finally:
            conn.close()

    def _run_writes(self, conn: sqlite3.Connection, job: tuple) -> tuple[int, bool]:
        """Run ``job`` and the writes queued behind it (up to GROUP_MAX, while the transaction
        is younger than GROUP_TIME) in one transaction, each in a savepoint; answer them once it
        is committed. Returns how many ran and whether the queue said to close."""
        ran: list[tuple[tuple, bool, Any]] = []  # (job, ok, result or exception)
        closing = False
        try:
            conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:  # the database cannot be written: this write fails, alone
            self._answer(job, False, exc)
            return 1, False
        started = time.monotonic()
        undone = False  # whether a write's failure made SQLite roll the whole transaction back
        try:
            while True:
                if job[2].running() or job[2].set_running_or_notify_cancel():  # (running: a write sent again)
                    ran.append((job, *self._run_part(conn, job)))
                    undone = not conn.in_transaction  # (a full disk...)
                    if undone:
                        break
                if len(ran) >= GROUP_MAX or time.monotonic() - started > GROUP_TIME:
                    break
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    closing = True
                    break
                if len(job) == 4:  # runs alone, after this group's commit
                    self._held_back = job
                    break
            if conn.in_transaction:
                conn.execute("COMMIT")
        except BaseException as exc:  # the commit failed: nothing of the group was written
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            ran = [(j, False, exc) for j, _, _ in ran]
        else:
            if undone and len(ran) > 1:
                # the last write's failure undid the others too: they go again, each alone
                failed = ran.pop()
                for j, _, _ in ran:
                    self._jobs.put(j)
                if closing:  # they run before the writer closes
                    self._jobs.put(None)
                    closing = False
                ran = [failed]
        for j, ok, outcome in ran:
            self._answer(j, ok, outcome)
        return len(ran), closing

    @staticmethod
    def _run_part(conn: sqlite3.Connection, job: tuple) -> tuple[bool, Any]:
        """One write of a group, in a savepoint: (True, its result) or (False, its exception)."""
        fn, args, _ = job
        conn.execute("SAVEPOINT write")
        try:
            result = fn(conn, *args)
        except BaseException as exc:  # handed to the caller, never lost
            if conn.in_transaction:
                conn.execute("ROLLBACK TO write")
                conn.execute("RELEASE write")
            return False, WriteConflict(str(exc)) if isinstance(exc, sqlite3.IntegrityError) else exc
        conn.execute("RELEASE write")
        return True, result

    @staticmethod
    def _run_outside(conn: sqlite3.Connection, job: tuple) -> None:
        """A job of maintenance_sync: ``fn(conn, *args)`` on the writer's connection, in no
        transaction; one it leaves open is rolled back."""
        fn, args, future, _ = job
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = fn(conn, *args)
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            future.set_exception(exc)
            return
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        future.set_result(result)

    @staticmethod
    def _answer(job: tuple, ok: bool, outcome: Any) -> None:
        future = job[2]
        if future.done():
            return
        if ok:
            future.set_result(outcome)
        else:
            future.set_exception(outcome)

    @staticmethod
    def _upkeep(conn: sqlite3.Connection, turns: WriterTurns) -> bool:
        """One step of each kind of upkeep, each in a short transaction of its own (another
        process's writer may take the lock between them); whether any work remains. When
        another process is writing, the upkeep waits for a later turn rather than for it."""
        remaining = False
        for step in UPKEEP_STEPS:
            if not turns.take(wait=False):
                remaining = True
                continue
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    remaining = step(conn) or remaining
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:  # the next write brings it back; writes go on meanwhile
                log.warning("database upkeep (%s) failed: %s", step.__name__, exc)
            finally:
                turns.give()
        return remaining

    def submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        if self._closed:
            raise RuntimeError("the database is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fn, args, future))
        return future

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(conn, *args)`` in one write transaction on the writer thread."""
        return await asyncio.wrap_future(self.submit(fn, *args))

    def write_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """The blocking form of write(), for the command line and start-up."""
        return self.submit(fn, *args).result()

    def maintenance_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(conn, *args)`` on the writer's connection outside any transaction, between two
        writes (the writers of other processes wait for it too: it holds the writer lock file), and
        return its result. For the statements SQLite refuses inside a transaction: VACUUM, a
        checkpoint that truncates the log. ``fn`` opens and ends any transaction it needs itself."""
        if self._closed:
            raise RuntimeError("the database is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fn, args, future, "outside"))
        return future.result()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._read_pool.shutdown(wait=True, cancel_futures=True)
        self._jobs.put(None)
        self._writer.join(timeout=10)
        self._closing.set()
        self._checkpointer.join(timeout=10)
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    pass
            self._readers.clear()
