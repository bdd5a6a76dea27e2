"""A resource's history as writes make it: metadata versions, tombstones, reverts.

Every write that may change a resource's fields runs inside ``recorded`` (whatever its route:
PATCH, bulk PATCH, the asynchronous update, ISO metadata, a harvest, an ownership transfer, the
fields a replacing upload sets): the fields are read before and after, in the write's
transaction, and what differs becomes one ``metadata`` version ({field: [before, after]}) saying
who and through what (``via``). (A replacing upload's ``replace`` version is written by the
import itself, jobs/imports.py.) A write that changes nothing records nothing. A deleted resource's tombstone is
buried by the store's delete itself (store/resource_writes.py), so no route can leave one out.

A revert puts back the fields as they were at a version (a new ``revert`` version), or hands a
data version to the edit service (services/edits.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from catalogue_app import files, rules
from catalogue_app.clock import now
from catalogue_app.services import access
from catalogue_app.services.errors import Forbidden, Invalid, NotFound, NotSignedIn
from catalogue_app.store import Connection, Row, field_history, groups, resource_writes, resources, users, versions
from catalogue_app.store.db import Database
from catalogue_app.store.resources import Viewer

# What a version came through.
API = "api"          # the REST API (the web UI calls it too)
ISO = "iso"          # an uploaded ISO 19115 document
HARVEST = "harvest"  # a harvester's update of what it harvested
OWNER = "owner"      # an ownership transfer (or a deleted user's resources given to another)
UPLOAD = "upload"    # an upload replacing a dataset's data (and the fields it sets)


@dataclass(frozen=True)
class By:
    """Who makes a change (a users row id; None: the catalogue itself, e.g. a harvester) and
    through what."""

    user_id: int | None
    via: str = API


def username_of(conn: Connection, user_id: int | None) -> str | None:
    row = users.get(conn, user_id) if user_id is not None else None
    return row["username"] if row is not None else None


def differences(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[Any]]:
    """{field: [before, after]} for the fields whose values differ."""
    return {name: [before.get(name), after.get(name)] for name in sorted(set(before) | set(after))
            if before.get(name) != after.get(name)}


def record(conn: Connection, rid: int, before: dict[str, Any] | None, by: By, *, kind: str = "metadata",
           reverts_to: tuple[int, str | None] | None = None, ignore: tuple[str, ...] = ()) -> Row | None:
    """The version of what changed in the resource's fields since ``before`` (a snapshot taken
    in this transaction; the fields ``ignore`` names left out), or None when nothing did (or the
    resource is gone). A revert names the version it went back to: (number, uuid)."""
    after = field_history.snapshot(conn, rid)
    if before is None or after is None:
        return None
    changes = {k: v for k, v in differences(before, after).items() if k not in ignore}
    if not changes:
        return None
    summary: dict[str, Any] = {"fields": sorted(changes)}
    if reverts_to is not None:
        summary["reverts_to"] = reverts_to[0]
    return versions.add(conn, rid, kind=kind, via=by.via, user_id=by.user_id, username=username_of(conn, by.user_id),
                        summary=summary, changes=changes, reverts_to=reverts_to[1] if reverts_to else None)


# What a dataset's new data decide (an upload replacing them): its ``replace`` version stands for them.
FROM_DATA = ("extent", "subtype", "attribute_set")


@contextmanager
def recorded(conn: Connection, by: By, *rids: int, ignore: tuple[str, ...] = ()) -> Iterator[None]:
    """Run the block (a write of these resources' fields) and record, for each resource, a
    metadata version of what it changed (the fields ``ignore`` names left out)."""
    before = {rid: field_history.snapshot(conn, rid) for rid in dict.fromkeys(rids)}
    yield
    for rid, fields in before.items():
        record(conn, rid, fields, by, ignore=ignore)


# -- the state as at a version ------------------------------------------------------------------
def changes_of(row: Row) -> dict[str, list[Any]] | None:
    """A version's field changes ({field: [before, after]}), None for a version of the data."""
    return json.loads(row["changes"]) if row["changes"] else None


def is_data(row: Row) -> bool:
    """Whether the version changed the data (data, replace, or a revert of the data), not fields."""
    return row["kind"] in ("data", "replace") or (row["kind"] == "revert" and not row["changes"])


def fields_as_at(current: dict[str, Any], later: list[Row]) -> dict[str, Any]:
    """The fields as they were at a version, from the fields now and the versions made after it
    (any order): each field as it was before the first of them that changed it."""
    out = dict(current)
    for row in sorted(later, key=lambda r: r["number"], reverse=True):
        for name, (before, _after) in (changes_of(row) or {}).items():
            out[name] = before
    return out


def cut_message(number: int, upto: int, dropped: str) -> str:
    """Why version ``number`` is refused once the history up to ``upto`` was dropped."""
    cause = f"the history before version {upto + 1} was dropped by vacuum on {str(dropped)[:10]}"
    if number == 0:
        return f"Version 0 (the resource as first stored: a dataset's data as uploaded) is no longer known: {cause}."
    return f"Version {number} is no longer known: {cause}."


def refuse_cut(conn: Connection, rid: int, number: int) -> None:
    """Invalid when version ``number`` lies in the history ``catalogue vacuum`` dropped."""
    cut = versions.cut_of(conn, rid)
    if cut is not None and number <= cut["upto"]:
        raise Invalid(cut_message(number, cut["upto"], cut["dropped"]))


def known(conn: Connection, rid: int, number: int) -> tuple[int, str | None]:
    """(number, uuid) of the resource's version ``number``: 0 stands for the resource before its
    first version, while that first version is still kept. Invalid for a version whose history
    was dropped by ``catalogue vacuum``; NotFound for any other."""
    refuse_cut(conn, rid, number)
    if number == 0 and versions.one(conn, rid, 1) is not None:
        return 0, None
    row = versions.one(conn, rid, number) if 0 < number < 2**62 else None
    if row is None:
        raise NotFound(message=f"Resource {rid} has no version {number}.")
    return row["number"], row["uuid"]


def visible(conn: Connection, viewer: Viewer, rid: int, types: tuple[str, ...] = ()) -> Row:
    """The resource when the viewer may see it (its history too); NotFound otherwise."""
    row = resources.get_visible(conn, viewer, rid, types)
    if row is None:
        raise NotFound("Dataset" if types == ("dataset",) else "ResourceBase")
    return row


# -- reverts ------------------------------------------------------------------------------------
PARTS = ("metadata", "data")


def revert_part(conn: Connection, viewer: Viewer, rid: int, number: int, part: str | None) -> str:
    """Which part of the resource a revert to ``number`` puts back: ``part`` when given, else
    the part that version changed (for 0, the part the later versions changed, when only one
    did). NotFound for a resource the viewer cannot see or a version it does not have."""
    row = visible(conn, viewer, rid)
    if part is not None and part not in PARTS:
        raise Invalid(f"part: expected one of {', '.join(PARTS)}.")
    known(conn, rid, number)
    if part == "data" and row["resource_type"] != "dataset":
        raise Invalid("part: only a dataset has data versions.")
    if part is not None:
        return part
    if number > 0:
        return "data" if is_data(versions.one(conn, rid, number)) else "metadata"
    kinds = {"data" if is_data(r) else "metadata" for r in versions.between(conn, rid, 0, versions.latest_number(conn, rid))}
    if len(kinds) > 1:
        raise Invalid("Both the fields and the data changed since: say which to put back with part=metadata or"
                      " part=data.")
    return kinds.pop() if kinds else "metadata"


def revert_metadata(conn: Connection, viewer: Viewer, rid: int, number: int, via: str = API) -> Row:
    """Put the resource's fields back as they were at version ``number``: a new ``revert``
    version. Needs the permission to change the metadata, and for the fields that need more (a
    flag, the content, the group, the owner) what changing them needs."""
    row = visible(conn, viewer, rid)
    if viewer.is_anonymous:
        raise NotSignedIn()
    access.require(conn, viewer, row, access.CHANGE)
    target = known(conn, rid, number)
    current = field_history.snapshot(conn, rid) or {}
    later = versions.between(conn, rid, number, versions.latest_number(conn, rid))
    wanted = differences(current, fields_as_at(current, later))
    if not wanted:
        raise Invalid(f"Nothing to revert: the fields are as they were at version {number}.")
    _may_revert(conn, viewer, row, wanted)
    missing = field_history.restore(conn, rid, {name: after for name, (_before, after) in wanted.items()})
    if missing:
        raise Invalid(f"Version {number} names what no longer exists ({', '.join(sorted(set(missing)))}): "
                      "change these fields instead.")
    version = record(conn, rid, current, By(viewer.id, via), kind="revert", reverts_to=target)
    if version is None:  # what was written equals what there was (cannot happen: ``wanted`` differs)
        raise Invalid(f"Nothing to revert: the fields are as they were at version {number}.")
    return version


def _may_revert(conn: Connection, viewer: Viewer, row: Row, wanted: dict[str, list[Any]]) -> None:
    """Forbidden, naming the field, when a revert would change what the viewer may not."""
    actions = access.resource_actions(conn, viewer, row)
    names = set(wanted)
    if names & set(rules.CONTENT_FIELDS) and rules.CHANGE not in actions:
        raise Forbidden("You may not change the content of this resource; the revert would.")
    for name in sorted(names):
        if name in rules.FLAGS and not access.may_set_flag(conn, viewer, row, name):
            raise Forbidden(f"You may not change {name} of this resource; the revert would.")
        if name == "owner" and not rules.is_admin(viewer):
            raise Forbidden("Only administrators may give a resource back to its former owner; the revert would.")
        if name == "group" and wanted[name][1] is not None:
            group_id = resource_writes.lookup_id(conn, "groups", "name", wanted[name][1])
            if group_id is not None and not rules.may_put_in_group(viewer, groups.role(conn, group_id, viewer.id)):
                raise Forbidden(f"You may not put resources in the group {wanted[name][1]!r}; the revert would.")


async def revert(db: Database, viewer: Viewer, rid: int, number: int, part: str | None = None,
                 via: str = API) -> Any:
    """Revert the resource to version ``number``: its fields (a ``revert`` version) or its data
    (the edit service's revert). Returns the new version (a row or the edit service's record)."""
    if await db.read(revert_part, viewer, rid, number, part) == "data":
        from catalogue_app.services import edits  # the edit service loads the GeoPackage side

        return {**await edits.revert(db, viewer, rid, number, via=via), "reverts_to_number": number}
    return await db.write(revert_metadata, viewer, rid, number, via)


# -- upkeep -------------------------------------------------------------------------------------
@dataclass
class Dropped:
    """What ``drop_versions_before`` did: versions of fields and of data dropped from the
    catalogue (and from how many resources), and in the datasets' GeoPackages: files cut, data
    versions and feature changes deleted, bytes given back, and notes on files whose space did
    not all come back (why)."""

    resources: int = 0
    field_versions: int = 0
    data_versions: int = 0
    files: int = 0
    file_versions: int = 0
    changes: int = 0
    freed: int = 0
    notes: list[str] = field(default_factory=list)


def _cut_catalogue(conn: Connection, before: str, when: str) -> tuple[int, int, int]:
    """Cut each resource's history before ``before``: (resources, field versions, data versions)."""
    counts = [0, 0, 0]
    for rid, upto in versions.cuts_before(conn, before):
        fields, data = versions.cut(conn, rid, upto, when)
        counts[0] += 1
        counts[1] += fields
        counts[2] += data
    return counts[0], counts[1], counts[2]


def drop_versions_before(db: Database, before: str, between: Callable[[], None] = lambda: None) -> Dropped:
    """``catalogue vacuum --drop-versions-before``: forget the versions made before ``before``
    (an ISO time, as the store keeps them), of fields and of data, but each resource's newest
    version and its newest version of data; blocking. A resource's history is cut at one number:
    the versions up to it go, and from then on a version up to it (0 too) is refused plainly.

    The order across the two databases: the catalogue first (one transaction: the versions and
    the cut), then each dataset's GeoPackage (services/edits.py ``forget_history``: its versions
    up to the cut, their feature changes, then VACUUM). A crash or a stop (``between`` is called
    before each file, and may raise) between the two leaves GeoPackage versions the catalogue no
    longer lists: nothing shows them (the catalogue refuses what lies before its cut), the
    start-up does not bring them back (the file's applied version is still known here, and
    versions up to the cut are never added again), and the next run cuts every file whose
    dataset has a cut, so it finishes the work. The other order would leave, after a crash,
    versions the catalogue lists whose features are gone."""
    dropped = Dropped(*db.write_sync(_cut_catalogue, before, now()))
    from catalogue_app.services import edits  # the edit service loads the GeoPackage side

    root = edits.files_dir(db)
    for row in db.read_sync(lambda conn: [dict(r) for r in versions.cut_datasets(conn)]):
        path = files.working_copy(root / row["folder"])
        if path is None or path.suffix != ".gpkg":
            continue
        between()
        try:
            done = edits.forget_history(path, row["upto"], row["dropped"])
        except Exception as exc:  # busy beyond an edit's wait, or damaged: the next run tries again
            dropped.notes.append(f"the GeoPackage of dataset {row['resource_id']} was left as it was ({exc})")
            continue
        if done.versions or done.changes:
            dropped.files += 1
            dropped.file_versions += done.versions
            dropped.changes += done.changes
            dropped.freed += max(0, done.size_before - done.size_after)
            if done.why_not:
                dropped.notes.append(f"the GeoPackage of dataset {row['resource_id']}: {done.why_not}")
    return dropped
