"""Ingest: a file that an administrator put in the import folder becomes a document.

The file is copied into the job's workspace (progress reported as it goes) and fsynced outside
any transaction; then, inside the transaction that creates the record, its folder is renamed to
files/<uuid>/. If the record cannot be written, the folder goes back to the workspace and is
removed with it; a crash between the rename and the commit leaves a folder without a resource,
which start-up sweeps away.
"""

from __future__ import annotations

import mimetypes
import os
import sqlite3
from typing import Any

from catalogue_app import files
from catalogue_app.jobs import thumbnails
from catalogue_app.store import documents, resource_writes


class IngestDocument:
    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        source = files.inside(ctx.folders.imports, params["path"])  # checked again: the folder may have changed
        staged = ctx.workspace / "files"
        size = files.copy_file(source, staged / source.name, ctx.progress)
        return {"folder": str(staged), "name": source.name, "size": size}

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        final = ctx.folders.files / params["uuid"]
        files.note_folders(ctx.workspace, [final.name])
        os.rename(staged["folder"], final)
        try:
            extension = os.path.splitext(staged["name"])[1][1:].lower() or None
            rid = resource_writes.create(conn, "document", params["owner_id"],
                                         {"uuid": params["uuid"], "subtype": documents.subtype(extension)})
            resource_writes.apply_changes(conn, rid, params["changes"])
            mime = documents.mime_type(extension) or mimetypes.guess_type(staged["name"])[0]
            documents.add(conn, rid, extension=extension, file_name=staged["name"], mime_type=mime)
            resource_writes.add_files(conn, rid, [(staged["name"], staged["size"], mime)])
        except BaseException:
            os.rename(final, staged["folder"])
            raise
        files.sync_folder(ctx.folders.files)
        self.created = rid
        return {"output": {"uuid": params["uuid"], "pk": rid, "detail_url": f"/catalogue/#/document/{rid}"}}

    def after(self, params: dict[str, Any], staged: dict[str, Any], ctx) -> None:
        """An image or a PDF gets its thumbnail once the document is committed."""
        if getattr(self, "created", None) is not None:
            thumbnails.draw_document(ctx.db, ctx.folders.files, self.created)
