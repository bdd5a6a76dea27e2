"""GET /api/v2/datasets/{pk}/data_state (an extension of this catalogue): the state of a
dataset's data that an edit of its features needs: the data version to send as ``base``, the
feature count, the geometry type, and whether its features can be edited in place."""

from __future__ import annotations

import msgspec
from litestar import get
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.request_bodies import path_id
from catalogue_app.reads import data_state as reads
from catalogue_app.reads.data_state import DataState


class DataStateAnswer(msgspec.Struct):
    data_state: DataState


@get("/api/v2/datasets/{pk:str}/data_state", tags=["datasets"],
     summary="The state of a dataset's data: its data version (the base of an edit), feature count, geometry type")
async def data_state(ctx: Ctx, pk: FromPath[str]) -> DataStateAnswer:
    rid = path_id(pk, "Dataset")
    return DataStateAnswer(await ctx.db.read(reads.state, ctx.viewer, rid, ctx.settings.files_dir))


ROUTES = [data_state]
