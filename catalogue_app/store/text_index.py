"""Upkeep of the full-text indexes (FTS5): their merge settings, and the small merge steps the
writer runs when it has nothing else to do.

Two indexes serve a search of titles and abstracts. ``resource_text`` (trigram) finds any
substring of three characters or more. ``resource_words`` (whole words, unicode61 with accents
kept, folded as the trigram index folds case) is smaller and faster: a search term made of
letters and digits only lies inside one word, so the rows that contain it are those holding a
word of the vocabulary that contains it (``resource_vocab``, searched through its own trigram
index). The words of the rows that anonymous callers do not list go in columns of their own
(``title_unlisted``, ``abstract_unlisted``, and 'h' in ``hidden``), so that anonymous callers
count their matches in two columns alone.

FTS5 adds a small segment to an index with every write transaction and, left to itself
(automerge), merges segments inside the write that crosses a threshold. Once the index is large,
such a merge reaches the big segments and rewrites tens of megabytes: one ordinary edit then
holds the write lock for seconds. With automerge off, the merging is done in steps of a few
pages between writes (``merge_step``). A level that reaches crisismerge segments is merged whole
inside the write that adds the last one; at FTS5's 64, a steady flow of edits filled the low
levels within seconds, and the merge that followed rewrote the large segment of a seeded catalogue
inside an edit (0.1 to 0.7 s). At 1000 that bound is never met while the writer does a step of
upkeep every few writes; searches read the extra segments meanwhile.
"""

from __future__ import annotations

import sqlite3

TABLES = ("resource_text", "resource_words", "resource_vocab_text")
# usermerge: segments of a level merged together by a step; 16 rather than 4 makes fewer merges
# (each level holds more segments, which a search reads too)
SETTINGS = {"hashsize": 1024 * 1024, "automerge": 0, "crisismerge": 1000, "usermerge": 16}
MERGE_PAGES = 16  # pages written per step: about a millisecond or two


def configure(conn: sqlite3.Connection, table: str = "resource_text", **values: int) -> None:
    """Set an index's options (stored in the database: they hold for every connection)."""
    for key, value in values.items():
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES (?, ?)", (key, value))


def present(conn: sqlite3.Connection) -> tuple[str, ...]:
    """The indexes of TABLES that this database has (an older schema lacks the word index)."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return tuple(t for t in TABLES if t in names)


def merge_step(conn: sqlite3.Connection, pages: int = MERGE_PAGES) -> bool:
    """Merge segments of the first index that has any to merge, writing about ``pages`` pages;
    whether there was anything to merge."""
    for table in present(conn):
        before = conn.total_changes
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", (pages,))
        # FTS5 documents that a difference of 2 or more in total_changes means work was done
        if conn.total_changes - before >= 2:
            return True
    return False


def optimize(conn: sqlite3.Connection, table: str = "resource_text") -> None:
    """Merge a whole index into one segment (after a bulk load)."""
    conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
