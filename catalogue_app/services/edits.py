"""The one way features change, whatever the route (WFS-T, the web UI's JSON endpoint, OGC API
Features Part 4): ``apply`` a list of inserts, updates and deletes to a vector dataset, all or
nothing, as a new version of it; ``revert`` to an earlier version (itself a new version); read a
version's changes (``data_changes``) and the features as at a version (``features_at``).

An edit goes: the rule check (``change_dataset_data``) in a read; then, on a thread of its own
(never the event loop, never the catalogue's writer thread), the GeoPackage transaction
(geo/gpkg_edit.py): the changes are checked and applied, a ``pending`` version is reserved in the
catalogue (with the check made again), the history and the applied mark are written, and it
commits; then one catalogue write settles the version and records the data version, feature count
and extent. A refusal or a failure drops the reserved version. A crash between the two commits
leaves a pending version that ``reconcile`` settles or drops at the next start, from what the
GeoPackage holds. Two editors of one dataset take turns on the GeoPackage's write lock: the
second waits for the first and then edits the data as the first left them; a client that sends
``base`` (the data version it read) is refused with Conflict when the data moved on since.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalogue_app import files
from catalogue_app.geo import gpkg_edit, layer_cache
from catalogue_app.geo.crs import to_wgs84_bounds
from catalogue_app.geo.gpkg_edit import Delete, Insert, Update
from catalogue_app.services import access
from catalogue_app.services.errors import Conflict, Invalid, NotFound, NotSignedIn
from catalogue_app.store import Connection, resources, users, versions
from catalogue_app.store.db import Database
from catalogue_app.store.resources import Viewer

__all__ = ["Insert", "Update", "Delete", "EditResult", "StaleFeature", "apply", "revert", "data_changes", "features_at",
           "forget_history", "reconcile", "VIAS"]

log = logging.getLogger("catalogue.edits")

VIAS = ("wfs-t", "ui", "api", "revert", "ogcapi")


@dataclass(frozen=True)
class EditResult:
    number: int            # the version's number within the resource
    uuid: str              # the version's uuid
    inserted: list[int]    # new fids, in the order of the Inserts
    updated: int
    deleted: int
    tags: dict[int, str] = field(default_factory=dict)  # entity tags of the features inserted and updated, when asked


class StaleFeature(Conflict):
    """A feature is no longer in the state the caller expected (its entity tag changed)."""

    def __init__(self, fid: int, current: str):
        super().__init__(f"Feature {fid} changed since it was read: nothing was changed. Read it again "
                         "and make the change on what is there now.", {"etag": current})
        self.fid, self.current = fid, current


@dataclass(frozen=True)
class _Target:
    rid: int
    path: Path
    srid: str | None


def files_dir(db: Database) -> Path:
    """The resource files beside the database (config.Settings: data_dir/files)."""
    return db.path.parent / "files"


def _target(conn: Connection, viewer: Viewer, rid: int, root: Path) -> _Target:
    """The dataset's working copy, for a viewer who may change its data."""
    if viewer.is_anonymous:
        raise NotSignedIn()
    row = resources.get_visible(conn, viewer, rid, ("dataset",))
    found = versions.data_target(conn, rid) if row is not None else None
    if found is None:
        raise NotFound(message=f"No dataset with ID {rid} is available.")
    access.require(conn, viewer, row, access.CHANGE_DATA)
    path = files.working_copy(root / found["folder"]) if found["folder"] else None
    if found["remote"] or found["subtype"] not in ("vector", "vector_time") or path is None or path.suffix != ".gpkg":
        raise NotFound(message=f"Dataset {rid} has no features that can be edited here (it is not a vector "
                               "dataset with data of its own).")
    return _Target(rid, path, found["srid"])


def _reserve(conn: Connection, viewer: Viewer, rid: int, kind: str, via: str,
             reverts_to: str | None) -> gpkg_edit.Reserved:
    """A pending version for the edit, the rule check made again inside the write."""
    row = resources.get_visible(conn, viewer, rid, ("dataset",))
    if row is None:
        raise NotFound(message=f"No dataset with ID {rid} is available.")
    access.require(conn, viewer, row, access.CHANGE_DATA)
    user = users.get(conn, viewer.id) if viewer.id is not None else None
    version = versions.add(conn, rid, kind=kind, via=via, user_id=viewer.id,
                           username=user["username"] if user is not None else None,
                           state="pending", reverts_to=reverts_to)
    return gpkg_edit.Reserved(version["number"], version["uuid"], version["created"], viewer.id,
                              user["username"] if user is not None else None)


def _extent(applied_extent, crs: str | None, srid: str | None):
    """The native box and its longitude/latitude box, or (None, None) when unknown."""
    if applied_extent is None:
        return None, None
    for name in (crs, srid):
        if not name:
            continue
        try:
            return tuple(applied_extent), tuple(to_wgs84_bounds(name, tuple(applied_extent)))
        except ValueError:
            continue
    return None, None


def _settle(conn: Connection, rid: int, uuid: str, number: int, summary: dict[str, Any], count: int | None,
            bbox, ll_bbox) -> None:
    versions.settle(conn, uuid, summary)
    versions.set_data_state(conn, rid, number, count, bbox, ll_bbox)


def _run(db: Database, viewer: Viewer, target: _Target, changes: Any, via: str, base: int | None,
         kind: str = "data", reverts_to: str | None = None, *, expected: dict[int, Any] | None = None,
         tags: bool = False) -> gpkg_edit.Applied:
    """The GeoPackage transaction, then the catalogue's write (blocking: run on a thread)."""
    reserved: list[gpkg_edit.Reserved] = []

    def reserve() -> gpkg_edit.Reserved:
        reserved.append(db.write_sync(_reserve, viewer, target.rid, kind, via, reverts_to))
        return reserved[-1]

    try:
        applied = gpkg_edit.apply(target.path, changes, reserve=reserve, via=via, kind=kind,
                                  reverts_to=reverts_to, base=base, expected=expected, tags=tags)
    except BaseException as exc:
        if reserved:
            try:
                db.write_sync(lambda conn: versions.drop_pending(conn, reserved[0].uuid))
            except Exception:  # the next start drops it
                log.warning("a pending version could not be dropped", exc_info=True)
        if isinstance(exc, _KNOWN):
            raise _refusal(exc) from None
        raise
    bbox, ll_bbox = _extent(applied.extent, applied.crs, target.srid)
    db.write_sync(_settle, target.rid, applied.uuid, applied.number, applied.summary, applied.count, bbox, ll_bbox)
    _after_edit(db, target, applied.number)
    return applied


def _after_edit(db: Database, target: _Target, number: int) -> None:
    """The layer held for maps in this process is patched to the new version (other processes
    patch theirs at their next map), and the thumbnail is drawn again after a quiet time
    (jobs/thumbnails.py)."""
    from catalogue_app.jobs import thumbnails  # the jobs sit above the services: asked for at the time

    def patch() -> None:
        try:
            layer_cache.CACHE.advance(target.path, number)
        except Exception:  # the next map reads the layer again
            log.warning("the layer held for %s could not be patched", target.path, exc_info=True)

    threading.Thread(target=patch, name="layer-patch", daemon=True).start()
    thumbnails.redraw_after_quiet(db, files_dir(db), target.rid)


_KNOWN = (gpkg_edit.EditError, gpkg_edit.StaleBase, gpkg_edit.NotVector, gpkg_edit.EditBusy, gpkg_edit.TagMismatch)


def _refusal(exc: BaseException) -> BaseException:
    if isinstance(exc, gpkg_edit.MissingFeature):
        return NotFound(message=f"The dataset has no feature {exc.fid}.")
    if isinstance(exc, gpkg_edit.TagMismatch):
        return StaleFeature(exc.fid, exc.current)
    if isinstance(exc, gpkg_edit.EditError):
        return Invalid(str(exc))
    if isinstance(exc, gpkg_edit.StaleBase):
        return Conflict(f"{exc} Read the features again and make the change on what is there now.",
                        {"data_version": exc.current})
    if isinstance(exc, gpkg_edit.NotVector):
        return NotFound(message="The dataset has no features that can be edited here.")
    if isinstance(exc, gpkg_edit.EditBusy):
        return Conflict("The dataset is being edited by someone else, longer than an edit may wait; try again.")
    return exc


def _check_changes(changes: Sequence[Any]) -> list[Insert | Update | Delete]:
    out = list(changes)
    for change in out:
        if not isinstance(change, (Insert, Update, Delete)):
            raise Invalid(f"{change!r} is not an insert, an update or a delete.")
        if isinstance(change, Insert) and change.fid is not None:
            raise Invalid("A new feature's id is given by the dataset; leave it out.")
    return out


async def apply(db: Database, viewer: Viewer, rid: int, changes: Sequence[Insert | Update | Delete],
                via: str, base: int | None = None, *, expected: dict[int, str | tuple[str, ...]] | None = None,
                tags: bool = False) -> EditResult:
    """Apply ``changes`` to the dataset ``rid``, in order, all or nothing, as one new version.
    Refusals: NotSignedIn (anonymous), NotFound (no such dataset the viewer may see, or not a
    vector dataset with a working copy), Forbidden (may see it, may not change its data),
    Invalid (a change the layer cannot take: the message names the feature and field), Conflict
    (``base`` is not the dataset's current data version, or another edit held it too long).

    ``expected`` ({fid: entity tag (geo/feature_etags.py), a tuple of them, or "*"}) is checked
    inside the GeoPackage's write transaction, before any change: NotFound when a feature named
    is not there, StaleFeature (a Conflict) when its tag is none of those expected ("*": any).
    With ``tags``, the result gives the tags of the features inserted and updated."""
    if via not in VIAS:
        raise ValueError(f"unknown route {via!r}")
    todo = _check_changes(changes)
    target = await db.read(_target, viewer, rid, files_dir(db))
    applied = await asyncio.to_thread(lambda: _run(db, viewer, target, todo, via, base, expected=expected, tags=tags))
    return EditResult(applied.number, applied.uuid, list(applied.inserted), applied.updated, applied.deleted,
                      dict(applied.tags))


def _revert_target(conn: Connection, viewer: Viewer, rid: int, number: int, root: Path) -> tuple[_Target, str | None]:
    target = _target(conn, viewer, rid, root)
    if number == 0:  # the data as uploaded
        return target, None
    version = versions.one(conn, rid, number)
    if version is None:
        raise NotFound(message=f"Dataset {rid} has no version {number}.")
    return target, version["uuid"]


async def revert(db: Database, viewer: Viewer, rid: int, number: int, via: str = "api") -> dict[str, Any]:
    """Bring the dataset's features back to what they were at version ``number`` (0: as
    uploaded): a new version (kind "revert", ``reverts_to`` the uuid of version ``number``, None
    for 0) that undoes the data versions after it; a feature deleted since comes back with its
    old id. Returns the new version's row
    as a dict (the columns of store/versions.py ``COLUMNS``; ``summary`` as JSON text). Refusals
    as for ``apply``; Invalid when nothing changed since (the data are as at ``number``) or the
    data were replaced by an upload since."""
    target, reverts_to = await db.read(_revert_target, viewer, rid, number, files_dir(db))

    def changes(conn: Connection, layer: gpkg_edit.Layer):
        gpkg_edit.refuse_cut(conn, number)  # the changes since were dropped by vacuum: they cannot be undone
        found = gpkg_edit.undo(conn, layer, number)
        if not found:
            raise gpkg_edit.EditError(f"The features are as they were at version {number}: there is nothing to revert.")
        return found

    applied = await asyncio.to_thread(_run, db, viewer, target, changes, via, None, "revert", reverts_to)
    row = await db.read(lambda conn: versions.by_uuid(conn, applied.uuid))
    return dict(row)


def data_changes(path: str | Path, number: int, crs: str | None = "EPSG:4326") -> list[dict[str, Any]]:
    """The features data version ``number`` changed (blocking: call it on a thread); see
    geo/gpkg_edit.py ``data_changes`` for the shape. [] for a version that changed none."""
    try:
        found = gpkg_edit.data_changes(path, number, crs)
    except gpkg_edit.NotVector:
        return []
    _refuse_cut(path, number)
    return found


def features_at(path: str | Path, number: int, crs: str | None = "EPSG:4326") -> dict[str, Any]:
    """The features as they were at version ``number``, a GeoJSON FeatureCollection (blocking:
    call it on a thread); see geo/gpkg_edit.py ``features_at``. Invalid when the data were
    replaced by an upload after ``number``; NotFound for a file without features."""
    try:
        found = gpkg_edit.features_at(path, number, crs)
    except gpkg_edit.EditError as exc:
        raise Invalid(str(exc)) from None
    except gpkg_edit.NotVector:
        raise NotFound(message="The dataset has no features.") from None
    _refuse_cut(path, number)
    return found


def _refuse_cut(path: str | Path, number: int) -> None:
    """Invalid when the history version ``number`` needs was dropped by ``catalogue vacuum``.
    Asked after the read: a cut only grows, so one that does not cover ``number`` now did not
    when the read was made."""
    cut = gpkg_edit.history_cut(path)
    if cut is not None and number <= cut[0]:
        raise Invalid(gpkg_edit.cut_message(number, *cut))


def forget_history(path: str | Path, upto: int, when: str) -> gpkg_edit.Forgotten:
    """``catalogue vacuum --drop-versions-before``: forget the data versions of a working copy
    numbered up to ``upto`` (but its newest), with their feature changes, and give the space back
    (geo/gpkg_edit.py ``forget_versions``; blocking). A file that is gone or no GeoPackage is
    left alone."""
    if not Path(path).is_file():
        return gpkg_edit.Forgotten(0, 0, 0, 0, 0, False, "no file")
    return gpkg_edit.forget_versions(path, upto, when)


# --- start-up ------------------------------------------------------------------------------------


def reconcile(db: Database, root: Path | None = None, *, scan: bool = True) -> dict[str, int]:
    """Start-up: make the catalogue agree with the GeoPackages. A pending version whose uuid its
    GeoPackage holds is settled with the data as the file has them; any other pending version is
    dropped. With ``scan``, every vector dataset's GeoPackage is then read for data versions the
    catalogue lacks (an older catalogue restored), which are added. Safe to run from several
    processes at once and while edits run (a pending version is looked at once its GeoPackage's
    write lock is free). Returns {"settled", "dropped", "added"} counts."""
    root = root or files_dir(db)
    done = {"settled": 0, "dropped": 0, "added": 0}
    for row in db.read_sync(lambda conn: [dict(r) for r in versions.pending(conn)]):
        target = db.read_sync(versions.data_target, row["resource_id"])
        path = files.working_copy(root / target["folder"]) if target is not None and target["folder"] else None
        found = None
        if path is not None and path.suffix == ".gpkg":
            try:
                found = _settled_in(path, row["uuid"])
            except Exception:
                log.warning("the GeoPackage of dataset %s could not be read", row["resource_id"], exc_info=True)
                continue
        if found is None:
            db.write_sync(lambda conn, u=row["uuid"]: versions.drop_pending(conn, u))
            done["dropped"] += 1
            continue
        state = gpkg_edit.state(path)
        bbox, ll_bbox = _extent(state["extent"], state["crs"], target["srid"])
        last = state["applied"] == found["number"]  # else a later version has set the dataset's state
        db.write_sync(_settle, row["resource_id"], row["uuid"], found["number"], found["summary"],
                      state["count"] if last else None, bbox if last else None, ll_bbox if last else None)
        done["settled"] += 1
    if scan:
        for dataset in db.read_sync(lambda conn: [dict(r) for r in versions.vector_datasets(conn)]):
            path = files.working_copy(root / dataset["folder"])
            if path is None or path.suffix != ".gpkg":
                continue
            try:
                done["added"] += _add_unknown(db, dataset, path)
            except Exception:
                log.warning("the history of dataset %s could not be read", dataset["resource_id"], exc_info=True)
    return done


def _settled_in(path: Path, uuid: str) -> dict[str, Any] | None:
    """The version ``uuid`` as the GeoPackage records it, looked at once any edit in progress
    has ended."""
    gpkg_edit.wait_for_edits(path)
    return next((v for v in gpkg_edit.versions(path) if v["uuid"] == uuid), None)


def _add_unknown(db: Database, dataset: dict[str, Any], path: Path) -> int:
    """Add the data versions of the GeoPackage that the catalogue lacks; returns how many."""
    number, uuid = gpkg_edit.applied(path)
    if uuid is None or db.read_sync(versions.by_uuid, uuid) is not None:
        return 0
    added = 0
    cut = db.read_sync(versions.cut_of, dataset["resource_id"])  # what vacuum dropped stays dropped
    for version in gpkg_edit.versions(path, after=cut["upto"] if cut is not None else 0):
        def add(conn: Connection, v=version) -> int | None:
            if versions.by_uuid(conn, v["uuid"]) is not None:
                return None
            return versions.add_known(conn, dataset["resource_id"], number=v["number"], version_uuid=v["uuid"],
                                      created=v["created"], kind=v["kind"], via=v["via"], user_id=v["user_id"],
                                      username=v["username"], summary=v["summary"], reverts_to=v["reverts_to"])
        given = db.write_sync(add)
        if given is None:
            continue
        if given != version["number"]:
            gpkg_edit.renumber(path, version["uuid"], given)
        added += 1
    state = gpkg_edit.state(path)
    bbox, ll_bbox = _extent(state["extent"], state["crs"], dataset["srid"])
    db.write_sync(lambda conn: versions.set_data_state(conn, dataset["resource_id"], state["applied"], state["count"],
                                                       bbox, ll_bbox))
    log.info("dataset %s: %d data version(s) found in its GeoPackage were added to the catalogue",
             dataset["resource_id"], added)
    return added
