"""Upkeep of the full-text index (resource_text, FTS5): its merge settings, and the small merge
steps the writer runs when it has nothing else to do.

FTS5 adds a small segment to the index with every write transaction and, left to itself
(automerge), merges segments inside the write that crosses a threshold. Once the index is large,
such a merge reaches the big segments and rewrites tens of megabytes: one ordinary edit then
holds the write lock for seconds. With automerge off, the merging is done in steps of a few
pages between writes (``merge_step``); crisismerge only bounds the count of small segments when
the writer never gets the time to merge them.
"""

from __future__ import annotations

import sqlite3

# usermerge: segments of a level merged together by a step; 16 rather than 4 makes fewer merges
# (each level holds more segments, which a search reads too)
SETTINGS = {"hashsize": 1024 * 1024, "automerge": 0, "crisismerge": 64, "usermerge": 16}
MERGE_PAGES = 16  # pages written per step: about a millisecond or two


def configure(conn: sqlite3.Connection, **values: int) -> None:
    """Set the index's options (stored in the database: they hold for every connection)."""
    for key, value in values.items():
        conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES (?, ?)", (key, value))


def merge_step(conn: sqlite3.Connection, pages: int = MERGE_PAGES) -> bool:
    """Merge segments, writing about ``pages`` pages; whether there was anything to merge."""
    before = conn.total_changes
    conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES ('merge', ?)", (pages,))
    # FTS5 documents that a difference of 2 or more in total_changes means work was done
    return conn.total_changes - before >= 2


def optimize(conn: sqlite3.Connection) -> None:
    """Merge the whole index into one segment (after a bulk load)."""
    conn.execute("INSERT INTO resource_text (resource_text) VALUES ('optimize')")
