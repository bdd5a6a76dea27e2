"""The export job (``POST /api/v2/packages/exports``, func_name ``package_export``): the package
written in the job's workspace (stage), then, in the transaction that ends the request, its row
and sync points stored and the file renamed into packages/ in the data folder (renamed back if
the transaction fails). Output: ``{"package_id", "download_url", "size", "report"}``."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from catalogue_app import files
from catalogue_app.packages import export
from catalogue_app.services.package_exports import check_cut


class ExportPackage:
    def stage(self, params: dict[str, Any], ctx) -> export.Built:
        cut = check_cut(params.get("cut") or {})
        return export.build(ctx.db, user_id=params["user_id"], cut=cut, base_url=params.get("base") or "",
                            data_dir=ctx.folders.data, files_dir=ctx.folders.files,
                            target=ctx.workspace / "package.zip", workspace=ctx.workspace,
                            sign=bool(params.get("sign", True)), progress=ctx.progress)

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], built: export.Built, ctx) -> dict[str, Any]:
        folder = export.folder(ctx.folders.data)
        folder.mkdir(parents=True, exist_ok=True)
        name = export.file_name(built.package_id)
        final = folder / name
        os.rename(built.path, final)
        try:
            export.record(conn, built, params["user_id"], name)
        except BaseException:
            os.rename(final, built.path)
            raise
        return {"package_id": built.package_id, "download_url": f"/api/v2/packages/{built.package_id}/download",
                "size": built.size, "report": built.report}

    def after(self, params: dict[str, Any], built: export.Built, ctx) -> None:
        files.sync_folder(export.folder(ctx.folders.data))
