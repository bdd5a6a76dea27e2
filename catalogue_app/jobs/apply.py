"""The jobs ``apply_metadata`` and ``apply_style``: an uploaded file applied to an existing dataset
(GeoNode's upload actions ``resource_metadata_upload`` and ``resource_style_upload``): an ISO XML
whose fields go into the record, or an SLD that becomes the default style. The file waits in the
job's workspace. (ISO metadata itself is read in geo/iso.py and written in store/metadata.py.)"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from catalogue_app.geo.iso import parse_iso
from catalogue_app.geo.styles import check_sld
from catalogue_app.services import history
from catalogue_app.store import datasets, executions, metadata, resources


def _dataset(conn: sqlite3.Connection, rid: int) -> sqlite3.Row:
    row = resources.dataset_alternate(conn, rid)
    if row is None:
        raise ValueError("The dataset no longer exists.")
    return row


def _output(rid: int) -> dict[str, Any]:
    return {"resources": [{"id": rid, "detail_url": f"/catalogue/#/dataset/{rid}"}],
            "detail_url": [f"/catalogue/#/dataset/{rid}"]}


class ApplyMetadata:
    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        xml = (ctx.workspace / "upload" / params["file"]).read_bytes()
        return {"fields": msgspec.to_builtins(parse_iso(xml)), "xml": xml}

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        rid = _dataset(conn, params["resource_pk"])["id"]
        request = executions.get(conn, ctx.exec_id)
        with history.recorded(conn, history.By(request["user_id"] if request else None, history.ISO), rid):
            metadata.apply_iso(conn, rid, staged["fields"], staged["xml"])
        return _output(rid)


class ApplyStyle:
    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        body = (ctx.workspace / "upload" / params["file"]).read_bytes()
        return {"title": check_sld(body).title, "body": body}

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        row = _dataset(conn, params["resource_pk"])
        workspace, _, name = row["alternate"].partition(":")
        datasets.set_default_style(conn, row["id"], name=name, workspace=workspace, title=staged["title"] or name,
                                   sld=staged["body"], generated=False)
        return _output(row["id"])
