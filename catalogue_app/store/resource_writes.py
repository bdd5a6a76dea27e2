"""Writing resources: create, update fields and relations, delete. Called inside write transactions."""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
import uuid
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store import origins, resources

# Columns a client may set directly (after validation by the API layer).
COLUMNS = ("title", "abstract", "attribution", "doi", "edition", "purpose", "maintenance_frequency",
           "constraints_other", "supplemental_information", "data_quality_statement", "language", "srid",
           "date", "date_type", "temporal_extent_start", "temporal_extent_end", "category_id", "license_id",
           "restriction_code_type", "spatial_representation_type", "group_id", "featured", "advertised",
           "is_published", "is_approved", "metadata_only", "metadata_uploaded_preserve", "subtype", "blob",
           "bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1", "ll_x0", "ll_y0", "ll_x1", "ll_y1")


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or "keyword"


def create(conn: sqlite3.Connection, resource_type: str, owner_id: int, values: dict[str, Any],
           public: bool = True) -> int:
    stamp = now()
    row = {k: values[k] for k in COLUMNS if k in values}
    row.update({"uuid": values.get("uuid") or str(uuid.uuid4()), "resource_type": resource_type,
                "owner_id": owner_id, "created": stamp, "last_updated": stamp})
    row.setdefault("date", stamp)
    row.setdefault("title", "")
    names = ", ".join(row)
    rid = conn.execute(f"INSERT INTO resources ({names}) VALUES ({', '.join('?' * len(row))})",
                       list(row.values())).lastrowid
    if public:
        perms = ["view_resourcebase"] + (["download_resourcebase"] if resource_type in resources.DOWNLOADABLE else [])
        resources.grant(conn, rid, perms, group_id=resources.ANONYMOUS_GROUP_ID)
    return rid


def update(conn: sqlite3.Connection, resource_id: int, values: dict[str, Any]) -> None:
    row = {k: values[k] for k in COLUMNS if k in values}
    row["last_updated"] = now()
    assignments = ", ".join(f"{k} = ?" for k in row)
    conn.execute(f"UPDATE resources SET {assignments} WHERE id = ?", [*row.values(), resource_id])


def set_keywords(conn: sqlite3.Connection, resource_id: int, names: list[str]) -> None:
    conn.execute("DELETE FROM resource_keywords WHERE resource_id = ?", (resource_id,))
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        slug = slugify(name)
        conn.execute("INSERT OR IGNORE INTO keywords (name, slug) VALUES (?, ?)", (name, slug))
        conn.execute("INSERT OR IGNORE INTO resource_keywords (resource_id, keyword_id)"
                     " SELECT ?, id FROM keywords WHERE slug = ?", (resource_id, slug))


def set_tkeywords(conn: sqlite3.Connection, resource_id: int, ids: list[int]) -> None:
    conn.execute("DELETE FROM resource_tkeywords WHERE resource_id = ?", (resource_id,))
    conn.executemany("INSERT OR IGNORE INTO resource_tkeywords (resource_id, tkeyword_id) VALUES (?, ?)",
                     [(resource_id, i) for i in ids])


def set_contacts(conn: sqlite3.Connection, resource_id: int, role: str, user_ids: list[int]) -> None:
    conn.execute("DELETE FROM resource_contacts WHERE resource_id = ? AND role = ?", (resource_id, role))
    conn.executemany("INSERT OR IGNORE INTO resource_contacts (resource_id, role, user_id, position) VALUES (?, ?, ?, ?)",
                     [(resource_id, role, uid, pos) for pos, uid in enumerate(user_ids)])


def set_contact_names(conn: sqlite3.Connection, resource_id: int, role: str, names: list[dict[str, str]]) -> None:
    """The contacts of a role that are no users: each {"name", "organization", "email"}, in order."""
    conn.execute("DELETE FROM resource_contact_names WHERE resource_id = ? AND role = ?", (resource_id, role))
    conn.executemany("INSERT INTO resource_contact_names (resource_id, role, position, name, organization, email)"
                     " VALUES (?, ?, ?, ?, ?, ?)",
                     [(resource_id, role, pos, c.get("name") or "", c.get("organization") or "", c.get("email") or "")
                      for pos, c in enumerate(names)])


def set_regions_from_extent(conn: sqlite3.Connection, resource_id: int) -> None:
    """Attach the countries whose boxes intersect the resource's WGS84 box (as GeoNode does)."""
    conn.execute("DELETE FROM resource_regions WHERE resource_id = ?", (resource_id,))
    conn.execute(
        "INSERT INTO resource_regions (resource_id, region_id) SELECT r.id, g.id FROM resources r JOIN regions g"
        " ON g.level = 2 AND g.bbox_x0 <= r.ll_x1 AND g.bbox_x1 >= r.ll_x0 AND g.bbox_y0 <= r.ll_y1"
        " AND g.bbox_y1 >= r.ll_y0 WHERE r.id = ? AND r.ll_x0 IS NOT NULL AND r.ll_x0 <= r.ll_x1"
        " AND (r.ll_x1 - r.ll_x0) < 180", (resource_id,))


def set_regions(conn: sqlite3.Connection, resource_id: int, region_ids: list[int]) -> None:
    conn.execute("DELETE FROM resource_regions WHERE resource_id = ?", (resource_id,))
    conn.executemany("INSERT OR IGNORE INTO resource_regions (resource_id, region_id) VALUES (?, ?)",
                     [(resource_id, i) for i in region_ids])


def apply_changes(conn: sqlite3.Connection, resource_id: int, changes: dict[str, Any]) -> None:
    """Validated changes (the API layer's ``Cleaned`` as a plain dict): column values,
    keywords, thesaurus keywords, contacts, regions, whether regions follow the extent (the
    regions named win), and the original elsewhere that the resource is a copy of."""
    update(conn, resource_id, changes.get("values") or {})
    if changes.get("keywords") is not None:
        set_keywords(conn, resource_id, changes["keywords"])
    if changes.get("tkeywords") is not None:
        set_tkeywords(conn, resource_id, changes["tkeywords"])
    for role, ids in (changes.get("contacts") or {}).items():
        set_contacts(conn, resource_id, role, ids)
    for role, names in (changes.get("contact_names") or {}).items():
        set_contact_names(conn, resource_id, role, names)
    if changes.get("regions_from_extent"):
        set_regions_from_extent(conn, resource_id)
    if changes.get("regions") is not None:
        set_regions(conn, resource_id, changes["regions"])
    if changes.get("origin") is not None:
        origins.set_elsewhere(conn, resource_id, changes["origin"]["url"], changes["origin"]["title"])


def delete(conn: sqlite3.Connection, resource_id: int, by_user_id: int | None = None) -> None:
    """Delete the resource (its relations follow by foreign keys and triggers) and bury its
    tombstone, saying who deleted it (None: the catalogue itself, e.g. a harvester), in the
    same transaction: every route that deletes a resource comes here."""
    from catalogue_app.store import versions  # (versions imports this module)

    row = conn.execute("SELECT uuid, resource_type, title FROM resources WHERE id = ?", (resource_id,)).fetchone()
    if row is None:
        return
    by = conn.execute("SELECT username FROM users WHERE id = ?", (by_user_id,)).fetchone() if by_user_id else None
    versions.bury(conn, row["uuid"], resource_id, row["resource_type"], row["title"],
                  by_user_id if by is not None else None, by[0] if by is not None else None)
    conn.execute("DELETE FROM resources WHERE id = ?", (resource_id,))


def add_files(conn: sqlite3.Connection, resource_id: int, files: list[tuple[str, int, str | None]]) -> None:
    """The rows of a resource's stored files: (name, size, mime type), under its folder in files/."""
    stamp = now()
    conn.executemany("INSERT INTO resource_files (resource_id, name, size, mime_type, created) VALUES (?, ?, ?, ?, ?)",
                     [(resource_id, name, size, mime or "application/octet-stream", stamp) for name, size, mime in files])


def lookup_id(conn: sqlite3.Connection, table: str, column: str, value: Any) -> int | None:
    """The id of a category, licence or similar row named by ``column``."""
    if table not in ("categories", "licenses", "users", "groups", "thesaurus_keywords", "regions") or \
            column not in ("id", "identifier", "username", "name", "code"):
        raise ValueError(f"{table}.{column}")
    row = conn.execute(f"SELECT id FROM {table} WHERE {column} = ?", (value,)).fetchone()
    return row[0] if row else None


def blob(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# Not carried over to a copy: identity, ownership, times, counters and derived state.
NOT_COPIED = {"id", "uuid", "owner_id", "created", "last_updated", "public_view", "dirty", "popular_count",
              "share_count", "featured", "alternate"}


def copy(conn: sqlite3.Connection, resource_id: int, owner_id: int, title: str | None = None,
         new_uuid: str | None = None) -> int:
    """A copy of a resource's record owned by ``owner_id``, with its keywords, thesaurus
    keywords, regions, contacts, extra metadata, uploaded ISO XML, document details and file
    rows (the caller copies the files), and the permissions of a new resource; it remembers its
    original (store/origins.py)."""
    columns = [r[1] for r in conn.execute("PRAGMA table_info(resources)") if r[1] not in NOT_COPIED]
    names = ", ".join(columns)
    stamp = now()
    new_id = conn.execute(
        f"INSERT INTO resources (uuid, owner_id, created, last_updated, {names})"
        f" SELECT ?, ?, ?, ?, {names} FROM resources WHERE id = ?",
        (new_uuid or str(uuid.uuid4()), owner_id, stamp, stamp, resource_id)).lastrowid
    if title:
        conn.execute("UPDATE resources SET title = ? WHERE id = ?", (title, new_id))
    for table, key in (("resource_keywords", "keyword_id"), ("resource_tkeywords", "tkeyword_id"),
                       ("resource_regions", "region_id")):
        conn.execute(f"INSERT INTO {table} (resource_id, {key}) SELECT ?, {key} FROM {table} WHERE resource_id = ?",
                     (new_id, resource_id))
    conn.execute("INSERT INTO resource_contacts (resource_id, role, user_id, position)"
                 " SELECT ?, role, user_id, position FROM resource_contacts WHERE resource_id = ?", (new_id, resource_id))
    conn.execute("INSERT INTO resource_contact_names (resource_id, role, position, name, organization, email)"
                 " SELECT ?, role, position, name, organization, email FROM resource_contact_names"
                 " WHERE resource_id = ?", (new_id, resource_id))
    conn.execute("INSERT INTO extra_metadata (resource_id, metadata) SELECT ?, metadata FROM extra_metadata"
                 " WHERE resource_id = ? ORDER BY id", (new_id, resource_id))
    conn.execute("INSERT INTO resource_files (resource_id, name, size, mime_type, created)"
                 " SELECT ?, name, size, mime_type, ? FROM resource_files WHERE resource_id = ?",
                 (new_id, stamp, resource_id))
    conn.execute("INSERT INTO iso_metadata (resource_id, xml, uploaded) SELECT ?, xml, uploaded FROM iso_metadata"
                 " WHERE resource_id = ?", (new_id, resource_id))
    conn.execute("INSERT INTO documents (resource_id, extension, file_name, doc_url, mime_type)"
                 " SELECT ?, extension, file_name, doc_url, mime_type FROM documents WHERE resource_id = ?",
                 (new_id, resource_id))
    origins.record_copy(conn, new_id, resource_id)  # (the original's origin is not the copy's)
    kind = conn.execute("SELECT resource_type FROM resources WHERE id = ?", (new_id,)).fetchone()[0]
    perms = ["view_resourcebase"] + (["download_resourcebase"] if kind in resources.DOWNLOADABLE else [])
    resources.grant(conn, new_id, perms, group_id=resources.ANONYMOUS_GROUP_ID)
    return new_id
