"""Import of an uploaded dataset (func 'import', action 'import').

The upload's files wait in the job's workspace (tmp/<exec_id>/upload/), put there and checked
by the API before the request was stored. Staging inspects them again and writes, for each
layer, a folder with the original files and the fast working copy (a GeoPackage with its
spatial index, or a tiled GeoTIFF with overviews, in its working/ subfolder). The commit renames
each folder into files/
and writes the dataset record, its attributes, style, file rows, metadata and permissions, in
one transaction; if that fails, the folders go back into the workspace and go with it.

An upload is all or nothing: when one layer of a GeoPackage cannot be imported, none is, and the
request fails naming the layers that failed (GeoNode keeps the others and still says failed).

Per layer, the upload's options decide what happens:
- ``skip_existing_layers``: a layer whose name the owner already has a dataset for is skipped;
- ``overwrite_existing_layer`` (or action ``replace``): the dataset ``resource_pk``, or else the
  owner's dataset of that name, gets the new data and keeps its record, links and permissions;
  its files move to a new folder, switched in the commit (the old one is removed afterwards);
- otherwise a new dataset is made.

Once the commit is done, each dataset it created or gave new data gets a new thumbnail
(jobs/thumbnails.py); a thumbnail that cannot be drawn is logged and does not fail the import.
"""

from __future__ import annotations

import mimetypes
import os
import shutil
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import msgspec

from catalogue_app import files, processes
from catalogue_app.geo import gpkg_edit
from catalogue_app.geo.convert import write_working_copy
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import Description, inspect_upload
from catalogue_app.geo.iso import parse_iso
from catalogue_app.geo.styles import check_sld, default_sld, style_kind
from catalogue_app.geo.time_range import time_range
from catalogue_app.jobs import thumbnails
from catalogue_app.jobs.folders import Folders
from catalogue_app.jobs.runner import JobContext
from catalogue_app.services import history
from catalogue_app.store import datasets, executions, metadata, permissions, resource_writes, resources, users, versions
from catalogue_app.store.db import Database
from catalogue_app.store.thumbnails import urls_of as thumbnail_urls
from catalogue_app.store.users import ANONYMOUS_GROUP_ID


class ImportFailed(Exception):
    """The import's error, with GeoNode's ``errors`` and ``failed_layers`` for output_params."""

    def __init__(self, message: str, failed_layers: list[str]):
        super().__init__(message)
        self.output = {"errors": [message], "failed_layers": failed_layers}


def import_now(db: Database, folders: Folders, workspace: Path, exec_id: str,
               params: dict[str, Any]) -> tuple[ImportDataset, dict[str, Any]]:
    """Import the files waiting in ``workspace``/upload as an upload's job does (stage, then the
    commit in one write transaction, then the thumbnails), outside the job runner (a harvest, a
    management command: no execution request, no progress to report). Returns the job (its
    ``imported`` ids) and the commit's output; raises ImportFailed. The workspace is gone
    afterwards when the import succeeded; on failure the caller removes it."""
    job = ImportDataset()
    ctx = JobContext(exec_id, workspace, folders, db, reports=False)
    staged = job.stage(params, ctx)
    output = db.write_sync(lambda conn: job.commit(conn, params, staged, ctx))
    job.after(params, staged, ctx)
    return job, output


class ImportDataset:
    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        upload = ctx.workspace / "upload"
        try:
            # the working copy reads every pixel (and fails on a damaged block): no need to read them twice
            layers = inspect_upload([upload / name for name in params["files"]], ctx.workspace / "unpacked",
                                    charset=params.get("charset"), check_pixels=False)
            iso = sld = None
            if params.get("xml_file"):
                xml = (upload / params["xml_file"]).read_bytes()
                iso = {"fields": msgspec.to_builtins(parse_iso(xml)), "xml": xml}
            if params.get("sld_file"):
                body = (upload / params["sld_file"]).read_bytes()
                sld = {"title": check_sld(body).title, "body": body}
        except GeoError as exc:
            raise ImportFailed(str(exc), [params["files"][0]]) from None
        except Exception as exc:
            raise ImportFailed(f"{params['files'][0]} could not be read: {_message(exc)}", [params["files"][0]]) from exc
        staged = []
        for i, layer in enumerate(layers):
            try:
                staged.append(self._stage_layer(params, ctx, i, layer))
            except GeoError as exc:
                raise ImportFailed(f"{layer.name}: {exc}", [layer.name]) from None
            except Exception as exc:  # the data did what the checks did not foresee: still the layer's failure
                raise ImportFailed(f"{layer.name} could not be imported: {_message(exc)}", [layer.name]) from exc
            ctx.progress((i + 1) * 100 // len(layers))
            processes.give_back_memory()
        return {"layers": staged, "iso": iso, "sld": sld}

    def _stage_layer(self, params: dict[str, Any], ctx, i: int, layer: Description) -> dict[str, Any]:
        folder = ctx.workspace / f"dataset-{i}"
        folder.mkdir()
        for original in dict.fromkeys(layer.files):  # the originals, kept for download
            _link_or_copy(original, folder / os.path.basename(original))
        working = folder / files.WORKING / ("data.gpkg" if layer.kind == "vector" else "data.tif")
        write_working_copy(layer, working, layer.name)
        time_attribute = (params.get("time_attributes") or {}).get(layer.name)
        start = end = None
        if time_attribute:
            start, end = time_range(working, layer.name, time_attribute)
        files.sync_tree(folder)
        return {"folder": str(folder), "uuid": str(uuid.uuid4()), "layer": msgspec.to_builtins(layer),
                "time": [start, end]}

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        moved: list[tuple[str, str]] = []
        created, skipped = [], []
        self.replaced_folders: list[str] = []
        layers = staged["layers"]
        try:
            for item in layers:
                name = item["layer"]["name"]
                target = self._target(conn, params, name, len(layers))
                if target == "skip":
                    skipped.append(name)
                    continue
                folder = item["uuid"] if target is None else f"{_uuid_of(conn, target)}-{ctx.exec_id[:8]}"
                final = str(ctx.folders.files / folder)
                files.note_folders(ctx.workspace, [folder])
                os.rename(item["folder"], final)
                moved.append((final, item["folder"]))
                if target is None:
                    created.append(self._create(conn, params, staged, item, final, len(layers)))
                else:
                    by = history.By(_asker(conn, ctx.exec_id), params.get("via") or history.UPLOAD)
                    # the fields the upload sets (not those its data decide): a metadata version
                    with history.recorded(conn, by, target, ignore=history.FROM_DATA):  # (its replace version: _replace)
                        self.replaced_folders.append(self._replace(conn, params, staged, item, target, folder, final))
                    files.note_folders(ctx.workspace, self.replaced_folders[-1:])  # gone once this commits
                    created.append(target)
        except BaseException as exc:
            for final, folder in moved:
                os.rename(final, folder)
            if isinstance(exc, ImportFailed) or not isinstance(exc, Exception):
                raise
            raise ImportFailed(_message(exc), [i["layer"]["name"] for i in layers]) from exc
        files.sync_folder(ctx.folders.files)
        self.imported = created
        self.thumbnails_at_commit = thumbnail_urls(conn, created)
        out: dict[str, Any] = {"resources": [{"id": rid, "detail_url": f"/catalogue/#/dataset/{rid}"} for rid in created],
                               "detail_url": [f"/catalogue/#/dataset/{rid}" for rid in created]}
        if skipped:
            out["skipped_layers"] = skipped
        return out

    def failed_output(self, params: dict[str, Any], staged: dict[str, Any], message: str) -> dict[str, Any]:
        """GeoNode's ``errors`` and ``failed_layers`` for an import refused when it was to be committed."""
        return {"errors": [message], "failed_layers": [item["layer"]["name"] for item in staged["layers"]]}

    def after(self, params: dict[str, Any], staged: dict[str, Any], ctx) -> None:
        for folder in getattr(self, "replaced_folders", []):
            files.remove(ctx.folders.files / folder)
        files.remove(ctx.workspace)  # nothing in it is needed now: gone before the thumbnails are drawn
        thumbnails.after_import(ctx.db, ctx.folders.files, getattr(self, "imported", []),
                                getattr(self, "thumbnails_at_commit", None))

    # -- per layer --------------------------------------------------------------------------------
    def _target(self, conn: sqlite3.Connection, params: dict[str, Any], name: str, layers: int) -> int | str | None:
        """None for a new dataset, "skip", or the id of the dataset whose data is replaced."""
        if params.get("overwrite_existing_layer"):
            if params.get("resource_pk") and layers == 1:
                if datasets.detail(conn, params["resource_pk"]) is None:
                    raise ImportFailed("The dataset to replace no longer exists.", [name])
                return params["resource_pk"]
            return datasets.of_owner_named(conn, params["owner_id"], name)
        if params.get("skip_existing_layers") and datasets.of_owner_named(conn, params["owner_id"], name):
            return "skip"
        return None

    def _create(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], item: dict[str, Any],
                folder: str, layers: int) -> int:
        layer = item["layer"]
        values = dict(params["changes"]["values"])
        if layers > 1 or not values.get("title"):  # several layers: each its own name
            values["title"] = layer["name"]
        subtype = _subtype(params, layer)
        start, end = item["time"]
        if start:
            values.update(temporal_extent_start=start, temporal_extent_end=end)
        rid, alternate = datasets.create(
            conn, uuid=item["uuid"], owner_id=params["owner_id"], name=layer["name"], subtype=subtype,
            srid=layer["srid"], bbox=list(layer["bbox"]), ll_bbox=list(layer["ll_bbox"]), values=values,
            details={**_details(params, layer), "store": layer["name"]})
        resource_writes.apply_changes(conn, rid, {**params["changes"], "values": {}})
        if params.get("metadata_uploaded_preserve"):
            resource_writes.update(conn, rid, {"metadata_uploaded_preserve": 1})
        datasets.add_attributes(conn, rid, layer["attributes"])
        resource_writes.add_files(conn, rid, _file_rows(folder))
        _style(conn, staged["sld"], rid, alternate, layer, keep_uploaded=False)
        if staged["iso"]:
            metadata.apply_iso(conn, rid, staged["iso"]["fields"], staged["iso"]["xml"])
        grants = params.get("permissions") or {"users": {}, "groups": {str(ANONYMOUS_GROUP_ID): "download"}}
        permissions.apply(conn, rid, {int(k): v for k, v in grants["users"].items()},
                          {int(k): v for k, v in grants["groups"].items()}, replace=False)
        return rid

    def _replace(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], item: dict[str, Any],
                 rid: int, folder_name: str, folder: str) -> str:
        layer = item["layer"]
        subtype = _subtype(params, layer)
        old = datasets.replace_data(conn, rid, subtype=subtype, srid=layer["srid"], bbox=list(layer["bbox"]),
                                    ll_bbox=list(layer["ll_bbox"]),
                                    details={**_details(params, layer), "folder": folder_name})
        values = dict(params["changes"]["values"])
        start, end = item["time"]
        if start:
            values.update(temporal_extent_start=start, temporal_extent_end=end)
        resource_writes.apply_changes(conn, rid, {**params["changes"], "values": values})
        datasets.replace_attributes(conn, rid, layer["attributes"])
        resource_writes.add_files(conn, rid, _file_rows(folder))
        alternate = resources.alternate_of(conn, rid)
        _style(conn, staged["sld"], rid, alternate, layer, keep_uploaded=True)
        if staged["iso"]:
            metadata.apply_iso(conn, rid, staged["iso"]["fields"], staged["iso"]["xml"])
        _record_replace(conn, params, rid, layer, Path(folder).parent / old, Path(folder))  # both in files/
        return old


def _asker(conn: sqlite3.Connection, exec_id: str) -> int | None:
    """The user who asked for the upload (None: an import no one asked for through the API, a harvest's)."""
    request = executions.get(conn, exec_id)
    return request["user_id"] if request is not None else None


def _record_replace(conn: sqlite3.Connection, params: dict[str, Any], rid: int, layer: dict[str, Any], old_folder: Path,
                    new_folder: Path) -> None:
    """The new data are a version of the dataset (kind "replace"), its data version from now on. A
    vector's new working copy carries on the history of the one it replaces (its tables and the
    replace version), so that its edits and versions stay readable; the data before it are not
    kept (the old folder goes once this commits). The originals are not touched."""
    user = users.get(conn, params["owner_id"])
    summary = {"feature_count": layer.get("feature_count"), "files": sorted(
        os.path.basename(f) for f in dict.fromkeys(layer.get("files") or []))}
    version = versions.add(conn, rid, kind="replace", via="upload", user_id=params["owner_id"],
                           username=user["username"] if user is not None else None, summary=summary)
    versions.set_data_version(conn, rid, version["number"])
    new = files.working_copy(new_folder)
    if new is None or new.suffix != ".gpkg":
        return
    old = files.working_copy(old_folder)
    if old is not None and old.suffix == ".gpkg":
        gpkg_edit.copy_history(old, new)
    gpkg_edit.record_version(new, gpkg_edit.Reserved(version["number"], version["uuid"], version["created"],
                                                     params["owner_id"], version["username"]),
                             via="upload", kind="replace", summary=summary)


def _style(conn: sqlite3.Connection, sld: dict[str, Any] | None, rid: int, alternate: str, layer: dict[str, Any],
           keep_uploaded: bool) -> None:
    """The uploaded SLD as the default style; else one made for the geometry, unless a replaced
    dataset already has a style its owner uploaded."""
    workspace, _, name = alternate.partition(":")
    if sld:
        datasets.set_default_style(conn, rid, name=name, workspace=workspace, title=sld["title"] or name,
                                   sld=sld["body"], generated=False)
        return
    current = datasets.style_named(conn, workspace, name)
    if keep_uploaded and current is not None and not current["generated"]:
        return
    kind = style_kind(layer["kind"], layer.get("geometry_type"))
    datasets.set_default_style(conn, rid, name=name, workspace=workspace, title=name,
                               sld=default_sld(name, kind, name), generated=True)


def _message(exc: Exception) -> str:
    if isinstance(exc, sqlite3.IntegrityError) and "FOREIGN KEY" in str(exc):
        return "The dataset could not be recorded: its owner, or a user or group its permissions name, no longer exists."
    return str(exc) or type(exc).__name__


def _subtype(params: dict[str, Any], layer: dict[str, Any]) -> str:
    return "vector_time" if (params.get("time_attributes") or {}).get(layer["name"]) else layer["kind"]


def _details(params: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    time_attribute = (params.get("time_attributes") or {}).get(layer["name"])
    return {"geometry_type": layer.get("geometry_type"), "feature_count": layer.get("feature_count"),
            "crs_wkt": layer.get("wkt"), "charset": layer.get("encoding") or "UTF-8",
            "has_time": int(bool(time_attribute)), "time_attribute": time_attribute}


def _uuid_of(conn: sqlite3.Connection, rid: int) -> str:
    return resources.uuid_of(conn, rid)


def _file_rows(folder: str) -> list[tuple[str, int, str]]:
    return [(name, os.path.getsize(os.path.join(folder, name)),
             mimetypes.guess_type(name)[0] or "application/octet-stream") for name in files.relative_files(Path(folder))]


def _link_or_copy(source: str, target: Path) -> None:
    """A second name for a file of the upload (no copy on one file system), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
