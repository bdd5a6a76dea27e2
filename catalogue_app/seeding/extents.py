"""Fill the extent index (the resource_extents R*Tree) in bulk, for `catalogue seed`.

Inserting into an R*Tree row by row rewrites several whole nodes per row (about 11 us a row).
After a large load it is much cheaper to pack every entry, old and new, into a fresh tree
bottom-up (sort-tile-recursive) and write its nodes straight into the R*Tree's tables, in the
format SQLite's rtree.c documents: node 1 is the root and starts with the tree's depth (2 bytes,
big-endian), every node then holds a 2-byte cell count and cells of an 8-byte id (a row id in a
leaf, a child node number above) and four 4-byte floats (minx, maxx, miny, maxy). Coordinates
are rounded outwards to float32 exactly as the R*Tree does. `SELECT rtreecheck('resource_extents')`
checks the result. (A connection in SQLite's defensive mode may not write these tables; the app
does not set that mode.)
"""

from __future__ import annotations

import sqlite3

import numpy as np

TABLE = "resource_extents"
CELL = np.dtype([("id", ">i8"), ("minx", ">f4"), ("maxx", ">f4"), ("miny", ">f4"), ("maxy", ">f4")])

# The same entries as the resources_extent_insert trigger makes: 2*id holds the box (the
# world when there is none); a box crossing the antimeridian is split, its eastern part in 2*id+1.
NEW_ENTRIES = """
SELECT id * 2, coalesce(ll_x0, -180), CASE WHEN ll_x0 > ll_x1 THEN 180 ELSE coalesce(ll_x1, 180) END,
       coalesce(ll_y0, -90), coalesce(ll_y1, 90) FROM resources WHERE id >= :first
UNION ALL
SELECT id * 2 + 1, -180, ll_x1, ll_y0, ll_y1 FROM resources WHERE id >= :first AND ll_x0 > ll_x1
"""


def fill(conn: sqlite3.Connection, first: int, count: int, ids: np.ndarray, boxes: np.ndarray) -> None:
    """Index the extents of the resources from id ``first`` on (``count`` of them), whose
    entries are given: ``ids`` and their ``boxes`` (minx, maxx, miny, maxy), as NEW_ENTRIES
    makes them."""
    existing = conn.execute(f"SELECT count(*) FROM {TABLE}_rowid").fetchone()[0]
    if count * 8 < existing:
        # a small addition to a large tree: row by row is cheaper than repacking everything
        conn.execute(f"INSERT INTO {TABLE} (id, minx, maxx, miny, maxy) {NEW_ENTRIES}", {"first": first})
        return
    old_ids, old_boxes = entries(conn)
    write(conn, pack(conn, np.concatenate([old_ids, ids]), np.concatenate([old_boxes, boxes])))


def entries(conn: sqlite3.Connection, schema: str = "main") -> tuple[np.ndarray, np.ndarray]:
    """The ids and boxes of the entries in the index of database ``schema``."""
    rows = conn.execute(f"SELECT id, minx, maxx, miny, maxy FROM {schema}.{TABLE}").fetchall()
    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    return ids, np.array([tuple(r)[1:] for r in rows], np.float64).reshape(len(rows), 4)


def pack(conn: sqlite3.Connection, ids: np.ndarray, boxes: np.ndarray, schema: str = "main") -> tuple[list, list, list]:
    """The rows of the node, parent and rowid tables of a tree holding these entries, for the
    index of database ``schema`` (whose node size it keeps)."""
    size = conn.execute(f"SELECT length(data) FROM {schema}.{TABLE}_node WHERE nodeno = 1").fetchone()[0]
    return _pack(size, _cells(ids, boxes))


# rtree.c rounds a coordinate that float32 cannot hold outwards by scaling it by one part in 2**23
TOWARDS_ZERO, AWAY_FROM_ZERO = 1.0 - 1.0 / 8388608.0, 1.0 + 1.0 / 8388608.0


def _down(values: np.ndarray) -> np.ndarray:
    out = values.astype(np.float32)
    over = out > values
    out[over] = (values[over] * np.where(values[over] < 0, AWAY_FROM_ZERO, TOWARDS_ZERO)).astype(np.float32)
    return out


def _up(values: np.ndarray) -> np.ndarray:
    out = values.astype(np.float32)
    under = out < values
    out[under] = (values[under] * np.where(values[under] < 0, TOWARDS_ZERO, AWAY_FROM_ZERO)).astype(np.float32)
    return out


def _cells(ids: np.ndarray, coords: np.ndarray) -> np.ndarray:
    cells = np.empty(len(ids), CELL)
    cells["id"] = ids
    cells["minx"], cells["maxx"] = _down(coords[:, 0]), _up(coords[:, 1])
    cells["miny"], cells["maxy"] = _down(coords[:, 2]), _up(coords[:, 3])
    return cells


def _sort_tiles(cells: np.ndarray, per: int) -> np.ndarray:
    """Order cells so that runs of ``per`` are compact: vertical slices by x, then y in each."""
    if len(cells) <= per:
        return cells
    leaves = -(-len(cells) // per)
    run = per * int(np.ceil(np.sqrt(leaves)))
    cx = cells["minx"].astype(np.float64) + cells["maxx"]
    cy = cells["miny"].astype(np.float64) + cells["maxy"]
    by_x = np.argsort(cx, kind="stable")
    order = np.concatenate([part[np.argsort(cy[part], kind="stable")]
                            for part in np.array_split(by_x, range(run, len(cells), run))])
    return cells[order]


def _pack(size: int, cells: np.ndarray) -> tuple[list, list, list]:
    """The rows of the node, parent and rowid tables of a tree of nodes of ``size`` bytes
    holding ``cells``."""
    per = (size - 4) // CELL.itemsize
    levels = [_sort_tiles(cells, per)]
    while len(levels[-1]) > per:  # each node's bounding box is a cell of the level above
        below, starts = levels[-1], np.arange(0, len(levels[-1]), per)
        above = np.empty(len(starts), CELL)
        for name, reduce in (("minx", np.minimum), ("maxx", np.maximum), ("miny", np.minimum), ("maxy", np.maximum)):
            above[name] = reduce.reduceat(below[name], starts)
        levels.append(above)
    # node numbers: the root is 1, the others follow level by level
    numbers, next_number = [], 2
    for level in levels[:-1]:
        count = -(-len(level) // per)
        numbers.append(np.arange(next_number, next_number + count))
        next_number += count
    numbers.append(np.array([1]))
    nodes, parents = [], []
    for depth, (level, own) in enumerate(zip(levels, numbers)):
        if depth + 1 < len(levels):
            levels[depth + 1]["id"] = own
            parents += zip(own.tolist(), numbers[depth + 1][np.arange(len(own)) // per].tolist())
        for i, number in enumerate(own.tolist()):
            chunk = level[i * per:(i + 1) * per]
            head = ((len(levels) - 1) if number == 1 else 0).to_bytes(2, "big") + len(chunk).to_bytes(2, "big")
            nodes.append((number, (head + chunk.tobytes()).ljust(size, b"\0")))
    leaf = numbers[0][np.arange(len(levels[0])) // per]
    by_id = np.argsort(levels[0]["id"], kind="stable")  # appended in order, not inserted at random
    rowids = list(zip(levels[0]["id"][by_id].tolist(), leaf[by_id].tolist()))
    return nodes, parents, rowids


def write(conn: sqlite3.Connection, packed: tuple[list, list, list]) -> None:
    """Replace the rows of the index's tables (in the connection's first database that has
    them: a copy of them in a scratch database will do) with those of a packed tree."""
    nodes, parents, rowids = packed
    for shadow in ("node", "parent", "rowid"):
        conn.execute(f"DELETE FROM {TABLE}_{shadow}")
    conn.executemany(f"INSERT INTO {TABLE}_node (nodeno, data) VALUES (?, ?)", nodes)
    conn.executemany(f"INSERT INTO {TABLE}_parent (nodeno, parentnode) VALUES (?, ?)", parents)
    conn.executemany(f"INSERT INTO {TABLE}_rowid (rowid, nodeno) VALUES (?, ?)", rowids)
