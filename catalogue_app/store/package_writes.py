"""A package's record (packages/records, docs/package-format.md) written as rows with this
catalogue's ids: a new resource with the record's uuid, or the record written over an existing
one. Every other row is named in a record by a natural key (usernames, group names, keyword
names, region codes, category and licence identifiers, dataset uuids); what is not known here
is left out and said in the notes the functions return (an unknown owner: the importer owns it).
Called inside the import's write transaction, one savepoint per resource."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app.clock import now
from catalogue_app.store import datasets, map_layers, resource_writes, resources
from catalogue_app.store.permissions import NAMES, SPECIAL_GROUP_PERMS
from catalogue_app.store.users import ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID

# Columns of ``resources`` a record's "fields" never sets: identity, ownership and what this
# catalogue derives itself.
NOT_FROM_RECORD = {"id", "uuid", "resource_type", "owner_id", "group_id", "category_id", "license_id", "thumbnail_url",
                   "popular_count", "share_count", "dirty", "state", "blob", "public_view", "alternate"}
# Not written over an existing resource either: when it was made here, and whether it is
# metadata only (the other side's copy may be, for want of the data, while ours has them).
NOT_UPDATED = NOT_FROM_RECORD | {"created", "metadata_only"}
DATASET_COLUMNS = ("store", "charset", "geometry_type", "feature_count", "crs_wkt", "has_time", "time_attribute",
                   "featureinfo_custom_template", "use_featureinfo_custom_template")
ATTRIBUTE_COLUMNS = ("attribute", "attribute_type", "attribute_label", "description", "display_order", "visible")
LAYER_COLUMNS = ("name", "position", "visibility", "opacity", "current_style", "extra_params")


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def user_id(conn: sqlite3.Connection, username: str | None) -> int | None:
    if not username:
        return None
    row = conn.execute("SELECT id FROM users WHERE username = ? COLLATE NOCASE", (username,)).fetchone()
    return row[0] if row else None


def group_id(conn: sqlite3.Connection, name: str | None) -> int | None:
    if not name:
        return None
    row = conn.execute("SELECT id FROM groups WHERE name = ?", (name,)).fetchone()
    return row[0] if row else None


def resource_by_uuid(conn: sqlite3.Connection, uuid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM resources WHERE uuid = ?",
                        (uuid,)).fetchone()


def tombstone(conn: sqlite3.Connection, uuid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT uuid, resource_type, title, deleted FROM resource_tombstones WHERE uuid = ?",
                        (uuid,)).fetchone()


def _fields(conn: sqlite3.Connection, record: dict[str, Any], skip: set[str]) -> dict[str, Any]:
    known = set(_columns(conn, "resources")) - skip
    return {k: v for k, v in (record.get("fields") or {}).items() if k in known}


def _references(conn: sqlite3.Connection, record: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """group_id, category_id, license_id and blob by their natural keys (unknown ones: NULL, noted)."""
    out: dict[str, Any] = {"group_id": None, "category_id": None, "license_id": None,
                           "blob": None if record.get("blob") is None else json.dumps(record["blob"], ensure_ascii=False)}
    if record.get("group"):
        out["group_id"] = group_id(conn, record["group"])
        if out["group_id"] is None:
            notes.append(f"The group {record['group']!r} is not known here: left out.")
    for key, table in (("category", "categories"), ("license", "licenses")):
        if record.get(key):
            found = resource_writes.lookup_id(conn, table, "identifier", record[key])
            if found is None:
                notes.append(f"The {key} {record[key]!r} is not known here: left out.")
            out[f"{key}_id"] = found
    return out


def create(conn: sqlite3.Connection, record: dict[str, Any], *, uuid: str, owner_id: int,
           title: str | None = None) -> tuple[int, list[str]]:
    """A new resource from the record (its fields, owner, group, category, licence), with the
    uuid given; no permissions yet (``write_relations`` sets them). Returns its id and notes."""
    notes: list[str] = []
    row = {**_fields(conn, record, NOT_FROM_RECORD), **_references(conn, record, notes)}
    if title is not None:
        row["title"] = title
    stamp = now()
    row.setdefault("created", stamp)
    row.setdefault("last_updated", stamp)
    row.update({"uuid": uuid, "resource_type": record["resource_type"], "owner_id": owner_id})
    rid = conn.execute(f"INSERT INTO resources ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                       list(row.values())).lastrowid
    return rid, notes


def update(conn: sqlite3.Connection, rid: int, record: dict[str, Any]) -> list[str]:
    """The record's fields, category and licence written over the resource ``rid``. Who owns it,
    its group and its permissions stay as they are here: they travel to create a resource, but
    the other side may not know all the users and groups named here, so what it sends back of
    them is not to be trusted over ours. Returns notes."""
    notes: list[str] = []
    references = _references(conn, record, notes)
    references.pop("group_id")
    notes = [n for n in notes if not n.startswith("The group ")]
    row = {**_fields(conn, record, NOT_UPDATED), **references}
    row["last_updated"] = now()
    conn.execute(f"UPDATE resources SET {', '.join(f'{k} = ?' for k in row)} WHERE id = ?", [*row.values(), rid])
    return notes


def write_relations(conn: sqlite3.Connection, rid: int, record: dict[str, Any], *, updating: bool = False) -> list[str]:
    """Keywords, thesaurus keywords, regions, contacts, extra metadata, remote links, origin and
    permissions of the record, replacing the resource's own. ``updating`` an existing resource,
    its permissions stay as they are here, and a contact role the record leaves empty keeps its
    contacts here (the other side leaves out the users it does not know). Returns notes."""
    notes: list[str] = []
    resource_writes.set_keywords(conn, rid, list(record.get("keywords") or []))
    tk_ids = []
    for item in record.get("tkeywords") or []:
        found = conn.execute("SELECT k.id FROM thesaurus_keywords k JOIN thesauri t ON t.id = k.thesaurus_id"
                             " WHERE t.identifier = ? AND k.about = ?",
                             (item.get("thesaurus"), item.get("about"))).fetchone()
        if found is None:
            notes.append(f"The thesaurus keyword {item.get('about')!r} is not known here: left out.")
        else:
            tk_ids.append(found[0])
    resource_writes.set_tkeywords(conn, rid, tk_ids)
    region_ids = []
    for code in record.get("regions") or []:
        found = resource_writes.lookup_id(conn, "regions", "code", code)
        if found is not None:
            region_ids.append(found)
    resource_writes.set_regions(conn, rid, region_ids)
    contacts = [c for c in record.get("contacts") or [] if isinstance(c, dict)]
    named = [c for c in record.get("contact_names") or [] if isinstance(c, dict) and isinstance(c.get("role"), str)]
    if updating:  # only the roles the record names are replaced
        roles = sorted({str(c.get("role")) for c in contacts} | {c["role"] for c in named})
        for table in ("resource_contacts", "resource_contact_names"):
            conn.execute(f"DELETE FROM {table} WHERE resource_id = ? AND role IN ({', '.join('?' * len(roles))})",
                         [rid, *roles])
    else:
        conn.execute("DELETE FROM resource_contacts WHERE resource_id = ?", (rid,))
        conn.execute("DELETE FROM resource_contact_names WHERE resource_id = ?", (rid,))
    by_role: dict[str, list[dict[str, Any]]] = {}
    for contact in sorted(named, key=lambda c: c.get("position") if isinstance(c.get("position"), int) else 0):
        by_role.setdefault(contact["role"], []).append(
            {k: str(contact.get(k) or "")[:255] for k in ("name", "organization", "email")})
    for role, names in by_role.items():
        resource_writes.set_contact_names(conn, rid, role, names)
    for contact in contacts:
        uid = user_id(conn, contact.get("username"))
        if uid is None:
            notes.append(f"The contact {contact.get('username')!r} ({contact.get('role')}) is not a user here: left out.")
            continue
        conn.execute("INSERT OR IGNORE INTO resource_contacts (resource_id, role, user_id, position) VALUES (?, ?, ?, ?)",
                     (rid, contact.get("role"), uid, contact.get("position") or 0))
    conn.execute("DELETE FROM extra_metadata WHERE resource_id = ?", (rid,))
    conn.executemany("INSERT INTO extra_metadata (resource_id, metadata) VALUES (?, ?)",
                     [(rid, json.dumps(item, ensure_ascii=False)) for item in record.get("extra_metadata") or []])
    conn.execute("DELETE FROM remote_links WHERE resource_id = ?", (rid,))
    link_columns = set(_columns(conn, "remote_links")) - {"resource_id"}
    for link in record.get("links") or []:
        values = {k: v for k, v in link.items() if k in link_columns and v is not None}
        if "url" in values:
            conn.execute(f"INSERT INTO remote_links (resource_id, {', '.join(values)}) VALUES (?{', ?' * len(values)})",
                         [rid, *values.values()])
    if not updating:
        notes += set_permissions(conn, rid, record.get("permissions") or {})
    return notes


def set_permissions(conn: sqlite3.Connection, rid: int, permissions: dict[str, Any]) -> list[str]:
    """The record's permissions by user and group name, replacing the resource's rows (the owner
    and the superusers hold everything without rows; the special groups only what everyone may
    hold). Unknown users, groups and permission names are skipped and noted."""
    notes: list[str] = []
    row = conn.execute("SELECT owner_id FROM resources WHERE id = ?", (rid,)).fetchone()
    skipped = {r[0] for r in conn.execute("SELECT id FROM users WHERE is_superuser = 1")} | {row[0]}
    conn.execute("DELETE FROM resource_perms WHERE resource_id = ?", (rid,))
    rows: list[tuple[int, int | None, int | None, str]] = []
    for name, perms in (permissions.get("users") or {}).items():
        uid = user_id(conn, name)
        if uid is None:
            notes.append(f"The user {name!r} is not known here: their permissions were left out.")
            continue
        if uid not in skipped:
            rows += [(rid, uid, None, p) for p in perms if p in NAMES]
    for name, perms in (permissions.get("groups") or {}).items():
        gid = group_id(conn, name)
        if gid is None:
            notes.append(f"The group {name!r} is not known here: its permissions were left out.")
            continue
        allowed = SPECIAL_GROUP_PERMS if gid in (ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID) else NAMES
        rows += [(rid, None, gid, p) for p in perms if p in allowed]
    conn.executemany("INSERT OR IGNORE INTO resource_perms (resource_id, user_id, group_id, perm) VALUES (?, ?, ?, ?)",
                     rows)
    resources.refresh_public_view(conn, rid)
    return notes


def mark_metadata_only(conn: sqlite3.Connection, rid: int) -> None:
    """A dataset that came without its data: GeoNode's metadata_only flag says so."""
    conn.execute("UPDATE resources SET metadata_only = 1 WHERE id = ?", (rid,))


def set_thumbnail(conn: sqlite3.Connection, rid: int, url: str | None) -> None:
    conn.execute("UPDATE resources SET thumbnail_url = ? WHERE id = ?", (url, rid))


# -- the types' own rows ------------------------------------------------------------------------------
def write_dataset(conn: sqlite3.Connection, rid: int, record: dict[str, Any], *, folder: str | None,
                  creating: bool, styles: list[tuple[dict[str, Any], bytes]]) -> str | None:
    """A dataset's details, attributes and styles; its ``folder`` under files/ (None: keep the
    one it has). A new dataset keeps the record's alternate when it is free here. Returns the
    folder the dataset had before (None: none)."""
    details = record.get("dataset") or {}
    values = {k: details[k] for k in DATASET_COLUMNS if k in details}
    old = datasets.folder_of(conn, rid)
    if creating or old is None:
        wanted = (record.get("fields") or {}).get("alternate") or f"{datasets.WORKSPACE}:{details.get('name') or rid}"
        taken = conn.execute("SELECT 1 FROM resources WHERE alternate = ? AND id <> ?", (wanted, rid)).fetchone()
        workspace, _, name = wanted.partition(":")
        alternate = wanted if not taken and name else datasets.unique_alternate(conn, name or details.get("name") or "layer")
        workspace, _, name = alternate.partition(":")
        conn.execute("UPDATE resources SET alternate = ? WHERE id = ?", (alternate, rid))
        row = {"resource_id": rid, "name": name, "workspace": workspace,
               "source_name": details.get("source_name") or name, "folder": folder or f"none-{rid}", **values}
        conn.execute(f"INSERT INTO datasets ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    else:
        if folder is not None:
            values["folder"] = folder
        if values:
            conn.execute(f"UPDATE datasets SET {', '.join(f'{k} = ?' for k in values)} WHERE resource_id = ?",
                         [*values.values(), rid])
    conn.execute("DELETE FROM dataset_attributes WHERE resource_id = ?", (rid,))
    for item in details.get("attributes") or []:
        row = {k: item[k] for k in ATTRIBUTE_COLUMNS if k in item}
        conn.execute(f"INSERT INTO dataset_attributes (resource_id, {', '.join(row)}) VALUES (?{', ?' * len(row)})",
                     [rid, *row.values()])
    _styles(conn, rid, styles)
    return None if creating else old


def _styles(conn: sqlite3.Connection, rid: int, styles: list[tuple[dict[str, Any], bytes]]) -> None:
    """The record's styles (a style named like another dataset's gets this layer's name)."""
    if not styles:
        return
    layer = conn.execute("SELECT workspace, name FROM datasets WHERE resource_id = ?", (rid,)).fetchone()
    conn.execute("UPDATE datasets SET default_style_id = NULL WHERE resource_id = ?", (rid,))
    conn.execute("DELETE FROM styles WHERE resource_id = ?", (rid,))
    stamp = now()
    default_id = None
    for i, (style, body) in enumerate(styles):
        name = style.get("name") or layer["name"]
        if conn.execute("SELECT 1 FROM styles WHERE name = ?", (name,)).fetchone():
            name = f"{layer['name']}_{i + 1}" if i else layer["name"]
            while conn.execute("SELECT 1 FROM styles WHERE name = ?", (name,)).fetchone():
                name += "_"
        sid = conn.execute("INSERT INTO styles (resource_id, name, workspace, sld_title, sld_body, generated, created,"
                           " last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (rid, name, style.get("workspace") or layer["workspace"], style.get("sld_title"), body,
                            int(bool(style.get("generated"))), stamp, stamp)).lastrowid
        if style.get("default") or default_id is None:
            default_id = sid if style.get("default") or default_id is None else default_id
    conn.execute("UPDATE datasets SET default_style_id = ? WHERE resource_id = ?", (default_id, rid))


def set_files(conn: sqlite3.Connection, rid: int, rows: list[tuple[str, int, str | None]]) -> None:
    """The resource's file rows, replacing those it had."""
    conn.execute("DELETE FROM resource_files WHERE resource_id = ?", (rid,))
    resource_writes.add_files(conn, rid, rows)


def write_document(conn: sqlite3.Connection, rid: int, record: dict[str, Any]) -> None:
    doc = record.get("document") or {}
    conn.execute("INSERT OR REPLACE INTO documents (resource_id, extension, file_name, doc_url, mime_type)"
                 " VALUES (?, ?, ?, ?, ?)", (rid, doc.get("extension"), doc.get("file_name"), doc.get("doc_url"),
                                             doc.get("mime_type")))


def write_remote_layer(conn: sqlite3.Connection, rid: int, record: dict[str, Any]) -> None:
    remote = record.get("remote_layer")
    conn.execute("DELETE FROM remote_layers WHERE resource_id = ?", (rid,))
    if remote:
        known = set(_columns(conn, "remote_layers")) - {"resource_id"}
        values = {k: v for k, v in remote.items() if k in known}
        conn.execute(f"INSERT INTO remote_layers (resource_id, {', '.join(values)}) VALUES (?{', ?' * len(values)})",
                     [rid, *values.values()])


def write_map(conn: sqlite3.Connection, rid: int, record: dict[str, Any]) -> list[str]:
    """A map's layers, each finding its dataset by uuid (a dataset not here: the layer keeps its
    name with no dataset, noted)."""
    notes: list[str] = []
    conn.execute("DELETE FROM map_layers WHERE map_id = ?", (rid,))
    for layer in (record.get("map") or {}).get("layers") or []:
        values = {k: layer[k] for k in LAYER_COLUMNS if k in layer and layer[k] is not None}
        if isinstance(values.get("extra_params"), (dict, list)):
            values["extra_params"] = json.dumps(values["extra_params"])
        dataset = resource_by_uuid(conn, layer["dataset"]) if layer.get("dataset") else None
        if layer.get("dataset") and dataset is None:
            notes.append(f"The layer {layer.get('name')!r}: its dataset is not here; kept by name only.")
        values["dataset_id"] = dataset["id"] if dataset is not None else None
        values.setdefault("name", layer.get("name") or "")
        map_layers.insert(conn, rid, values)
    map_layers.sync_links(conn, rid)
    return notes


def write_geoapp(conn: sqlite3.Connection, rid: int, record: dict[str, Any]) -> None:
    name = (record.get("geoapp") or {}).get("name")
    if not name:
        return
    while conn.execute("SELECT 1 FROM geoapps WHERE name = ? AND resource_id <> ?", (name, rid)).fetchone():
        name += "_2"
    conn.execute("INSERT OR REPLACE INTO geoapps (resource_id, name) VALUES (?, ?)", (rid, name))


def write_origin(conn: sqlite3.Connection, rid: int, record: dict[str, Any]) -> None:
    origin = record.get("origin")
    if not origin or origin.get("kind") not in ("copy", "harvested"):
        return
    conn.execute("INSERT OR REPLACE INTO resource_origins (resource_id, kind, title, url, harvester, remote_url)"
                 " VALUES (?, ?, ?, ?, ?, ?)", (rid, origin["kind"], origin.get("title") or "", origin.get("url"),
                                                origin.get("harvester") or "", origin.get("remote_url")))


def link_resources(conn: sqlite3.Connection, rid: int, linked: list[dict[str, Any]]) -> list[str]:
    """The record's links to other resources, by uuid; a target not (yet) here is left out."""
    missing = []
    conn.execute("DELETE FROM linked_resources WHERE source_id = ?", (rid,))
    for item in linked:
        target = resource_by_uuid(conn, item.get("uuid") or "")
        if target is None or target["id"] == rid:
            missing.append(item.get("uuid"))
            continue
        conn.execute("INSERT OR IGNORE INTO linked_resources (source_id, target_id, internal) VALUES (?, ?, ?)",
                     (rid, target["id"], int(bool(item.get("internal")))))
    return [f"Linked resource {u} is not here: the link was left out." for u in missing]


# -- history ---------------------------------------------------------------------------------------------
HISTORY_KINDS = ("data", "replace", "metadata", "revert")


def add_history(conn: sqlite3.Connection, rid: int, history: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """The record's versions added to the resource's history: same uuids (a version known here
    already is skipped), their own numbers unless taken here (then numbered after ours).
    Returns (uuid, number given) of those added."""
    added = []
    for v in sorted(history or [], key=lambda v: v.get("number") or 0):
        if not v.get("uuid") or conn.execute("SELECT 1 FROM resource_versions WHERE uuid = ?", (v["uuid"],)).fetchone():
            continue
        number = v.get("number") or 0
        if number < 1 or conn.execute("SELECT 1 FROM resource_versions WHERE resource_id = ? AND number = ?",
                                      (rid, number)).fetchone():
            number = (conn.execute("SELECT MAX(number) FROM resource_versions WHERE resource_id = ?",
                                   (rid,)).fetchone()[0] or 0) + 1
        uid = user_id(conn, v.get("username"))
        changes = v.get("changes")
        conn.execute(
            "INSERT INTO resource_versions (uuid, resource_id, number, created, user_id, username, via, kind, state,"
            " summary, changes, reverts_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'done', ?, ?, ?)",
            (v["uuid"], rid, number, v.get("created") or now(), uid, v.get("username"), v.get("via") or "package",
             v.get("kind") or "metadata",
             v["summary"] if isinstance(v.get("summary"), str) else json.dumps(v.get("summary") or {}),
             changes if isinstance(changes, str) or changes is None else json.dumps(changes, default=str),
             v.get("reverts_to")))
        added.append((v["uuid"], number))
    return added


def latest_version(conn: sqlite3.Connection, rid: int) -> int:
    row = conn.execute("SELECT MAX(number) FROM resource_versions WHERE resource_id = ? AND state = 'done'",
                       (rid,)).fetchone()
    return row[0] or 0


def data_version(conn: sqlite3.Connection, rid: int) -> int:
    row = conn.execute("SELECT data_version FROM datasets WHERE resource_id = ?", (rid,)).fetchone()
    return row[0] if row else 0


def set_data_version(conn: sqlite3.Connection, rid: int, number: int) -> None:
    conn.execute("UPDATE datasets SET data_version = ? WHERE resource_id = ?", (number, rid))


def data_folder(conn: sqlite3.Connection, rid: int) -> str | None:
    """The folder under files/ of a dataset with data of its own (None: none, or remote)."""
    row = conn.execute("SELECT d.folder FROM datasets d WHERE d.resource_id = ? AND NOT EXISTS"
                       " (SELECT 1 FROM remote_layers rl WHERE rl.resource_id = d.resource_id)", (rid,)).fetchone()
    return row[0] if row else None


def switch_data_folder(conn: sqlite3.Connection, rid: int, folder: str) -> None:
    conn.execute("UPDATE datasets SET folder = ? WHERE resource_id = ?", (folder, rid))


def no_data_folder(uuid: str) -> str:
    """The folder name a dataset without data of its own is given (as a remote one's)."""
    from catalogue_app.store.remote_layers import folder_name

    return folder_name(uuid)


def srid_of(conn: sqlite3.Connection, rid: int) -> str | None:
    row = conn.execute("SELECT srid FROM resources WHERE id = ?", (rid,)).fetchone()
    return row[0] if row else None


def set_iso(conn: sqlite3.Connection, rid: int, xml: bytes) -> None:
    """An uploaded ISO document the record carried."""
    conn.execute("INSERT OR REPLACE INTO iso_metadata (resource_id, xml, uploaded) VALUES (?, ?, ?)", (rid, xml, now()))
