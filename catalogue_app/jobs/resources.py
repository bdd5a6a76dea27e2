"""Jobs of the asynchronous resource service: create, update, delete and copy.

A copy takes the record only for now (files of copies come with uploads); a delete removes
the resource's files folder once the record is gone.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from catalogue_app import files
from catalogue_app.store import resource_writes, users


class DeleteResource:
    """Remove the resource with its relations, index rows, links and permissions (they follow
    the row by foreign keys and triggers), then, once that is committed, its files. Output 1,
    or 0 when it was already gone."""

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: None, ctx) -> dict[str, Any]:
        row = conn.execute("SELECT id FROM resources WHERE uuid = ?", (params["uuid"],)).fetchone()
        if row is None:
            return {"output": 0}
        resource_writes.delete(conn, row[0])
        return {"output": 1}

    def after(self, params: dict[str, Any], staged: None, ctx) -> None:
        files.remove(ctx.folders.files / params["uuid"])


def copy_resource(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """A copy owned by the user who asked; output: its uuid, pk and catalogue page path."""
    owner = users.by_username(conn, params["owner"])
    if owner is None:
        raise ValueError(f"The user {params['owner']!r} no longer exists.")
    if conn.execute("SELECT 1 FROM resources WHERE id = ?", (params["instance"],)).fetchone() is None:
        raise ValueError("The resource to copy no longer exists.")
    defaults = json.loads(params.get("defaults") or "{}")
    new_id = resource_writes.copy(conn, params["instance"], owner["id"], defaults.get("title"))
    new_uuid, kind = conn.execute("SELECT uuid, resource_type FROM resources WHERE id = ?", (new_id,)).fetchone()
    return {"output": {"uuid": new_uuid, "pk": new_id, "detail_url": f"/catalogue/#/{kind}/{new_id}"}}


def create_resource(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """A new resource of the type with the validated ``changes`` (its defaults); output its uuid."""
    rid = resource_writes.create(conn, params["resource_type"], params["owner_id"], {"uuid": params["uuid"]})
    resource_writes.apply_changes(conn, rid, params["changes"])
    return {"output": {"uuid": params["uuid"], "pk": rid,
                       "detail_url": f"/catalogue/#/{params['resource_type']}/{rid}"}}


def update_resource(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """The validated ``changes`` applied to the resource; output its uuid."""
    row = conn.execute("SELECT id FROM resources WHERE uuid = ?", (params["uuid"],)).fetchone()
    if row is None:
        raise ValueError("The resource to update no longer exists.")
    resource_writes.apply_changes(conn, row[0], params["changes"])
    return {"output": {"uuid": params["uuid"]}}
