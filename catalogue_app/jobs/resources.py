"""Jobs of the asynchronous resource service: create, update and delete (copy: jobs/copies.py).

A delete removes the resource's files folder once the record is gone.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app import files
from catalogue_app.services import history
from catalogue_app.store import executions, resource_writes, resources


class DeleteResource:
    """Remove the resource with its relations, index rows, links and permissions (they follow
    the row by foreign keys and triggers), then, once that is committed, its files. Output 1,
    or 0 when it was already gone."""

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: None, ctx) -> dict[str, Any]:
        rid = resources.id_by_uuid(conn, params["uuid"])
        if rid is None:
            return {"output": 0}
        request = executions.get(conn, ctx.exec_id)
        resource_writes.delete(conn, rid, request["user_id"] if request is not None else None)
        return {"output": 1}

    def after(self, params: dict[str, Any], staged: None, ctx) -> None:
        files.remove_resource_files(ctx.folders.files, params["uuid"])
        from catalogue_app.jobs import thumbnails  # Pillow: loaded when first needed

        thumbnails.remove_unused(ctx.db, ctx.folders.files.parent, params["uuid"])


def create_resource(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """A new resource of the type with the validated ``changes`` (its defaults); output its uuid."""
    rid = resource_writes.create(conn, params["resource_type"], params["owner_id"], {"uuid": params["uuid"]})
    resource_writes.apply_changes(conn, rid, params["changes"])
    return {"output": {"uuid": params["uuid"], "pk": rid,
                       "detail_url": f"/catalogue/#/{params['resource_type']}/{rid}"}}


def update_resource(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """The validated ``changes`` applied to the resource (a metadata version says who asked:
    ``user_id``); output its uuid."""
    rid = resources.id_by_uuid(conn, params["uuid"])
    if rid is None:
        raise ValueError("The resource to update no longer exists.")
    with history.recorded(conn, history.By(params.get("user_id")), rid):
        resource_writes.apply_changes(conn, rid, params["changes"])
    return {"output": {"uuid": params["uuid"]}}
