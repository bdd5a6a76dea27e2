"""A resource's history as writes make it: metadata versions, tombstones, reverts.

Every write that may change a resource's fields runs inside ``recorded`` (whatever its route:
PATCH, bulk PATCH, the asynchronous update, ISO metadata, a harvest, an ownership transfer, a
replacing upload): the fields are read before and after, in the write's transaction, and what
differs becomes one ``metadata`` version ({field: [before, after]}) saying who and through what
(``via``). A write that changes nothing records nothing. A deleted resource's tombstone is
buried by the store's delete itself (store/resource_writes.py), so no route can leave one out.

A revert puts back the fields as they were at a version (a new ``revert`` version), or hands a
data version to the edit service (services/edits.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from catalogue_app.store import Connection, Row, field_history, users, versions

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
           reverts_to: Row | None = None, ignore: tuple[str, ...] = ()) -> Row | None:
    """The version of what changed in the resource's fields since ``before`` (a snapshot taken
    in this transaction; the fields ``ignore`` names left out), or None when nothing did (or the
    resource is gone)."""
    after = field_history.snapshot(conn, rid)
    if before is None or after is None:
        return None
    changes = {k: v for k, v in differences(before, after).items() if k not in ignore}
    if not changes:
        return None
    summary: dict[str, Any] = {"fields": sorted(changes)}
    if reverts_to is not None:
        summary["reverts_to"] = reverts_to["number"]
    return versions.add(conn, rid, kind=kind, via=by.via, user_id=by.user_id, username=username_of(conn, by.user_id),
                        summary=summary, changes=changes,
                        reverts_to=reverts_to["uuid"] if reverts_to is not None else None)


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


def replaced(conn: Connection, rid: int, by: By, layer: dict[str, Any]) -> Row:
    """The ``replace`` version of a dataset whose data a new upload replaced (``layer``: what the
    upload held, geo/inspect.py Description as a dict); the working copy it made is the data as
    at this version."""
    summary = {key: layer.get(key) for key in ("kind", "geometry_type", "feature_count", "srid") if layer.get(key)}
    summary["files"] = [name.replace("\\", "/").rsplit("/", 1)[-1] for name in layer.get("files") or []][:20]
    row = versions.add(conn, rid, kind="replace", via=by.via, user_id=by.user_id,
                       username=username_of(conn, by.user_id), summary=summary)
    versions.set_data_version(conn, rid, row["number"])
    return row
