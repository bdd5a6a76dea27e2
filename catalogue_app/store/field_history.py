"""A resource's fields as its history keeps them: read as one plain dict, and written back.

``snapshot`` reads the fields a write may change, named as the API names them and valued as small
JSON (relations by their names: a category's identifier, a group's name, users by username,
regions by code, keywords by name, thesaurus keywords by id). A metadata version is the
difference of two snapshots taken in the write's transaction (services/history.py).
``restore`` writes such values back (a revert), naming what it could not find any more.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.store import datasets, geoapps, origins, resource_writes

# Plain columns, read and written as they are: the API's name is the column's.
TEXT = ("title", "abstract", "attribution", "doi", "edition", "purpose", "maintenance_frequency",
        "constraints_other", "supplemental_information", "data_quality_statement", "language", "date",
        "date_type", "temporal_extent_start", "temporal_extent_end", "restriction_code_type",
        "spatial_representation_type", "subtype")
FLAGS = ("featured", "advertised", "is_published", "is_approved", "metadata_only", "metadata_uploaded_preserve")
CONTACT_ROLES = ("poc", "metadata_author", "processor", "publisher", "custodian", "distributor",
                 "resource_user", "resource_provider", "originator", "principal_investigator")
NAMED_KEYS = ("name", "organization", "email")  # a contact that is no user
BOX = ("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1")
LL_BOX = ("ll_x0", "ll_y0", "ll_x1", "ll_y1")
ATTRIBUTE_KEYS = ("attribute_label", "description", "visible", "display_order")

_COLUMNS = ", ".join((*TEXT, *FLAGS, *BOX, *LL_BOX, "srid", "blob", "resource_type", "owner_id",
                      "category_id", "license_id", "group_id"))


def snapshot(conn: sqlite3.Connection, resource_id: int) -> dict[str, Any] | None:
    """The resource's fields by name (None: no such resource)."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM resources WHERE id = ?", (resource_id,)).fetchone()
    if row is None:
        return None
    out: dict[str, Any] = {name: row[name] for name in TEXT}
    out.update({name: bool(row[name]) for name in FLAGS})
    out["owner"] = _name(conn, "SELECT username FROM users WHERE id = ?", row["owner_id"])
    out["category"] = _name(conn, "SELECT identifier FROM categories WHERE id = ?", row["category_id"])
    out["license"] = _name(conn, "SELECT identifier FROM licenses WHERE id = ?", row["license_id"])
    out["group"] = _name(conn, "SELECT name FROM groups WHERE id = ?", row["group_id"])
    box = [row[k] for k in BOX]
    out["extent"] = None if any(v is None for v in box) else {
        "coords": box, "srid": row["srid"], "ll": [row[k] for k in LL_BOX]}
    out["blob"] = _json(row["blob"])
    out["keywords"] = sorted(r[0] for r in conn.execute(
        "SELECT k.name FROM resource_keywords rk JOIN keywords k ON k.id = rk.keyword_id WHERE rk.resource_id = ?",
        (resource_id,)))
    out["tkeywords"] = sorted(r[0] for r in conn.execute(
        "SELECT tkeyword_id FROM resource_tkeywords WHERE resource_id = ?", (resource_id,)))
    out["regions"] = sorted(r[0] for r in conn.execute(
        "SELECT g.code FROM resource_regions rr JOIN regions g ON g.id = rr.region_id WHERE rr.resource_id = ?",
        (resource_id,)))
    contacts: dict[str, list[Any]] = {role: [] for role in CONTACT_ROLES}
    for role, name in conn.execute(
            "SELECT c.role, u.username FROM resource_contacts c JOIN users u ON u.id = c.user_id"
            " WHERE c.resource_id = ? ORDER BY c.role, c.position, u.username", (resource_id,)):
        if role in contacts:
            contacts[role].append(name)
    for role, *named in conn.execute(
            "SELECT role, name, organization, email FROM resource_contact_names WHERE resource_id = ?"
            " ORDER BY role, position", (resource_id,)):
        if role in contacts:  # contacts that are no users: after the role's users
            contacts[role].append(dict(zip(NAMED_KEYS, named)))
    out.update(contacts)
    origin = origins.get(conn, resource_id)
    out["origin"] = ({"url": origin["url"], "title": origin["title"]}
                     if origin is not None and not origins.recorded_here(origin) else None)
    if row["resource_type"] == "dataset":
        out["attribute_set"] = {a["attribute"]: {k: bool(a[k]) if k == "visible" else a[k] for k in ATTRIBUTE_KEYS}
                                for a in datasets.attributes(conn, resource_id)}
    elif row["resource_type"] not in ("document", "map"):
        out["name"] = _name(conn, "SELECT name FROM geoapps WHERE resource_id = ?", resource_id)
    return out


def naming_user(conn: sqlite3.Connection, user_id: int) -> list[int]:
    """The resources whose fields name the user: as owner, or in a contact role."""
    return [r[0] for r in conn.execute("SELECT id FROM resources WHERE owner_id = ? UNION SELECT resource_id FROM"
                                       " resource_contacts WHERE user_id = ? ORDER BY 1", (user_id, user_id))]


def in_group(conn: sqlite3.Connection, profile_id: int) -> list[int]:
    """The resources in the group of the group profile ``profile_id``."""
    return [r[0] for r in conn.execute("SELECT r.id FROM resources r JOIN group_profiles p ON p.group_id = r.group_id"
                                       " WHERE p.id = ? ORDER BY r.id", (profile_id,))]


def _name(conn: sqlite3.Connection, sql: str, key: Any) -> Any:
    if key is None:
        return None
    found = conn.execute(sql, (key,)).fetchone()
    return found[0] if found else None


def _json(text: Any) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def restore(conn: sqlite3.Connection, resource_id: int, values: dict[str, Any]) -> list[str]:
    """Write the fields ``values`` (as ``snapshot`` gives them) into the resource; returns the
    names of those naming something that no longer exists (a user, a category...), which the
    caller refuses (nothing of a refused write is kept)."""
    missing: list[str] = []
    columns: dict[str, Any] = {}
    for name, value in values.items():
        if name in TEXT:
            columns[name] = value
        elif name in FLAGS:
            columns[name] = int(bool(value))
        elif name in ("category", "license", "group"):
            table, key = {"category": ("categories", "identifier"), "license": ("licenses", "identifier"),
                          "group": ("groups", "name")}[name]
            found = None if value is None else resource_writes.lookup_id(conn, table, key, value)
            if value is not None and found is None:
                missing.append(name)
            columns[f"{name}_id"] = found
        elif name == "extent":
            if value is None:
                columns.update(dict.fromkeys((*BOX, *LL_BOX)))
            else:
                columns.update(zip(BOX, value["coords"]), srid=value["srid"])
                columns.update(zip(LL_BOX, value.get("ll") or value["coords"]))
        elif name == "blob":
            columns["blob"] = None if value is None else resource_writes.blob(value)
        elif name == "owner":
            found = None if value is None else resource_writes.lookup_id(conn, "users", "username", value)
            if found is None:
                missing.append(name)
            else:
                conn.execute("UPDATE resources SET owner_id = ? WHERE id = ?", (found, resource_id))
    if columns:
        resource_writes.update(conn, resource_id, columns)
    for name, value in values.items():
        if name == "keywords":
            resource_writes.set_keywords(conn, resource_id, list(value or []))
        elif name == "tkeywords":
            ids = [i for i in value or [] if resource_writes.lookup_id(conn, "thesaurus_keywords", "id", i) is not None]
            if len(ids) < len(value or []):
                missing.append(name)
            resource_writes.set_tkeywords(conn, resource_id, ids)
        elif name == "regions":
            ids = [resource_writes.lookup_id(conn, "regions", "code", code) for code in value or []]
            if None in ids:
                missing.append(name)
            resource_writes.set_regions(conn, resource_id, [i for i in ids if i is not None])
        elif name in CONTACT_ROLES:
            users = [u for u in value or [] if not isinstance(u, dict)]
            ids = [resource_writes.lookup_id(conn, "users", "username", u) for u in users]
            if None in ids:
                missing.append(name)
            resource_writes.set_contacts(conn, resource_id, name, [i for i in ids if i is not None])
            resource_writes.set_contact_names(conn, resource_id, name, [c for c in value or [] if isinstance(c, dict)])
        elif name == "origin":
            if not origins.recorded_here(origins.get(conn, resource_id)):
                origins.set_elsewhere(conn, resource_id, value["url"] if value else None,
                                      value["title"] if value else "")
        elif name == "attribute_set":
            for attribute, fields in (value or {}).items():
                attribute_id = datasets.attribute_id_named(conn, resource_id, attribute)
                if attribute_id is not None:
                    datasets.update_attribute(conn, resource_id, attribute_id,
                                              {k: fields[k] for k in ATTRIBUTE_KEYS if k in fields})
        elif name == "name" and value is not None:
            geoapps.set_name(conn, resource_id, value)
    return missing
