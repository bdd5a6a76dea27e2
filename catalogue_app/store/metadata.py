"""Uploaded ISO 19115/19139 metadata written into a resource's record.

The document is kept as sent (table ``iso_metadata``) and its fields, as read by geo/iso.py,
replace the record's: title, abstract, purpose, keywords, category, dates, temporal extent,
language, edition, maintenance frequency, constraints, lineage. A dataset keeps the geographic
extent of its data (the data is what the map services draw); other resources take the
document's box.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store import resource_writes

COPIED = ("title", "abstract", "purpose", "supplemental_information", "edition", "maintenance_frequency",
          "constraints_other", "data_quality_statement", "language", "date", "date_type", "temporal_extent_start",
          "temporal_extent_end")
DATE_TYPES = ("creation", "publication", "revision")


def apply_iso(conn: sqlite3.Connection, resource_id: int, fields: dict[str, Any], xml: bytes) -> None:
    """Write the document's fields (geo.iso.IsoMetadata as a dict) into the record and keep the XML."""
    values = {k: fields[k] for k in COPIED if fields.get(k)}
    if values.get("date_type") not in (None, *DATE_TYPES):
        values.pop("date_type")
    if fields.get("topic_category"):
        category = resource_writes.lookup_id(conn, "categories", "identifier", fields["topic_category"])
        if category is not None:
            values["category_id"] = category
    kind = conn.execute("SELECT resource_type FROM resources WHERE id = ?", (resource_id,)).fetchone()[0]
    box = fields.get("bbox")
    if box and kind != "dataset":
        x0, y0, x1, y1 = box
        values.update(srid="EPSG:4326", bbox_x0=x0, bbox_y0=y0, bbox_x1=x1, bbox_y1=y1, ll_x0=x0, ll_y0=y0,
                      ll_x1=x1, ll_y1=y1)
    resource_writes.update(conn, resource_id, values)
    if box and kind != "dataset":
        resource_writes.set_regions_from_extent(conn, resource_id)
    if fields.get("keywords"):
        resource_writes.set_keywords(conn, resource_id, fields["keywords"])
    set_iso_xml(conn, resource_id, xml)


def set_iso_xml(conn: sqlite3.Connection, resource_id: int, xml: bytes) -> None:
    conn.execute("INSERT INTO iso_metadata (resource_id, xml, uploaded) VALUES (?, ?, ?) ON CONFLICT (resource_id)"
                 " DO UPDATE SET xml = excluded.xml, uploaded = excluded.uploaded", (resource_id, xml, now()))


def iso_xml(conn: sqlite3.Connection, resource_id: int) -> bytes | None:
    row = conn.execute("SELECT xml FROM iso_metadata WHERE resource_id = ?", (resource_id,)).fetchone()
    return bytes(row[0]) if row else None


def with_iso_xml(conn: sqlite3.Connection, ids: list[int]) -> set[int]:
    if not ids:
        return set()
    return {r[0] for r in conn.execute(
        f"SELECT resource_id FROM iso_metadata WHERE resource_id IN ({','.join('?' * len(ids))})", ids)}


def choices(conn: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    """The ISO topic categories, the licences and the thesauri a resource's metadata may name."""
    return {
        "categories": [dict(r) for r in conn.execute(
            "SELECT identifier, gn_description FROM categories WHERE is_choice = 1 ORDER BY identifier")],
        "licenses": [dict(r) for r in conn.execute("SELECT identifier, name FROM licenses ORDER BY name")],
        "thesauri": [dict(r) for r in conn.execute("SELECT identifier, title, uri FROM thesauri ORDER BY identifier")],
    }


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def region_choices(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute("SELECT code, name FROM regions ORDER BY level, name").fetchall()


def thesaurus_keywords(conn: sqlite3.Connection, thesaurus: str) -> list[sqlite3.Row]:
    return conn.execute("SELECT k.about, k.alt_label, k.labels FROM thesaurus_keywords k JOIN thesauri t"
                        " ON t.id = k.thesaurus_id WHERE t.identifier = ? ORDER BY k.alt_label", (thesaurus,)).fetchall()


def keyword_names(conn: sqlite3.Connection, text: str, limit: int) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM keywords WHERE name LIKE ? ESCAPE '\\' ORDER BY name LIMIT ?",
                                       (_like(text), limit))]


def user_choices(conn: sqlite3.Connection, condition: str, params: list[Any], text: str, limit: int) -> list[sqlite3.Row]:
    """Users matching ``text`` (username, first or last name, email) under the condition on ``u``."""
    like = _like(text)
    return conn.execute(
        f"SELECT u.id, u.username, u.first_name, u.last_name FROM users u WHERE {condition} AND"
        " (u.username LIKE ? ESCAPE '\\' OR u.first_name LIKE ? ESCAPE '\\' OR u.last_name LIKE ? ESCAPE '\\'"
        " OR u.email LIKE ? ESCAPE '\\') ORDER BY u.username LIMIT ?",
        [*params, like, like, like, like, limit]).fetchall()


def resource_choices(conn: sqlite3.Connection, condition: str, params: list[Any], text: str,
                     limit: int) -> list[sqlite3.Row]:
    """Resources whose title holds ``text``, under the condition on ``r``."""
    return conn.execute(f"SELECT r.id, r.title FROM resources r WHERE {condition} AND r.title LIKE ? ESCAPE '\\'"
                        " ORDER BY r.title, r.id LIMIT ?", [*params, _like(text), limit]).fetchall()
