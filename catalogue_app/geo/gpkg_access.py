"""Turns on a GeoPackage between the two SQLite libraries of one process.

GDAL (through pyogrio) carries its own copy of SQLite; the edits (gpkg_edit.py) use Python's.
SQLite's file locks are POSIX locks, which belong to the process: when GDAL closes a file, the
locks that Python's SQLite holds on it in the same process are dropped too, and a writer in
another process could then write beside an edit. So, per path, GDAL's opens and Python SQLite's
connections take turns: any number of one kind at once, never both kinds. A kind that is waiting
stops more of the other kind from starting, and has the next turn, so that a stream of map reads
does not hold an edit back for ever (nor a stream of edits the reads). A thread that already holds a path may take it again for the same kind.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

GDAL = "gdal"
SQLITE = "sqlite"


class _Turns:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.kind: str | None = None
        self.holders = 0
        self.waiting = {GDAL: 0, SQLITE: 0}
        self.next: str | None = None  # the kind whose turn comes next (it was waiting when the last holder left)

    def may_enter(self, kind: str, other: str) -> bool:
        if self.next not in (None, kind):
            return False
        return self.holders == 0 or (self.kind == kind and self.waiting[other] == 0)


_turns: dict[str, _Turns] = {}
_turns_lock = threading.Lock()
_held = threading.local()  # {path: (kind, depth)} for this thread


def _key(path: str | Path) -> str:
    return os.path.abspath(str(path))


def _of(key: str) -> _Turns:
    with _turns_lock:
        found = _turns.get(key)
        if found is None:
            found = _turns[key] = _Turns()
        return found


@contextlib.contextmanager
def holding(path: str | Path, kind: str) -> Iterator[None]:
    """Hold ``path`` for ``kind`` (GDAL or SQLITE) while the block runs."""
    key = _key(path)
    held: dict[str, list] = _held.__dict__.setdefault("paths", {})
    mine = held.get(key)
    if mine is not None:
        if mine[0] != kind:
            raise RuntimeError(f"{key} is held for {mine[0]} by this thread; it cannot be opened with {kind} too")
        mine[1] += 1
        try:
            yield
        finally:
            mine[1] -= 1
        return
    turns = _of(key)
    other = SQLITE if kind == GDAL else GDAL
    with turns.cond:
        turns.waiting[kind] += 1
        try:
            while not turns.may_enter(kind, other):
                turns.cond.wait()
        finally:
            turns.waiting[kind] -= 1
        turns.kind = kind
        turns.holders += 1
        if turns.next == kind:
            turns.next = None
    held[key] = [kind, 1]
    try:
        yield
    finally:
        del held[key]
        with turns.cond:
            turns.holders -= 1
            if turns.holders == 0:
                other = SQLITE if kind == GDAL else GDAL
                turns.kind = None
                turns.next = other if turns.waiting[other] else None
            turns.cond.notify_all()


def gdal(path: str | Path):
    """Hold ``path`` for GDAL reads (pyogrio)."""
    return holding(path, GDAL)


def sqlite(path: str | Path):
    """Hold ``path`` for a connection of Python's SQLite."""
    return holding(path, SQLITE)
