"""Import of an uploaded dataset (action 'upload', func 'import').

The upload's files wait in the job's workspace (tmp/<exec_id>/upload/), put there and checked
by the API before the request was stored. Staging inspects them again and writes, for each
layer, a folder with the original files and the fast working copy (a GeoPackage with its
spatial index, or a tiled GeoTIFF with overviews). The commit renames each folder to
files/<uuid>/ and writes the dataset record, its attributes, its file rows and the permissions
asked for, in one transaction; if that fails, the folders go back and are removed with the
workspace.
"""

from __future__ import annotations

import mimetypes
import os
import shutil
import sqlite3
import uuid
from typing import Any

import msgspec

from catalogue_app import files
from catalogue_app.geo.convert import write_working_copy
from catalogue_app.geo.inspect import inspect_upload
from catalogue_app.store import datasets, permissions, resource_writes
from catalogue_app.store.users import ANONYMOUS_GROUP_ID


class ImportDataset:
    def stage(self, params: dict[str, Any], ctx) -> list[dict[str, Any]]:
        upload = ctx.workspace / "upload"
        layers = inspect_upload([upload / name for name in params["files"]], ctx.workspace / "unpacked")
        staged = []
        for i, layer in enumerate(layers):
            folder = ctx.workspace / f"dataset-{i}"
            folder.mkdir()
            for original in dict.fromkeys(layer.files):  # the originals, kept for download
                shutil.copyfile(original, folder / os.path.basename(original))
            suffix = ".gpkg" if layer.kind == "vector" else ".tif"
            write_working_copy(layer, folder / f"working{suffix}", layer.name)
            ctx.progress((i + 1) * 100 // len(layers))
            staged.append({"folder": str(folder), "uuid": str(uuid.uuid4()), "layer": msgspec.to_builtins(layer)})
        return staged

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: list[dict[str, Any]],
               ctx) -> dict[str, Any]:
        moved: list[tuple[str, str]] = []
        try:
            created = []
            for item in staged:
                final = str(ctx.folders.files / item["uuid"])
                os.rename(item["folder"], final)
                moved.append((final, item["folder"]))
                created.append(self._record(conn, params, item, final, len(staged)))
        except BaseException:
            for final, folder in moved:
                os.rename(final, folder)
            raise
        files.sync_folder(ctx.folders.files)
        return {"resources": [{"id": rid, "detail_url": f"/catalogue/#/dataset/{rid}"} for rid in created],
                "detail_url": [f"/catalogue/#/dataset/{rid}" for rid in created]}

    def _record(self, conn: sqlite3.Connection, params: dict[str, Any], item: dict[str, Any], folder: str,
                layers: int) -> int:
        layer = item["layer"]
        values = dict(params["changes"]["values"])
        if layers > 1 or not values.get("title"):  # several layers: each its own name
            values["title"] = layer["name"]
        rid, _ = datasets.create(conn, uuid=item["uuid"], owner_id=params["owner_id"], name=layer["name"],
                                 subtype=layer["kind"], srid=layer["srid"], bbox=list(layer["bbox"]),
                                 ll_bbox=list(layer["ll_bbox"]), values=values)
        resource_writes.apply_changes(conn, rid, {**params["changes"], "values": {}})
        datasets.add_attributes(conn, rid, layer["attributes"])
        datasets.add_files(conn, rid, [(name, os.path.getsize(os.path.join(folder, name)),
                                        mimetypes.guess_type(name)[0] or "application/octet-stream")
                                       for name in sorted(os.listdir(folder))])
        grants = params.get("permissions") or {"users": {}, "groups": {str(ANONYMOUS_GROUP_ID): "download"}}
        permissions.apply(conn, rid, {int(k): v for k, v in grants["users"].items()},
                          {int(k): v for k, v in grants["groups"].items()}, replace=False)
        return rid
