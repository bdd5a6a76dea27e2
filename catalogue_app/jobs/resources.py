"""Jobs of the asynchronous resource service: create, update, delete and copy.

A copy takes the record and its files (a dataset's data, style and attributes too, under a new
alternate); a delete removes the resource's files folder once the record is gone.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from typing import Any

from catalogue_app import files
from catalogue_app.store import datasets, resource_writes, users


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
        files.remove_resource_files(ctx.folders.files, params["uuid"])
        from catalogue_app.jobs import thumbnails  # Pillow: loaded when first needed

        thumbnails.remove_unused(ctx.db, ctx.folders.files.parent, params["uuid"])


CHANGED = "The dataset's data was replaced while it was being copied; copy it again."


class CopyResource:
    """A copy owned by the user who asked, with copies of its files; output: its uuid, pk and
    catalogue page path. The files are copied into the workspace first, then moved into place
    inside the transaction that writes the record (and moved back if that fails)."""

    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        new_uuid = str(uuid.uuid4())
        folder = ctx.db.read(datasets.folder_of, params["instance"]) or params.get("source_uuid", "")
        source = ctx.folders.files / folder
        staged = ctx.workspace / "files"
        staged.mkdir(parents=True)
        if params.get("source_uuid") and source.is_dir():
            names = files.relative_files(source)
            try:
                for i, name in enumerate(names):
                    files.copy_file(source / name, staged / name)
                    ctx.progress((i + 1) * 100 // len(names))
            except FileNotFoundError:
                raise ValueError(CHANGED) from None
        return {"uuid": new_uuid, "folder": str(staged), "source_folder": folder}

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        owner = users.by_username(conn, params["owner"])
        if owner is None:
            raise ValueError(f"The user {params['owner']!r} no longer exists.")
        if conn.execute("SELECT 1 FROM resources WHERE id = ?", (params["instance"],)).fetchone() is None:
            raise ValueError("The resource to copy no longer exists.")
        if datasets.folder_of(conn, params["instance"]) not in (None, staged["source_folder"]):
            raise ValueError(CHANGED)  # its data was replaced meanwhile: the files copied are not its own
        defaults = json.loads(params.get("defaults") or "{}")
        final = ctx.folders.files / staged["uuid"]
        files.note_folders(ctx.workspace, [final.name])
        os.rename(staged["folder"], final)
        try:
            new_id = resource_writes.copy(conn, params["instance"], owner["id"], defaults.get("title"),
                                          new_uuid=staged["uuid"])
            datasets.copy(conn, params["instance"], new_id, staged["uuid"])
        except BaseException:
            os.rename(final, staged["folder"])
            raise
        kind = conn.execute("SELECT resource_type FROM resources WHERE id = ?", (new_id,)).fetchone()[0]
        return {"output": {"uuid": staged["uuid"], "pk": new_id, "detail_url": f"/catalogue/#/{kind}/{new_id}"}}

    def after(self, params: dict[str, Any], staged: dict[str, Any], ctx) -> None:
        files.sync_folder(ctx.folders.files)


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
