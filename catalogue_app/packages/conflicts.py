"""Conflicts of field packages: a resource changed both here and in the package's catalogue since
the two last agreed (or deleted here and changed there).

The import (packages/importer.py) keeps our copy as it is and hands the incoming one to
``set_aside``: its record is stored in a ``package_conflicts`` row, its files are moved under
files/ into a folder of the conflict's own (``aside-<conflict id>``), and the local resource's
history gains a version of kind ``incoming``, state ``aside``, naming the package and who changed
it there, with the field differences between ours and theirs ({field: [ours, theirs]}). Nothing
of the local resource changes.

``resolve`` keeps ours (the aside files are swept; the version row stays, as a record, state
``dismissed``), theirs (the import's ``apply_update`` with the aside record and files: a new
version; the row's state ``applied``) or both (the import's ``create_from_record``: the incoming
copy becomes a new resource with a new uuid, titled "<title> (from <who made the package>)"; the
row's state ``copied``). Each resolution is one write: the conflict marked, the import's writes,
the version row, and the package's sync point for the resource (package_members: our version now,
the outcome the resolution), so that a later package compares with what both sides agreed on. Who
may: services/package_conflicts.py checks, then calls ``carry_out``.
"""

from __future__ import annotations

import json
import shutil
import uuid as uuids
from pathlib import Path
from typing import Any

from catalogue_app.store import Connection, field_history, package_conflicts, packages, users, versions
from catalogue_app.store.resources import Viewer

KINDS = ("changed_both", "deleted_here", "deleted_there")
KEEP = {"local": "kept_local", "incoming": "kept_incoming", "both": "kept_both"}
# the state of the conflict's version row (kind ``incoming``) once resolved, by what was kept
VERSION_STATE = {"kept_local": "dismissed", "kept_incoming": "applied", "kept_both": "copied"}
VIA = "package"
ASIDE = "aside-"  # the folder of a conflict's incoming files under files/: aside-<conflict id>


# -- the incoming record, as the history names fields ---------------------------------------------
def incoming_fields(conn: Connection, record: dict[str, Any]) -> dict[str, Any]:
    """The incoming record's fields named and valued as store/field_history.py ``snapshot`` gives
    a resource's (relations by name; thesaurus keywords by their id here, those unknown here
    left out)."""
    fields = _fields(record)
    out: dict[str, Any] = {name: fields.get(name) for name in field_history.TEXT}
    out.update({name: bool(fields.get(name)) for name in field_history.FLAGS})
    out["owner"] = record.get("owner")
    out["category"] = record.get("category")
    out["license"] = record.get("license")
    out["group"] = record.get("group")
    box = [fields.get(k) for k in field_history.BOX]
    out["extent"] = None if any(v is None for v in box) else {
        "coords": box, "srid": fields.get("srid"), "ll": [fields.get(k) for k in field_history.LL_BOX]}
    out["blob"] = record.get("blob")
    out["keywords"] = _names(record.get("keywords"))
    tkeywords = [package_conflicts.tkeyword_id(conn, t.get("thesaurus"), t.get("about"))
                 for t in record.get("tkeywords") or [] if isinstance(t, dict)]
    out["tkeywords"] = sorted(t for t in tkeywords if t is not None)
    out["regions"] = _names(record.get("regions"))
    contacts: dict[str, list[tuple[int, str]]] = {role: [] for role in field_history.CONTACT_ROLES}
    for c in record.get("contacts") or []:
        if isinstance(c, dict) and c.get("role") in contacts and c.get("username"):
            contacts[c["role"]].append((_whole(c.get("position")), str(c["username"])))
    out.update({role: [name for _pos, name in sorted(found)] for role, found in contacts.items()})
    named: dict[str, list[tuple[int, dict[str, str]]]] = {}
    for c in record.get("contact_names") or []:  # contacts that are no users: after the users
        if isinstance(c, dict) and c.get("role") in contacts:
            named.setdefault(c["role"], []).append(
                (_whole(c.get("position")), {k: str(c.get(k) or "") for k in field_history.NAMED_KEYS}))
    for role, found in named.items():
        out[role] = out[role] + [c for _pos, c in sorted(found, key=lambda pair: pair[0])]
    origin = record.get("origin")
    out["origin"] = ({"url": origin.get("url"), "title": origin.get("title")}
                     if isinstance(origin, dict) and origin.get("url") else None)
    kind = record.get("resource_type")
    if kind == "dataset":
        attributes = ((record.get("dataset") or {}).get("attributes")) or []
        out["attribute_set"] = {a["attribute"]: {k: bool(a.get(k)) if k == "visible" else a.get(k)
                                                 for k in field_history.ATTRIBUTE_KEYS}
                                for a in attributes if isinstance(a, dict) and "attribute" in a}
    elif kind not in ("document", "map"):
        out["name"] = (record.get("geoapp") or {}).get("name")
    return out


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    fields = record.get("fields")
    return fields if isinstance(fields, dict) else {}


def _names(value: Any) -> list[str]:
    return sorted(v for v in value if isinstance(v, str)) if isinstance(value, list) else []


def differences(conn: Connection, resource_id: int, record: dict[str, Any]) -> dict[str, list[Any]]:
    """{field: [ours, theirs]} for the fields in which the local resource and the record differ
    (the origin left out: it says where each copy was made)."""
    ours = field_history.snapshot(conn, resource_id) or {}
    theirs = incoming_fields(conn, record)
    return {name: [ours.get(name), theirs.get(name)] for name in sorted(set(ours) | set(theirs))
            if name != "origin" and ours.get(name) != theirs.get(name)}


def changed_by(record: dict[str, Any]) -> str | None:
    """Who made the record's newest version there (None: not said)."""
    history = [h for h in record.get("history") or [] if isinstance(h, dict)]
    if not history:
        return None
    name = max(history, key=lambda h: _whole(h.get("number"))).get("username")
    return name if isinstance(name, str) else None


def incoming_version(record: dict[str, Any]) -> tuple[int, int]:
    """The record's (version number, data version) there."""
    v = record.get("version") if isinstance(record.get("version"), dict) else {}
    return _whole(v.get("number")), _whole(v.get("data_version"))


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- setting aside ---------------------------------------------------------------------------------
def set_aside(conn: Connection, package_id: str, record: dict[str, Any], resource_id: int | None, kind: str,
              folder: Path | None, *, files_dir: Path) -> int:
    """Keep the incoming copy of a resource aside as a conflict; returns the conflict's id.

    Runs inside the caller's write transaction (the import's write of that resource), after the
    ``packages`` row of ``package_id`` is written. ``record`` is the incoming record
    (resources/<uuid>/record.json, parsed); ``resource_id`` the local resource (None: it was
    deleted here, a tombstone; the conflict then gets no version row); ``kind`` one of ``KINDS``;
    ``folder`` the incoming files already extracted under tmp/ (None: none), moved whole, in the
    layout the import gave it, to ``files_dir``/aside-<id> (``files_dir``: the data folder's
    files/), which is what ``apply_update``/``create_from_record`` are handed back on resolving.
    Nothing of the local resource changes."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {', '.join(KINDS)}")
    title = _fields(record).get("title") or record.get("title") or ""
    title = title if isinstance(title, str) else ""
    conflict_id = package_conflicts.add(conn, package_id, record.get("uuid") or "", resource_id, kind, title, record)
    version_uuid = None
    if resource_id is not None and kind != "deleted_there":
        package = package_conflicts.package_facts(conn, package_id)
        who = changed_by(record)
        number, data_version = incoming_version(record)
        changes = differences(conn, resource_id, record)
        summary = {"conflict": conflict_id, "package": package_id, "made_by": package.get("made_by"),
                   "catalogue": package.get("url") or package.get("maker"), "changed_by": who,
                   "version": number, "data_version": data_version, "fields": sorted(changes), "state": "aside"}
        row = versions.add(conn, resource_id, kind="incoming", via=VIA, user_id=package_conflicts.user_named(conn, who),
                           username=who, summary=summary, changes=changes, state="aside")
        version_uuid = row["uuid"]
    name = None
    if folder is not None:
        name = f"{ASIDE}{conflict_id}"
        target = files_dir / name
        if target.exists():  # left by a write that was rolled back after its move (ids are given again)
            shutil.rmtree(target)
        files_dir.mkdir(parents=True, exist_ok=True)
        Path(folder).rename(target)
    package_conflicts.set_kept(conn, conflict_id, version_uuid, name)
    return conflict_id


def aside_folder(files_dir: Path, row: Any) -> Path | None:
    """Where a conflict's incoming files are kept (None: it keeps none)."""
    return files_dir / row["folder"] if row["folder"] else None


def sweep(files_dir: Path, name: str | None) -> None:
    """Remove a resolved conflict's incoming files (once the resolution is committed)."""
    if name and name.startswith(ASIDE) and "/" not in name:
        shutil.rmtree(files_dir / name, ignore_errors=True)


# -- resolving -------------------------------------------------------------------------------------
def copy_title(row: Any, record: dict[str, Any]) -> str:
    """The title of the incoming copy kept beside ours: "<title> (from <who made the package>)"."""
    made_by = None
    try:
        made_by = json.loads(row["manifest"] or "{}").get("made_by")
    except (ValueError, AttributeError, IndexError, KeyError):
        pass
    title = _fields(record).get("title")
    title = title if isinstance(title, str) and title else row["title"] or "Untitled"
    return f"{title} (from {made_by or 'the field'})"


def without_history(record: dict[str, Any]) -> dict[str, Any]:
    """The incoming record as a second copy beside ours: without its history (its versions up to
    the sync point are ours too, by their uuids; the copy starts a history of its own)."""
    return {**record, "history": []}


def mark(conn: Connection, row: Any, state: str, pk: int | None, user: str | None) -> None:
    """The conflict's version row says what was kept (its state and summary), and, when the kept
    copy is another resource, which."""
    if not row["version_uuid"]:
        return
    found = versions.by_uuid(conn, row["version_uuid"])
    if found is None:
        return
    summary = json.loads(found["summary"] or "{}")
    summary.update({"state": VERSION_STATE[state], "resolved_by": user})
    if pk is not None and state == "kept_both":
        summary["copy"] = pk
    package_conflicts.mark_version(conn, row["version_uuid"], VERSION_STATE[state], summary)


def carry_out(conn: Connection, viewer: Viewer, row: Any, keep: str, files_dir: Path) -> tuple[dict[str, Any], Any]:
    """Resolve the conflict ``row`` (already checked and claimed by services/package_conflicts.py
    in this write) by keeping ``keep``: theirs or both hand the aside record and files to the
    import (packages/importer.py), which moves the files into files/ inside this write. Returns
    ({"pk": the local resource (None: gone), "copy": the new resource of "both"}, what the import
    wrote (its ``undo`` and ``retired``), or None)."""
    from catalogue_app.packages import importer  # the import writes records into rows

    state = KEEP[keep]
    record = json.loads(row["record"] or "{}")
    folder = aside_folder(files_dir, row)
    pk, copy, written = row["resource_id"], None, None
    if state == "kept_incoming" and row["kind"] == "deleted_there":
        from catalogue_app.services import resources as resource_service

        resource_service.delete(conn, viewer, pk)
        pk = None
    elif state == "kept_incoming" and pk is None:
        written = importer.create_from_record(conn, record, folder, files_dir=files_dir, importer_id=viewer.id)
        pk = written.resource_id
        package_conflicts.set_resource(conn, row["id"], pk)
    elif state == "kept_incoming":
        written = importer.apply_update(conn, pk, record, folder, files_dir=files_dir, by_user_id=viewer.id,
                                        peer=packages.maker_of(conn, row["package_id"]))
    elif state == "kept_both":
        written = importer.create_from_record(conn, without_history(record), folder, files_dir=files_dir,
                                              importer_id=viewer.id, new_uuid=str(uuids.uuid4()),
                                              title=copy_title(row, record))
        copy = written.resource_id
    user = users.get(conn, viewer.id) if viewer.id is not None else None
    mark(conn, row, state, copy, user["username"] if user is not None else None)
    # the two catalogues agree again on this resource: the sync point a later package is compared with
    package_conflicts.settle_member(conn, row["package_id"], row["uuid"],
                                    versions.latest_number(conn, pk) if pk is not None else 0,
                                    package_conflicts.data_version(conn, pk) if pk is not None else 0, state)
    package_conflicts.drop_folder(conn, row["id"])
    return {"pk": pk, "copy": copy}, written


def after_commit(files_dir: Path, row: Any, written: Any) -> None:
    """Once the resolution is committed: the folders the import retired and the aside files go."""
    for path in getattr(written, "retired", None) or []:
        shutil.rmtree(path, ignore_errors=True)
    sweep(files_dir, row["folder"])
