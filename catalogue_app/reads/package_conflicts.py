"""What /api/v2/packages/conflicts shows: the conflicts of imported field packages (a resource
changed on both sides since a package), each with a summary of the local copy and of the incoming
one and the fields in which they differ. Who sees which: services/package_conflicts.py.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from catalogue_app.packages import conflicts
from catalogue_app.services import package_conflicts as service
from catalogue_app.store import Connection, Row, package_conflicts, versions
from catalogue_app.store.resources import Viewer


class Side(msgspec.Struct, kw_only=True):
    """One copy of the resource: its title, when it was last updated, its latest version number
    and data version (in its own catalogue), and who made that version."""

    title: str | None
    last_updated: str | None
    version: int
    data_version: int
    changed_by: str | None


class FieldDifference(msgspec.Struct, kw_only=True):
    """A field whose value differs: ours (``local``) and the package's (``incoming``), valued as
    the history values fields (relations by name)."""

    field: str
    local: Any
    incoming: Any


class PackageConflict(msgspec.Struct, kw_only=True):
    """A resource changed on both sides since the catalogues last agreed, from an imported package.
    ``kind``: changed_both, deleted_here (``pk`` null: deleted here since, changed there) or
    deleted_there. ``state``: open, kept_local, kept_incoming or kept_both; ``copy``: the new
    resource that keeping both made. ``version``: the number of the local resource's history
    version (kind ``incoming``) that keeps the incoming copy aside (null: none)."""

    id: int
    uuid: str
    pk: int | None
    title: str
    kind: str
    package: str
    created: str
    state: str
    resolved: str | None
    resolved_by: str | None
    copy: int | None
    version: int | None
    local: Side | None
    incoming: Side
    differences: list[FieldDifference]


def _local(conn: Connection, resource_id: int | None) -> Side | None:
    facts = package_conflicts.local_facts(conn, resource_id) if resource_id is not None else None
    if facts is None:
        return None
    latest = package_conflicts.latest_version(conn, resource_id)
    return Side(title=facts["title"], last_updated=facts["last_updated"],
                version=latest["number"] if latest else 0, data_version=facts["data_version"] or 0,
                changed_by=latest["username"] if latest else None)


def _incoming(record: dict[str, Any], title: str) -> Side:
    fields = record.get("fields") if isinstance(record.get("fields"), dict) else {}
    number, data_version = conflicts.incoming_version(record)
    theirs, when = fields.get("title"), fields.get("last_updated")
    return Side(title=theirs if isinstance(theirs, str) else title, last_updated=when if isinstance(when, str) else None,
                version=number,
                data_version=data_version, changed_by=conflicts.changed_by(record))


def shape(conn: Connection, row: Row) -> PackageConflict:
    """A conflict as the API shows it: an open one's differences are those of now, a resolved
    one's those its version row recorded."""
    record = json.loads(row["record"] or "{}")
    aside = versions.by_uuid(conn, row["version_uuid"]) if row["version_uuid"] else None
    summary = json.loads(aside["summary"] or "{}") if aside is not None else {}
    if row["state"] == "open" and row["resource_id"] is not None and record.get("fields"):
        found = conflicts.differences(conn, row["resource_id"], record)
    else:
        found = json.loads(aside["changes"] or "{}") if aside is not None else {}
    return PackageConflict(
        id=row["id"], uuid=row["uuid"], pk=row["resource_id"], title=row["title"], kind=row["kind"],
        package=row["package_id"], created=row["created"], state=row["state"], resolved=row["resolved"],
        resolved_by=row["resolved_by_name"], copy=summary.get("copy"),
        version=aside["number"] if aside is not None else None,
        local=_local(conn, row["resource_id"]), incoming=_incoming(record, row["title"]),
        differences=[FieldDifference(field=name, local=ours, incoming=theirs) for name, (ours, theirs) in found.items()])


def listed(conn: Connection, viewer: Viewer) -> list[PackageConflict]:
    """The open conflicts the viewer may resolve, newest first."""
    return [shape(conn, row) for row in service.listed(conn, viewer)]


def one(conn: Connection, viewer: Viewer, conflict_id: int) -> PackageConflict:
    return shape(conn, service.one(conn, viewer, conflict_id))
