"""The part of a large load that is built alongside the writer, in processes of their own, for
`catalogue seed`: the text index (resource_text, FTS5 with trigrams), the word index
(resource_words) with the words of its vocabulary, the link tables (resource_perms,
resource_keywords, resource_regions, listed_keywords) and the extent index (resource_extents).

Indexing the text is the largest part of a seed's work, and the writer has its own. Two worker
processes build all of the above for the whole catalogue (the rows already there, read from the
last committed state, and the new rows, sent by the writer batch by batch through pipes) into
scratch databases holding the same tables, while the writer adds the resources themselves: one
the text index, which takes the longest, the other the rest, at a lower priority, in the time
that the writer and the first leave. Processes rather than threads: the writer's threads and a
thread indexing rows would take turns at Python's lock for every row, and use little more than
one core between them. (The single executable has no Python to start a module with: there the
workers are threads.)

The workers write three scratch databases, each in one transaction of a connection of its own:
the text index, the word index, and the other tables. Its own connection keeps an index's
rows in FTS5's memory until the commit, so that each index is written once, as one segment.
(SQLite has FTS5 write out what it holds whenever a statement that may change several rows
begins in the same transaction: such statements go to the other connections.) FTS5 puts a
segment it writes at level 0, where the first merge after a few edits would rewrite the whole
index inside a client's write (a stall of a second at 100,000 resources); `optimize` would
move it above, at the cost of rewriting it once more, so the worker moves it to level 1 in the
index's structure record instead (see lift). A load too large for FTS5's memory is written as
several segments, which `optimize` merges into one.

As each worker ends, the writer attaches its scratch databases and replaces the rows of these
tables (for the indexes, of their shadow tables) with the scratch tables'. The same library
wrote them for the same definitions and settings, and with its triggers off the writer's
`INSERT INTO t SELECT * FROM scratch.t` into an emptied table copies the rows and their index
entries as they are, without sorting or checking them again. The writer's connection must not have used the text,
word or extent index earlier in its transaction (FTS5 and the R*Tree keep what they read of an
index). `INSERT INTO resource_text(resource_text, rank) VALUES ('integrity-check', 1)` and
`SELECT rtreecheck('resource_extents')` check the result.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import numpy as np

from catalogue_app.seeding import extents as seed_extents
from catalogue_app.store.migrations import TEXT_COLUMNS, WORD_COLUMNS, WORD_VALUES

TEXT, WORDS = "resource_text", "resource_words"
LINKS = ("resource_perms", "resource_keywords", "resource_regions", "listed_keywords")
EXTENT_SHADOWS = tuple(f"{seed_extents.TABLE}_{shadow}" for shadow in ("node", "parent", "rowid"))
# The scratch databases (files text.sqlite3... in the scratch folder, attached to the writer's
# connection as seed_text...) and the tables of the catalogue whose rows the writer replaces
# with theirs (see Builder.finish).
PARTS = {"text": tuple(f"{TEXT}_{shadow}" for shadow in ("data", "idx", "docsize")),
         "words": (f"{WORDS}_data", f"{WORDS}_idx"), "links": (*LINKS, *EXTENT_SHADOWS)}
COPIED = tuple(table for tables in PARTS.values() for table in tables)
# Which parts each worker process builds: the text index is about as much work as the others.
WORKERS = (("words", "links"), ("text",))
FROZEN = getattr(sys, "frozen", False)  # the single executable: workers are threads
END = pickle.dumps(None)
# The in-memory part of an index is written out as a segment past this size (FTS5 counts it in
# an int): about a million resources fit, in some 1.5 GB of the worker's memory.
HASH_BYTES = 1_500_000_000
ADD_TEXT = f"INSERT INTO {TEXT} (rowid, title, abstract) VALUES (?, ?, ?)"
# Link rows go in as one JSON array of integers per table and batch, a pair of ids packed into
# each (high << 32 | low); SQLite unpacks them with json_each, with no Python call per row.
# A permission packs the resource, the group and which permission (0: view, 1: download).
VIEW, DOWNLOAD = "view_resourcebase", "download_resourcebase"
INSERT_PERMS = (f"INSERT INTO resource_perms (resource_id, group_id, perm) SELECT value >> 32, (value >> 1) & 2147483647,"
                f" CASE value & 1 WHEN 0 THEN '{VIEW}' ELSE '{DOWNLOAD}' END FROM json_each(?)")
INSERT_KEYWORDS = "INSERT INTO resource_keywords (resource_id, keyword_id) SELECT value >> 32, value & 4294967295 FROM json_each(?)"
INSERT_REGIONS = "INSERT INTO resource_regions (resource_id, region_id) SELECT value >> 32, value & 4294967295 FROM json_each(?)"
INSERT_LISTED = "INSERT INTO listed_keywords (keyword_id, resource_id) SELECT value >> 32, value & 4294967295 FROM json_each(?)"
# the words of the vocabulary, as migrations.fill_word_index finds them
VOCAB = ("CREATE TABLE vocab AS SELECT DISTINCT term AS word FROM temp.words_by_column"
         f" WHERE col IN ({TEXT_COLUMNS}) AND term GLOB '*[^0-9]*' ORDER BY term")


def packed(rows: np.ndarray) -> str:
    """Packed pairs of ids as the JSON text that the INSERT statements above unpack."""
    return msgspec.json.encode(rows.tolist()).decode()


class _Worker:
    """A process building some of PARTS (in the single executable, a thread), fed batches
    pickled on its standard input."""

    def __init__(self, parts: tuple[str, ...], args: list[str], log: Path):
        self.parts, self.log = parts, log
        self.proc: subprocess.Popen | None = None
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        if FROZEN:
            self.batches: queue.Queue = queue.Queue(maxsize=4)
            self.thread = threading.Thread(target=self._run, args=(args,), name="seed-side", daemon=True)
            self.thread.start()
        else:
            # the catalogue_app this process runs, whatever the folder it runs in (-P: not that one)
            package = str(Path(__file__).resolve().parents[2])
            start_code = f"import sys; sys.path.insert(0, sys.argv.pop(1)); from {__name__} import _main; _main()"
            with open(log, "wb") as out:
                self.proc = subprocess.Popen([sys.executable, "-P", "-c", start_code, package, *args, ",".join(parts)],
                                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=out)

    def _run(self, args: list[str]) -> None:
        try:
            build(Path(args[0]), Path(args[1]), int(args[2]), self.parts, self.batches.get)
        except BaseException as error:  # noqa: BLE001 - handed to the writer's thread by finish()
            self.error = error
            while self.batches.get() is not None:  # let add() go on until the writer stops
                pass

    def send(self, batch: tuple | None, pickled: bytes) -> None:
        if self.proc is not None:
            self.proc.stdin.write(pickled)
        else:
            self.batches.put(batch)

    def end(self) -> None:
        """Tell the worker that no more rows come."""
        if self.proc is not None:
            with contextlib.suppress(OSError):
                self.send(None, END)
                self.proc.stdin.close()
        elif self.thread is not None:
            self.send(None, END)

    def done(self) -> bool:
        return self.proc.poll() is not None if self.proc is not None else not self.thread.is_alive()

    def wait(self) -> None:
        """Wait for the worker to end."""
        if self.proc is not None:
            if self.proc.wait() != 0:
                self.error = RuntimeError(f"the seed's worker failed:\n{self.log.read_text(errors='replace')}")
        elif self.thread is not None:
            self.thread.join()
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        """Stop the worker if it still runs."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # the worker stops at the end of its pipe
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        elif self.thread is not None and self.thread.is_alive():
            self.send(None, END)
            self.thread.join()


class Builder:
    """Builds the tables of COPIED for the catalogue's rows below ``first`` and the batches
    given to ``add``; ``finish`` puts them in place on the writer's connection. The writer's
    transaction must not have changed those tables or resources before (the workers read the
    rows of the last commit), and must have dropped the triggers of the tables of COPIED."""

    def __init__(self, conn: sqlite3.Connection, scratch: Path, first: int):
        main = next(r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main")
        self.scratch = scratch
        for part in PARTS:
            (scratch / f"{part}.sqlite3").unlink(missing_ok=True)
        args = [str(scratch), str(Path(main).resolve()), str(first)]
        self.workers = [_Worker(parts, args, scratch / f"{parts[0]}.log") for parts in WORKERS]
        self.count = 0  # new resources

    def add(self, start: int, titles: list[str], abstracts: list[str], hidden: list[str | None],
            links: tuple[str, str, str], listed: np.ndarray, extent_ids: np.ndarray, extent_boxes: np.ndarray) -> None:
        """Build in the rows of new resources with ids from ``start`` on: their titles,
        abstracts and whether anonymous callers do not list them ('h', as migrations.HIDDEN); their permissions, keywords and
        regions (as INSERT_PERMS, INSERT_KEYWORDS, INSERT_REGIONS take them); the keywords of the
        listed ones (keyword_id << 32 | resource_id); their extent entries (ids and boxes,
        as seed_extents.NEW_ENTRIES makes them)."""
        batch = (start, titles, abstracts, hidden, links, listed, extent_ids, extent_boxes)
        self.count += len(titles)
        pickled = b"" if FROZEN else pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        for worker in self.workers:
            worker.send(batch, pickled)

    def finish(self, conn: sqlite3.Connection) -> None:
        """Wait for each worker, then replace the rows of the tables it built with its own; add
        the new words to the vocabulary. The scratch databases stay attached to ``conn``: detach
        them after the transaction (SQLite cannot detach a database that the open transaction
        has read)."""
        for worker in self.workers:
            worker.end()
        waiting = list(self.workers)
        while waiting:  # the first to end first
            worker = next((w for w in waiting if w.done()), None)
            if worker is None:
                time.sleep(0.01)
                continue
            waiting.remove(worker)
            worker.wait()
            for part in worker.parts:
                conn.execute(f"ATTACH DATABASE ? AS seed_{part}", (str(self.scratch / f"{part}.sqlite3"),))
                # the transaction had changed resources before the load began
                built = conn.execute(f"SELECT n FROM seed_{part}.seen").fetchone()[0] + self.count
                rows = conn.execute("SELECT count(*) FROM main.resources").fetchone()[0]
                if built != rows:
                    raise RuntimeError(f"what was built alongside ({part}) holds {built} resources, not {rows}")
                for table in PARTS[part]:
                    conn.execute(f"DELETE FROM main.{table}")
                    conn.execute(f"INSERT INTO main.{table} SELECT * FROM seed_{part}.{table}")
                if part == "words":
                    conn.execute("INSERT OR IGNORE INTO main.resource_vocab (word) SELECT word FROM seed_words.vocab"
                                 " ORDER BY word")

    def close(self) -> None:
        """Stop the workers that still run and remove the scratch files."""
        for worker in self.workers:
            worker.stop()
        for path in (*(self.scratch / f"{part}.sqlite3" for part in PARTS), *(w.log for w in self.workers)):
            with contextlib.suppress(OSError):  # (on Windows, not while the writer has it attached)
                path.unlink(missing_ok=True)


def build(scratch: Path, catalogue: Path, first: int, built: tuple[str, ...], read: Callable[[], object]) -> None:
    """Build, into new databases in the ``scratch`` folder, the parts ``built`` of PARTS,
    holding the rows of the ``catalogue`` (those of resources below id ``first``) and then of
    the batches that ``read`` returns (the arguments of Builder.add) until it returns None."""
    parts = [{"text": _Text, "words": _Words, "links": _Links}[part](scratch / f"{part}.sqlite3", catalogue)
             for part in built]
    try:
        # Each reads the catalogue inside its transaction: the rows committed before the
        # writer's transaction began (how many resources they were: in a table seen).
        for part in parts:
            part.conn.execute("BEGIN")
            part.conn.execute("CREATE TABLE main.seen AS SELECT count(*) AS n FROM catalogue.resources")
            if first > 1:
                part.old(first)
        while (batch := read()) is not None:
            for part in parts:
                part.add(*batch)
        for part in parts:
            part.end()
    finally:
        for part in parts:
            part.conn.close()


class _Part:
    """One scratch database, written by a connection of its own in one transaction."""

    def __init__(self, path: Path, catalogue: Path):
        path.unlink(missing_ok=True)
        self.conn = conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = OFF")  # a scratch file: thrown away if anything fails
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -262144")
        conn.execute("ATTACH DATABASE ? AS catalogue", (catalogue.as_uri() + "?mode=ro",))

    def old(self, first: int) -> None:
        """Add the rows of the catalogue's resources below ``first``."""

    def add(self, start: int, titles: list[str], abstracts: list[str], hidden: list[str | None],
            links: tuple[str, str, str], listed: np.ndarray, extent_ids: np.ndarray, extent_boxes: np.ndarray) -> None:
        """Add the rows of a batch (see Builder.add)."""

    def end(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.execute("DETACH DATABASE catalogue")


class _Text(_Part):
    """The text index, written out as one segment at the commit (see lift)."""

    table = TEXT
    columns = "title, abstract"
    values = "id, title, abstract"

    def __init__(self, path: Path, catalogue: Path):
        super().__init__(path, catalogue)
        conn, table = self.conn, self.table
        conn.execute(conn.execute("SELECT sql FROM catalogue.sqlite_master WHERE name = ?", (table,)).fetchone()[0])
        for key, value in conn.execute(f"SELECT k, v FROM catalogue.{table}_config WHERE k != 'version'").fetchall():
            conn.execute(f"INSERT INTO main.{table} ({table}, rank) VALUES (?, ?)", (key, value))
        conn.execute(f"INSERT INTO main.{table} ({table}, rank) VALUES ('hashsize', ?)", (HASH_BYTES,))
        conn.execute(f"INSERT INTO main.{table} ({table}, rank) VALUES ('automerge', 0)")
        marks = ", ".join("?" * (self.columns.count(",") + 2))
        self.insert = f"INSERT INTO main.{table} (rowid, {self.columns}) VALUES ({marks})"

    def old(self, first: int) -> None:
        # one statement that may change several rows: the first, while FTS5 holds nothing yet
        self.conn.execute(f"INSERT INTO main.{self.table} (rowid, {self.columns})"
                          f" SELECT {self.values} FROM catalogue.resources r WHERE id < ?", (first,))

    def add(self, start, titles, abstracts, *rest) -> None:  # noqa: ANN001 - as _Part.add
        self.conn.executemany(self.insert, zip(range(start, start + len(titles)), titles, abstracts))

    def end(self) -> None:
        super().end()
        lift(self.conn, self.table)


class _Words(_Text):
    """The word index and, in a table vocab, the words of its vocabulary."""

    table = WORDS
    columns = WORD_COLUMNS
    values = f"id, {WORD_VALUES.format('r')}"

    def add(self, start, titles, abstracts, hidden, *rest) -> None:  # noqa: ANN001 - as _Part.add
        # the words of a resource that anonymous callers do not list go in the columns *_unlisted
        self.conn.executemany(self.insert, (
            (rid, None, None, "h", title, abstract) if h else (rid, title, abstract, None, None, None)
            for rid, title, abstract, h in zip(range(start, start + len(titles)), titles, abstracts, hidden)))

    def end(self) -> None:
        super().end()
        self.conn.execute(f"CREATE VIRTUAL TABLE temp.words_by_column USING fts5vocab(main, {WORDS}, 'col')")
        self.conn.execute(VOCAB)


class _Links(_Part):
    """The link tables with their indexes, and the extent index's tables, packed at the end."""

    def __init__(self, path: Path, catalogue: Path):
        super().__init__(path, catalogue)
        names = PARTS["links"]
        for (sql,) in self.conn.execute(
                f"SELECT sql FROM catalogue.sqlite_master WHERE tbl_name IN ({', '.join('?' * len(names))})"
                " AND type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type DESC", names).fetchall():
            self.conn.execute(sql)  # (the tables before their indexes)
        self.listed: list[np.ndarray] = []
        self.extent_ids: list[np.ndarray] = []
        self.extent_boxes: list[np.ndarray] = []

    def old(self, first: int) -> None:
        for table in LINKS:
            columns = ", ".join(r[1] for r in self.conn.execute(f"PRAGMA catalogue.table_info({table})"))
            sql = self.conn.execute("SELECT sql FROM catalogue.sqlite_master WHERE name = ?", (table,)).fetchone()[0]
            if not sql.rstrip().upper().endswith("WITHOUT ROWID"):  # kept: the rows stay as they were
                columns = f"rowid, {columns}"
            self.conn.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM catalogue.{table}")

    def add(self, start, titles, abstracts, hidden, links, listed, extent_ids, extent_boxes) -> None:  # noqa: ANN001
        for statement, rows in zip((INSERT_PERMS, INSERT_KEYWORDS, INSERT_REGIONS), links):
            self.conn.execute(statement, (rows,))
        self.listed.append(listed)
        self.extent_ids.append(extent_ids)
        self.extent_boxes.append(extent_boxes)

    def end(self) -> None:
        # in key order: appended at the end of each keyword's run
        self.conn.execute(INSERT_LISTED, (packed(np.sort(np.concatenate([np.zeros(0, np.int64), *self.listed]))),))
        ids, boxes = seed_extents.entries(self.conn, "catalogue")
        packed_tree = seed_extents.pack(self.conn, np.concatenate([ids, *self.extent_ids]),
                                        np.concatenate([boxes, *self.extent_boxes]), "catalogue")
        seed_extents.write(self.conn, packed_tree)
        super().end()


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """The SQLite varint at ``data[i:]`` and the offset after it."""
    value = 0
    for k in range(9):
        byte = data[i]
        i += 1
        if k == 8:
            return value << 8 | byte, i
        value = value << 7 | byte & 0x7F
        if not byte & 0x80:
            return value, i
    raise AssertionError("unreachable")


def lift(conn: sqlite3.Connection, table: str) -> None:
    """Leave the FTS5 index ``table`` as one segment above level 0, as `optimize` does: move a
    lone segment at level 0 to level 1 by rewriting the structure record, or merge several.

    The structure record (row 10 of the index's data table) is a 4-byte cookie, then varints:
    the number of levels, the number of segments, a count of writes, then per level the number
    of segments being merged, the number of segments and the segments' own numbers (in the
    second version of the record, marked by the bytes FF 00 00 01 after the cookie, a segment
    has more of them). A lone segment at level 0 is moved up by writing an empty level before
    its own."""
    record = conn.execute(f"SELECT block FROM {table}_data WHERE id = 10").fetchone()[0]
    head = 8 if record[4:8] == b"\xff\x00\x00\x01" else 4
    levels, i = _varint(record, head)
    segments, i = _varint(record, i)
    _, i = _varint(record, i)  # the count of writes
    if segments > 1:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    elif segments == 1 and levels == 1:
        if record[head] != 1 or record[i:i + 2] != b"\x00\x01":  # (one level: 1 is one byte)
            raise RuntimeError(f"the structure record of {table} is not as expected: {record.hex()}")
        conn.execute(f"UPDATE {table}_data SET block = ? WHERE id = 10",
                     (record[:head] + b"\x02" + record[head + 1:i] + b"\x00\x00" + record[i:],))


def _main() -> None:
    """A worker process: ``python -m catalogue_app.seeding.side SCRATCH_FOLDER CATALOGUE FIRST
    PART,PART...``, its batches pickled on its standard input (a thread reads them while the rows
    are built in)."""
    scratch, catalogue, first, parts = sys.argv[1:5]
    if parts != "text" and hasattr(os, "nice"):
        # The text index takes the longest: it gets a core of its own while the writer has the
        # other, and the rest is built in the time they leave.
        os.nice(10)
    batches: queue.Queue = queue.Queue(maxsize=8)

    def receive() -> None:
        stream = sys.stdin.buffer
        try:
            while (batch := pickle.load(stream)) is not None:
                batches.put(batch)
            batches.put(None)
        except BaseException as error:  # noqa: BLE001 - the pipe ended early: the writer stopped
            batches.put(error)

    threading.Thread(target=receive, daemon=True).start()

    def read() -> object:
        batch = batches.get()
        if isinstance(batch, BaseException):
            raise SystemExit(f"the writer sent no more rows ({batch!r})")
        return batch

    build(Path(scratch), Path(catalogue), int(first), tuple(parts.split(",")), read)


if __name__ == "__main__":
    _main()
