"""Who may see and resolve the conflicts of field packages (packages/conflicts.py does the work).

A conflict is shown to, and resolved by, those who may change its resource (the rule book's
``change_resourcebase_metadata``; superusers all); keeping the incoming copy of a dataset that
brings data needs ``change_dataset_data`` too, keeping both the right to add resources. A conflict
whose resource was deleted here belongs to the user who imported the package, and to superusers.
Anonymous callers are refused (401); a conflict on a resource the caller cannot see is not found
(404); one they see but may not change is forbidden (403); resolving one already resolved is a
conflict (409).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from catalogue_app import rules
from catalogue_app.packages import conflicts
from catalogue_app.services import access
from catalogue_app.services.errors import Conflict, Forbidden, Invalid, NotFound, NotSignedIn, Refused
from catalogue_app.store import Connection, Row, package_conflicts, resources
from catalogue_app.store.db import Database
from catalogue_app.store.resources import Viewer

KEEP = tuple(conflicts.KEEP)


def require_user(viewer: Viewer) -> None:
    """NotSignedIn (401) for an anonymous caller."""
    if viewer.is_anonymous:
        raise NotSignedIn()


def _resource(conn: Connection, viewer: Viewer, row: Row) -> Row | None:
    """The conflict's local resource as the viewer sees it (None: none, or hidden)."""
    if row["resource_id"] is None:
        return None
    return resources.get_visible(conn, viewer, row["resource_id"])


def may_resolve(conn: Connection, viewer: Viewer, row: Row) -> bool:
    """Whether the viewer may resolve the conflict (and so see it)."""
    if viewer.is_anonymous:
        return False
    if viewer.is_superuser:
        return True
    if row["resource_id"] is None:
        return row["importer_id"] is not None and row["importer_id"] == viewer.id
    resource = _resource(conn, viewer, row)
    return resource is not None and access.may(conn, viewer, resource, access.CHANGE)


def listed(conn: Connection, viewer: Viewer) -> list[Row]:
    """The open conflicts the viewer may resolve, newest first."""
    require_user(viewer)
    return [row for row in package_conflicts.open_ones(conn) if may_resolve(conn, viewer, row)]


def one(conn: Connection, viewer: Viewer, conflict_id: int) -> Row:
    """One conflict (open or resolved) the viewer may resolve: NotFound when they cannot see its
    resource (or, for one deleted here, are not its importer), Forbidden when they see it but may
    not change it."""
    require_user(viewer)
    row = package_conflicts.get(conn, conflict_id)
    if row is None:
        raise NotFound(message=f"No conflict {conflict_id}.")
    if may_resolve(conn, viewer, row):
        return row
    if row["resource_id"] is not None and _resource(conn, viewer, row) is not None:
        raise Forbidden("You may not change this resource, so you may not resolve its conflict.")
    raise NotFound(message=f"No conflict {conflict_id}.")


def _brings_data(record: dict[str, Any]) -> bool:
    return bool(((record.get("dataset") or {}).get("files")) or ((record.get("document") or {}).get("files")))


def claim(conn: Connection, viewer: Viewer, conflict_id: int, keep: Any) -> Row:
    """Check that the viewer may resolve the conflict by keeping ``keep`` and mark it resolved
    (in the caller's write); returns its row as it was."""
    row = one(conn, viewer, conflict_id)
    if keep not in KEEP:
        raise Invalid(f"keep: expected one of {', '.join(KEEP)}.")
    if row["state"] != "open":
        raise Conflict(f"This conflict was resolved already ({row['state'].replace('_', ' ')}"
                       f"{' by ' + row['resolved_by_name'] if row['resolved_by_name'] else ''}).")
    record = json.loads(row["record"] or "{}")
    if keep == "both" and row["kind"] == "deleted_there":
        raise Invalid("keep: the incoming side deleted this resource; keep local or incoming.")
    if keep in ("both", "incoming") and not record.get("fields") and row["kind"] != "deleted_there":
        raise Invalid("keep: the package carried no copy of this resource to keep.")
    if keep == "both" and record.get("resource_type") == "dataset" and not _brings_data(record) \
            and package_conflicts.member_data(conn, row["package_id"], row["uuid"]) == "changes":
        raise Invalid("keep: this package brought only the feature edits made since the last package, not the whole"
                      " data, so a copy beside ours would have no data: keep local or incoming.")
    if keep == "both" and not rules.may_add_resources(viewer):
        raise Forbidden("You may not add resources, so you may not keep both copies.")
    resource = _resource(conn, viewer, row)
    if keep == "incoming" and resource is not None and not viewer.is_superuser:
        if row["kind"] == "deleted_there" and not access.may(conn, viewer, resource, access.DELETE):
            raise Forbidden("You may not delete this resource, so you may not keep its deletion.")
        carried = package_conflicts.member_data(conn, row["package_id"], row["uuid"])
        if (_brings_data(record) or carried in ("whole", "clipped", "changes")) \
                and resource["resource_type"] == "dataset" and not access.may(conn, viewer, resource, access.CHANGE_DATA):
            raise Forbidden("You may not change the data of this dataset, so you may not keep the incoming copy.")
    if not package_conflicts.claim(conn, conflict_id, conflicts.KEEP[keep], viewer.id):
        raise Conflict("This conflict was resolved already.")
    return row


def _resolve(conn: Connection, viewer: Viewer, conflict_id: int, keep: Any, files_dir: Path,
             done: list) -> tuple[dict[str, Any], Row]:
    row = claim(conn, viewer, conflict_id, keep)
    try:
        result, written = conflicts.carry_out(conn, viewer, row, keep, files_dir)
    except Refused:
        raise
    except Exception as exc:  # the incoming copy does not fit here (any more): the write is rolled back
        raise Conflict(f"The incoming copy could not be written here ({exc}); nothing was changed and the conflict"
                       " is still open.") from exc
    if written is not None:
        done.append(written)
    return result, row


async def resolve(db: Database, viewer: Viewer, conflict_id: int, keep: Any, files_dir: Path) -> dict[str, Any]:
    """Resolve the conflict, in one write: keep ``local``, ``incoming`` or ``both``. The files the
    import moved are put back when the write fails; the aside files go once it has committed.
    Returns {"pk", "copy"}."""
    done: list = []
    try:
        result, row = await db.write(_resolve, viewer, conflict_id, keep, files_dir, done)
    except BaseException:
        for written in done:
            written.undo()
        raise
    conflicts.after_commit(files_dir, row, done[0] if done else None)
    return result
