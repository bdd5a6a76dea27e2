"""What /api/v2/upload-size-limits and /api/v2/upload-parallelism-limits show: the upload limits."""

from __future__ import annotations

import msgspec

from catalogue_app.store import Connection, Row, limits
from catalogue_app.store.filters import ListSpec

# The two kinds of limit (store/limits.py): how large an upload may be, how many may run at once.
SIZE = limits.SIZE
PARALLELISM = limits.PARALLELISM
UNITS = ((1 << 40, "TB"), (1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB"))


def size_label(size: int) -> str:
    """A size as GeoNode writes it: "100.0\u00a0MB", "512\u00a0bytes"."""
    for unit, name in UNITS:
        if size >= unit:
            return f"{size / unit:.1f}\u00a0{name}"
    return f"{size}\u00a0byte" + ("" if size == 1 else "s")


class SizeLimit(msgspec.Struct):
    slug: str
    description: str
    max_size: int
    max_size_label: str
    link: str


class ParallelismLimit(msgspec.Struct):
    slug: str
    description: str
    max_number: int
    link: str


def shape(kind: limits.Kind, row: Row, base: str) -> SizeLimit | ParallelismLimit:
    if kind is SIZE:
        link = f"{base}/api/v2/upload-size-limits/{row['slug']}"
        return SizeLimit(row["slug"], row["description"], row["max_size"], size_label(row["max_size"]), link)
    link = f"{base}/api/v2/upload-parallelism-limits/{row['slug']}"
    return ParallelismLimit(row["slug"], row["description"], row["max_number"], link)


def page(conn: Connection, kind: limits.Kind, spec: ListSpec, base: str, limit: int,
         offset: int) -> tuple[int, list[SizeLimit | ParallelismLimit]]:
    """One page of the limits of a kind, and how many there are."""
    total, rows = limits.page(conn, kind, spec, limit, offset)
    return total, [shape(kind, r, base) for r in rows]


def one(conn: Connection, kind: limits.Kind, slug: str, base: str) -> SizeLimit | ParallelismLimit | None:
    """The limit of a kind with this slug; None when there is none."""
    row = limits.get(conn, kind, slug)
    return None if row is None else shape(kind, row, base)
