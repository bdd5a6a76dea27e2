"""The import of a field package (func 'package_import'): packages/importer.py, staged.

The package waits in the job's workspace (tmp/<exec_id>/upload/), put there by the API or the
command line. Staging opens it and checks it whole (the zip, the manifest, the signature, every
member's hash, the free disk), reads its records, decides what to do with each resource and
extracts the members of those it writes into the workspace; a package refused outright fails
the request with the message, and nothing is written. The commit writes each resource in a
savepoint of its own, in the transaction that ends the request; output_params: the package's id
and the report. A dry run ends after the decisions: the report, nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalogue_app import files
from catalogue_app.packages import importer

NEEDS_FILES = ("created", "updated", "conflicts")


class ImportPackage:
    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        path = ctx.workspace / "upload" / params["file"]
        package = importer.open_checked(path, trusted_keys=tuple(params.get("trusted_keys") or ()),
                                        room_in=ctx.folders.files, reserve_bytes=params.get("reserve_bytes"),
                                        label=params.get("name"))
        with package:
            records = importer.read_records(package)
            items = ctx.db.read_sync(importer.plan, package.manifest, params["user_id"])
            staged: dict[str, str] = {}
            if not params.get("dry_run"):
                todo = [i for i in items if not i.deletion and i.outcome in NEEDS_FILES]
                for n, item in enumerate(todo):
                    target = ctx.workspace / "resources" / item.uuid
                    staged[item.uuid] = str(importer.extract_resource(package, item.uuid, target))
                    ctx.progress((n + 1) * 90 // len(todo))
            return {"manifest": package.manifest, "signer": package.signer, "records": records, "staged": staged,
                    "items": items}

    def commit(self, conn, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        manifest = staged["manifest"]
        if params.get("dry_run"):
            items = importer.plan(conn, manifest, params["user_id"])
            return {"package_id": manifest["id"],
                    "report": importer.report_of(manifest, staged["signer"], items, dry_run=True)}
        self.done = importer.commit(conn, manifest, staged["signer"], staged["records"], staged["staged"],
                                    user_id=params["user_id"], files_dir=ctx.folders.files,
                                    note=lambda names: files.note_folders(ctx.workspace, names))
        files.sync_folder(ctx.folders.files)
        return {"package_id": manifest["id"], "report": self.done.report}

    def after(self, params: dict[str, Any], staged: dict[str, Any], ctx) -> None:
        files.remove(ctx.workspace)
        done = getattr(self, "done", None)
        if done is not None:
            importer.after(done, ctx.db, ctx.folders.files)


def place_upload(workspace: Path, source: Path, name: str = "package.zip") -> str:
    """Put the package file into the workspace where the job reads it (a link when the file
    system allows, else a copy); returns its name there."""
    import os

    folder = workspace / "upload"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, folder / name)
    except OSError:
        files.copy_file(source, folder / name)
    return name
