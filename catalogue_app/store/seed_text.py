"""Build the text index (resource_text, FTS5 with trigrams) of a large load on a second core,
for `catalogue seed`.

Indexing the text is the largest part of a seed's work, and the writer cannot share its own.
So a thread indexes the whole catalogue (the rows already there, read from the last committed
state, and the new rows, handed over batch by batch) into a scratch database holding an
identical FTS5 table (SQLite lets go of Python's lock while it works on a row, so the thread runs
alongside the writer), in one transaction: the rows stay in FTS5's memory and make one segment.
At the end the writer attaches the scratch database and replaces the rows of the index's shadow
tables (data, idx, docsize) with the scratch table's: the same library wrote them for the same
table definition and settings, so they are the index SQLite would have built. The writer's
connection must not have used resource_text earlier in its transaction (FTS5 keeps what it read
of the index for the transaction). `INSERT INTO resource_text(resource_text, rank) VALUES
('integrity-check', 1)` checks the result against the resources table.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
from pathlib import Path

TABLE = "resource_text"
SHADOWS = ("data", "idx", "docsize")
SCHEMA = "seed_text"  # the scratch database, attached to the writer's connection for the copy
HASH_BYTES = 256 * 1024 * 1024  # the in-memory part of the index flushed to a segment past this size
ADD = f"INSERT INTO {TABLE} (rowid, title, abstract) VALUES (?, ?, ?)"


class Builder:
    """Indexes the catalogue's rows below ``first`` and the batches given to ``add``; ``finish``
    puts the index in place on the writer's connection. The writer's transaction must not have
    changed resources before (the thread reads the rows of the last commit)."""

    def __init__(self, conn: sqlite3.Connection, scratch: Path, first: int):
        main = next(r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main")
        self.path = scratch / "text.sqlite3"
        self.path.unlink(missing_ok=True)
        side = self.side = sqlite3.connect(self.path.resolve().as_uri(), uri=True, isolation_level=None,
                                           check_same_thread=False)
        side.execute("PRAGMA journal_mode = OFF")  # a scratch file: thrown away if anything fails
        side.execute("PRAGMA synchronous = OFF")
        side.execute("PRAGMA cache_size = -262144")
        side.execute(conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone()[0])
        for key, value in conn.execute(f"SELECT k, v FROM {TABLE}_config WHERE k != 'version'"):
            side.execute(f"INSERT INTO {TABLE} ({TABLE}, rank) VALUES (?, ?)", (key, value))
        side.execute(f"INSERT INTO {TABLE} ({TABLE}, rank) VALUES ('hashsize', ?)", (HASH_BYTES,))
        side.execute(f"INSERT INTO {TABLE} ({TABLE}, rank) VALUES ('automerge', 0)")
        if first > 1:  # read-only: the rows committed before the writer's transaction began
            side.execute("ATTACH DATABASE ? AS catalogue", (Path(main).resolve().as_uri() + "?mode=ro",))
        self.first = first
        self.batches: queue.Queue = queue.Queue(maxsize=4)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="seed-text", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        side, rows = self.side, []
        try:
            side.execute("BEGIN")
            if self.first > 1:
                side.execute(f"INSERT INTO {TABLE} (rowid, title, abstract)"
                             " SELECT id, title, abstract FROM catalogue.resources WHERE id < ?", (self.first,))
            while (rows := self.batches.get()) is not None:
                for part in (rows[:len(rows) // 2], rows[len(rows) // 2:]):
                    side.executemany(ADD, part)
                    side.execute("COMMIT")  # a segment per half batch: see below
                    side.execute("BEGIN")
            # One segment made of several: FTS5 leaves a lone segment where it is, at level 0,
            # where the first merge after a few edits would rewrite the whole index inside a
            # client's write (a stall of a second at 100,000 resources)
            side.execute(f"INSERT INTO {TABLE} ({TABLE}) VALUES ('optimize')")
            side.execute("COMMIT")
        except BaseException as error:  # noqa: BLE001 - handed to the writer's thread by finish()
            self.error = error
            while rows is not None:  # let add() go on until the writer stops
                rows = self.batches.get()

    def add(self, rows: list[tuple[int, str, str]]) -> None:
        """Index new rows: (id, title, abstract)."""
        self.batches.put(rows)

    def finish(self, conn: sqlite3.Connection) -> None:
        """Wait for the thread, then replace the index's rows with the built ones. The scratch
        database stays attached to ``conn`` as SCHEMA: detach it after the transaction
        (SQLite cannot detach a database that the open transaction has read)."""
        self.batches.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error
        indexed = self.side.execute(f"SELECT count(*) FROM {TABLE}_docsize").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM resources").fetchone()[0]
        if indexed != rows:  # the transaction had changed resources before the load began
            raise RuntimeError(f"the text index built alongside holds {indexed} rows, not {rows}")
        conn.execute(f"ATTACH DATABASE ? AS {SCHEMA}", (str(self.path),))
        for shadow in SHADOWS:
            conn.execute(f"DELETE FROM main.{TABLE}_{shadow}")
            conn.execute(f"INSERT INTO main.{TABLE}_{shadow} SELECT * FROM {SCHEMA}.{TABLE}_{shadow}")

    def close(self) -> None:
        """Stop the thread if it still runs and remove the scratch file."""
        if self.thread.is_alive():
            self.batches.put(None)
            self.thread.join()
        self.side.close()
        with contextlib.suppress(OSError):  # (on Windows, not while the writer has it attached)
            self.path.unlink(missing_ok=True)
