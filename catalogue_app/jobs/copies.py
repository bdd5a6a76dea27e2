"""The copy job (PUT /api/v2/resources/{pk}/copy): a new resource owned by the caller, with its
own copy of the original's files, under a new uuid (and, for a dataset, a new alternate).

The files are copied into the job's workspace under tmp/ (fsynced), checked against what the
catalogue recorded, and renamed into files/<new uuid>/ inside the transaction that writes the
rows (and renamed back if that fails), so a failed copy leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from typing import Any

from catalogue_app import files
from catalogue_app.geo import gpkg_edit
from catalogue_app.store import copies, users

CHANGED = "The dataset's data was replaced while it was being copied; copy it again."
GONE = "The resource to copy no longer exists."


class CopyResource:
    """Output: the copy's uuid, pk and catalogue page path."""

    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        found = ctx.db.read_sync(copies.source, params["instance"])
        if found is None:
            raise ValueError(GONE)
        source = ctx.folders.files / found.folder
        staged = ctx.workspace / "files"
        staged.mkdir(parents=True)
        names = files.relative_files(source) if source.is_dir() else []
        missing = sorted(set(found.files) - set(names))
        if missing or (found.resource_type == "dataset" and files.working_copy(source) is None):
            raise ValueError(f"The files of this {found.resource_type} are missing on the server"
                             f" ({', '.join(missing) or 'its working copy'}); it cannot be copied.")
        try:
            for i, name in enumerate(names):
                if files.is_working_geopackage(name):  # edits change it in place: copied as at one commit,
                    gpkg_edit.copy_database(source / name, staged / name, history=False)  # history left behind
                else:
                    files.copy_file(source / name, staged / name)
                ctx.progress((i + 1) * 100 // len(names))
        except FileNotFoundError:
            raise ValueError(CHANGED) from None
        files.sync_tree(staged)
        return {"uuid": str(uuid.uuid4()), "folder": str(staged) if names else None, "source_folder": found.folder}

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        owner = users.by_username(conn, params["owner"])
        if owner is None:
            raise ValueError(f"The user {params['owner']!r} no longer exists.")
        found = copies.source(conn, params["instance"])
        if found is None:
            raise ValueError(GONE)
        if found.folder != staged["source_folder"]:
            raise ValueError(CHANGED)  # its data was replaced meanwhile: the files copied are not its own
        defaults = json.loads(params.get("defaults") or "{}")
        final = ctx.folders.files / staged["uuid"]
        if staged["folder"]:  # a resource without files gets no folder
            files.note_folders(ctx.workspace, [final.name])
            os.rename(staged["folder"], final)
        try:
            new_id = copies.copy(conn, params["instance"], owner["id"], staged["uuid"], staged["uuid"],
                                 defaults.get("title"))
        except BaseException:
            if staged["folder"]:
                os.rename(final, staged["folder"])
            raise
        return {"output": {"uuid": staged["uuid"], "pk": new_id,
                           "detail_url": f"/catalogue/#/{found.resource_type}/{new_id}"}}

    def after(self, params: dict[str, Any], staged: dict[str, Any], ctx) -> None:
        files.sync_folder(ctx.folders.files)
