"""What hangs off a resource: favorites, ratings, extra metadata, links to other resources."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store.resources import Viewer, visibility


# -- favorites --------------------------------------------------------------------------------------
def add_favorite(conn: sqlite3.Connection, user_id: int, resource_id: int) -> bool:
    """False when it was a favorite already."""
    return conn.execute("INSERT OR IGNORE INTO favorites (user_id, resource_id, created) VALUES (?, ?, ?)",
                        (user_id, resource_id, now())).rowcount == 1


def remove_favorite(conn: sqlite3.Connection, user_id: int, resource_id: int) -> bool:
    return conn.execute("DELETE FROM favorites WHERE user_id = ? AND resource_id = ?",
                        (user_id, resource_id)).rowcount == 1


# -- ratings ----------------------------------------------------------------------------------------
def rate(conn: sqlite3.Connection, user_id: int, resource_id: int, rating: int) -> None:
    conn.execute("INSERT INTO ratings (user_id, resource_id, rating, created) VALUES (?, ?, ?, ?)"
                 " ON CONFLICT (user_id, resource_id) DO UPDATE SET rating = excluded.rating, created = excluded.created",
                 (user_id, resource_id, rating, now()))


def rating(conn: sqlite3.Connection, resource_id: int, user_id: int | None) -> tuple[float, int, int | None]:
    """Average, number of ratings, and the user's own rating."""
    avg, count = conn.execute("SELECT coalesce(avg(rating), 0), count(*) FROM ratings WHERE resource_id = ?",
                              (resource_id,)).fetchone()
    mine = conn.execute("SELECT rating FROM ratings WHERE resource_id = ? AND user_id = ?",
                        (resource_id, user_id)).fetchone() if user_id is not None else None
    return float(avg), count, mine[0] if mine else None


# -- extra metadata ---------------------------------------------------------------------------------
def extra_metadata(conn: sqlite3.Connection, resource_id: int) -> list[dict[str, Any]]:
    return [{"id": r[0], **json.loads(r[1])} for r in conn.execute(
        "SELECT id, metadata FROM extra_metadata WHERE resource_id = ? ORDER BY id", (resource_id,))]


def add_extra_metadata(conn: sqlite3.Connection, resource_id: int, items: list[dict[str, Any]]) -> None:
    conn.executemany("INSERT INTO extra_metadata (resource_id, metadata) VALUES (?, ?)",
                     [(resource_id, json.dumps(item, ensure_ascii=False)) for item in items])


def replace_extra_metadata(conn: sqlite3.Connection, resource_id: int, item_id: int, item: dict[str, Any]) -> bool:
    return conn.execute("UPDATE extra_metadata SET metadata = ? WHERE id = ? AND resource_id = ?",
                        (json.dumps(item, ensure_ascii=False), item_id, resource_id)).rowcount == 1


def delete_extra_metadata(conn: sqlite3.Connection, resource_id: int, ids: list[int]) -> None:
    conn.executemany("DELETE FROM extra_metadata WHERE id = ? AND resource_id = ?", [(i, resource_id) for i in ids])


# -- linked resources -------------------------------------------------------------------------------
LINK_COLUMNS = "r.id, r.title, r.resource_type, r.thumbnail_url"


def linked(conn: sqlite3.Connection, resource_id: int, viewer: Viewer, types: list[str]) -> dict[str, list[sqlite3.Row]]:
    """Resources this one links to and those linking to it, as far as the viewer sees them."""
    cond, params = visibility(viewer)
    type_sql = f" AND r.resource_type IN ({','.join('?' * len(types))})" if types else ""
    out = {}
    for key, mine, other in (("linked_to", "source_id", "target_id"), ("linked_by", "target_id", "source_id")):
        out[key] = conn.execute(
            f"SELECT {LINK_COLUMNS}, l.internal FROM linked_resources l JOIN resources r ON r.id = l.{other}"
            f" WHERE l.{mine} = ? AND {cond}{type_sql} ORDER BY r.id DESC", [resource_id, *params, *types]).fetchall()
    return out


def link(conn: sqlite3.Connection, source_id: int, target_id: int) -> bool:
    return conn.execute("INSERT OR IGNORE INTO linked_resources (source_id, target_id) VALUES (?, ?)",
                        (source_id, target_id)).rowcount == 1


def unlink(conn: sqlite3.Connection, source_id: int, target_id: int) -> bool:
    return conn.execute("DELETE FROM linked_resources WHERE source_id = ? AND target_id = ? AND internal = 0",
                        (source_id, target_id)).rowcount == 1


def set_links(conn: sqlite3.Connection, source_id: int, target_ids: list[int]) -> None:
    """The resources this one links to are exactly ``target_ids`` (links the catalogue made
    itself, ``internal``, stay)."""
    conn.execute("DELETE FROM linked_resources WHERE source_id = ? AND internal = 0", (source_id,))
    conn.executemany("INSERT OR IGNORE INTO linked_resources (source_id, target_id) VALUES (?, ?)",
                     [(source_id, t) for t in dict.fromkeys(target_ids) if t != source_id])


def linked_uuids(conn: sqlite3.Connection, resource_ids: list[int], viewer: Viewer) -> dict[int, list[sqlite3.Row]]:
    """For each resource, the uuid and title of the resources it links to that the viewer sees
    (links the catalogue made itself left out)."""
    out: dict[int, list[sqlite3.Row]] = {i: [] for i in resource_ids}
    if not resource_ids:
        return out
    cond, params = visibility(viewer)
    marks = ",".join("?" * len(resource_ids))
    for row in conn.execute(
            f"SELECT l.source_id, r.uuid, r.title FROM linked_resources l JOIN resources r ON r.id = l.target_id"
            f" WHERE l.source_id IN ({marks}) AND l.internal = 0 AND {cond} ORDER BY r.id", [*resource_ids, *params]):
        out[row[0]].append(row)
    return out
