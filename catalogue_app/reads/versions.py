"""What the history API shows: a resource's versions, one version's changes, the difference
between two versions, a dataset's features as at a version, and the tombstones of deleted
resources.

Seeing a resource's history needs seeing the resource (a resource the caller may not see, and
its history, are not found); the features of a data version, before and after, are data: they
are shown to those who may download the dataset (to others ``features`` is null). Tombstones are
for staff and superusers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from catalogue_app import files, rules
from catalogue_app.services import access, history
from catalogue_app.services.errors import Forbidden, NotFound, refusal_for
from catalogue_app.store import Connection, Row, datasets, field_history, package_conflicts, versions
from catalogue_app.store.resources import Viewer


class VersionUser(msgspec.Struct):
    """Who made a version: ``pk`` is null once that user is deleted (the name stays)."""

    pk: int | None
    username: str | None


class Version(msgspec.Struct, kw_only=True):
    """One version of a resource. ``kind``: data (features edited), replace (new data uploaded),
    metadata (fields changed), revert (fields or data put back as at ``reverts_to``), incoming
    (a copy changed in another catalogue, brought by a package and kept aside as a conflict:
    nothing of the resource changed; ``summary.state`` says whether it is still aside or was
    dismissed, applied or copied, and ``changes`` are ours before, theirs after). ``via``:
    api, wfs-t, ui, ogcapi, iso, harvest, owner, upload, revert, package. ``summary``: metadata and reverts of
    fields name the ``fields``; data versions count what they did."""

    uuid: str
    number: int
    created: str
    user: VersionUser | None
    via: str
    kind: str
    summary: dict[str, Any]
    reverts_to: str | None  # the uuid of the version this one went back to
    reverts_to_number: int | None


class FieldChange(msgspec.Struct):
    before: Any
    after: Any


class FeatureUpdate(msgspec.Struct):
    id: int
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class FeatureChanges(msgspec.Struct):
    """Features as GeoJSON Features (EPSG:4326 unless the dataset's data say otherwise); ``id``
    is the feature's id in the dataset."""

    inserted: list[dict[str, Any]]
    updated: list[FeatureUpdate]
    deleted: list[dict[str, Any]]


class VersionChanges(msgspec.Struct):
    """``fields``: each field changed, before and after (empty for a data version); ``features``:
    what a data version did to the features (null for other versions, for a replacing upload,
    and for callers who may not download the data)."""

    fields: dict[str, FieldChange]
    features: FeatureChanges | None


class VersionDetail(Version, kw_only=True):
    changes: VersionChanges


class Difference(msgspec.Struct, kw_only=True, rename={"from_": "from"}):
    """From the state as at version ``from`` to the state as at version ``to`` (0: before the
    first version): the versions in between, the fields that differ, and the features (null when
    no data version lies between, when new data were uploaded between (``data_replaced``), and
    for callers who may not download the data)."""

    from_: int
    to: int
    versions: list[int]
    fields: dict[str, FieldChange]
    features: FeatureChanges | None
    data_replaced: bool


class Tombstone(msgspec.Struct):
    uuid: str
    pk: int
    resource_type: str
    title: str
    deleted: str
    user: VersionUser | None


# -- shapes -------------------------------------------------------------------------------------
def _get(row: Any, key: str) -> Any:
    try:
        return row[key]
    except (KeyError, IndexError):
        return None


def shape(row: Any, reverts_to_number: int | None = None) -> Version:
    """A version row (or the edit service's record of one) as the API shows it."""
    summary = _get(row, "summary")
    if isinstance(summary, str):
        summary = json.loads(summary or "{}")
    user_id, username = _get(row, "user_id"), _get(row, "username")
    if reverts_to_number is None:
        reverts_to_number = _get(row, "reverts_to_number")
    if reverts_to_number is None and isinstance(summary, dict) and isinstance(summary.get("reverts_to"), int):
        reverts_to_number = summary["reverts_to"]
    if reverts_to_number is None and row["kind"] == "revert" and not _get(row, "reverts_to"):
        reverts_to_number = 0  # a revert to the resource before its first version (as uploaded)
    return Version(uuid=row["uuid"], number=row["number"], created=row["created"],
                   user=VersionUser(user_id, username) if user_id is not None or username else None,
                   via=row["via"], kind=row["kind"], summary=summary if isinstance(summary, dict) else {},
                   reverts_to=_get(row, "reverts_to"), reverts_to_number=reverts_to_number)


def _shaped(conn: Connection, row: Row) -> Version:
    """A stored version as the API shows it, with the number of the version it reverted to."""
    number = None
    if row["reverts_to"]:
        found = versions.by_uuid(conn, row["reverts_to"])
        number = found["number"] if found is not None else None
    return shape(row, number)


def _fields(changes: dict[str, list[Any]] | None) -> dict[str, FieldChange]:
    return {name: FieldChange(before, after) for name, (before, after) in (changes or {}).items()}


# -- reads --------------------------------------------------------------------------------------
def page(conn: Connection, viewer: Viewer, rid: int, limit: int, offset: int) -> tuple[int, list[Version]]:
    """The resource's versions, newest first, and how many there are."""
    history.visible(conn, viewer, rid)
    total, rows = versions.of_resource(conn, rid, offset, limit)
    return total, [_shaped(conn, r) for r in rows]


def one(conn: Connection, viewer: Viewer, rid: int, number: int, files_dir: Path) -> VersionDetail:
    """One version with its changes."""
    resource = history.visible(conn, viewer, rid)
    row = versions.one(conn, rid, number) if 0 < number < 2**62 else None
    if row is None and 0 < number < 2**62:  # an incoming copy a package conflict keeps aside
        row = package_conflicts.version_row(conn, rid, number)
    if row is None:
        cut = versions.cut_of(conn, rid)
        gone = f" ({history.cut_message(number, cut['upto'], cut['dropped'])})" if cut and number <= cut["upto"] else ""
        raise NotFound(message=f"Resource {rid} has no version {number}.{gone}")
    features = None
    if row["kind"] != "replace" and history.is_data(row) and access.may(conn, viewer, resource, access.DOWNLOAD):
        features = _combined([_data_changes(conn, rid, files_dir, number)], backwards=False)
    base = _shaped(conn, row)
    return VersionDetail(**msgspec.structs.asdict(base),
                         changes=VersionChanges(_fields(history.changes_of(row)), features))


def diff(conn: Connection, viewer: Viewer, rid: int, number: int, to: int | None, files_dir: Path) -> Difference:
    """What differs between the resource as at version ``number`` and as at version ``to``
    (None: the latest)."""
    resource = history.visible(conn, viewer, rid)
    latest = versions.latest_number(conn, rid)
    history.known(conn, rid, number)
    to = latest if to is None else history.known(conn, rid, to)[0]
    low, high = min(number, to), max(number, to)
    between = versions.between(conn, rid, low, high)
    later = versions.between(conn, rid, low, latest)
    current = field_history.snapshot(conn, rid) or {}
    at_low = history.fields_as_at(current, later)
    at_high = history.fields_as_at(current, [r for r in later if r["number"] > high])
    before, after = (at_low, at_high) if number <= to else (at_high, at_low)
    data = [r for r in between if history.is_data(r)]
    replaced = any(r["kind"] == "replace" for r in data)
    features = None
    if data and not replaced and access.may(conn, viewer, resource, access.DOWNLOAD):
        features = _combined([_data_changes(conn, rid, files_dir, r["number"]) for r in data], backwards=number > to)
    return Difference(from_=number, to=to, versions=[r["number"] for r in between],
                      fields=_fields(history.differences(before, after)), features=features, data_replaced=replaced)


def features_at(conn: Connection, viewer: Viewer, rid: int, number: int, files_dir: Path) -> Any:
    """The dataset's features as they were at version ``number`` (0: the upload as it came), for
    those who may download it: a GeoJSON FeatureCollection (a dict, or the path of a file)."""
    resource = history.visible(conn, viewer, rid, ("dataset",))
    if not access.may(conn, viewer, resource, access.DOWNLOAD):
        raise refusal_for(viewer) if viewer.is_anonymous else Forbidden()
    path = _working_copy(conn, rid, files_dir)
    if number != 0:
        history.known(conn, rid, number)
    history.refuse_cut(conn, rid, number)
    if any(r["kind"] == "replace" for r in versions.between(conn, rid, number, versions.latest_number(conn, rid))):
        raise NotFound(message=f"The features as at version {number} are gone: the dataset's data were replaced "
                               "by an upload since.")
    from catalogue_app.services import edits  # the edit service reads the GeoPackage's history

    # the GeoPackage undoes its versions after ``number`` (its numbers are the resource's): no need
    # to find the last data version at ``number``, which may be one vacuum dropped
    return edits.features_at(path, number)


def _working_copy(conn: Connection, rid: int, files_dir: Path) -> Path:
    folder = datasets.folder_of(conn, rid)
    path = files.working_copy(files_dir / folder) if folder else None
    if path is None or path.suffix != ".gpkg":
        raise NotFound(message="This dataset has no vector data whose history is kept.")
    return path


def _data_changes(conn: Connection, rid: int, files_dir: Path, number: int) -> list[dict[str, Any]]:
    from catalogue_app.services import edits  # the edit service reads the GeoPackage's history

    return edits.data_changes(_working_copy(conn, rid, files_dir), number)


def _feature(fid: int, side: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "Feature", "id": fid}
    if "geometry" in side:
        out["geometry"] = side["geometry"]
    out["properties"] = side["properties"]
    return out


def _combined(batches: list[list[dict[str, Any]]], backwards: bool) -> FeatureChanges:
    """The net change of several data versions' feature changes (services/edits.py
    ``data_changes``, oldest version first): per feature, whether it existed before the first
    and after the last, each field as it was before the first change of it and after the last
    (from the later state to the earlier when ``backwards``)."""
    state: dict[int, dict[str, Any]] = {}
    for batch in batches:
        for change in batch:
            fid, op = change["fid"], change["op"]
            s = state.setdefault(fid, {"existed": op != "insert", "exists": True,
                                       "before": {"properties": {}}, "after": {"properties": {}}})
            before, after = change.get("before"), change.get("after")
            if before:
                for key, value in before.get("properties", {}).items():
                    s["before"]["properties"].setdefault(key, value)
                if "geometry" in before and "geometry" not in s["before"]:
                    s["before"]["geometry"] = before["geometry"]
            if op == "delete":
                s["exists"], s["after"] = False, {"properties": {}}
                continue
            if op == "insert":
                s["after"] = {"properties": {}}
            s["exists"] = True
            if after:
                s["after"]["properties"].update(after.get("properties", {}))
                if "geometry" in after:
                    s["after"]["geometry"] = after["geometry"]
    out = FeatureChanges([], [], [])
    for fid, s in state.items():
        existed, exists, before, after = s["existed"], s["exists"], s["before"], s["after"]
        if backwards:
            existed, exists, before, after = exists, existed, after, before
        if exists and not existed:
            out.inserted.append(_feature(fid, after))
        elif existed and not exists:
            out.deleted.append(_feature(fid, before))
        elif existed and exists:
            keys = [k for k in set(before["properties"]) | set(after["properties"])
                    if before["properties"].get(k) != after["properties"].get(k)]
            moved = before.get("geometry") != after.get("geometry")
            if keys or moved:
                sides = [{"properties": {k: side["properties"].get(k) for k in sorted(keys)},
                          **({"geometry": side.get("geometry")} if moved else {})} for side in (before, after)]
                out.updated.append(FeatureUpdate(fid, _feature(fid, sides[0]), _feature(fid, sides[1])))
    return out


def tombstones(conn: Connection, viewer: Viewer, limit: int, offset: int) -> tuple[int, list[Tombstone]]:
    """The tombstones of deleted resources, newest first (staff and superusers)."""
    if not rules.is_admin(viewer):
        raise refusal_for(viewer)
    total, rows = versions.tombstones(conn, offset, limit)
    return total, [Tombstone(r["uuid"], r["resource_id"], r["resource_type"], r["title"], r["deleted"],
                             VersionUser(r["user_id"], r["username"]) if r["user_id"] or r["username"] else None)
                   for r in rows]

