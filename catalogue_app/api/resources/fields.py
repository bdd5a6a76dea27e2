"""GET /api/v2/{resources|datasets|documents|maps|geoapps}/{pk}/{field_name}: one field of one
resource, as the family's detail shows it, with the detail's permission check; an unknown
field is 404. One handler for the five families."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import get
from litestar.params import FromPath

from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import not_found
from catalogue_app.api.request_bodies import path_id
from catalogue_app.api.resources.params import Selection
from catalogue_app.api.resources.routes import DATASETS, DOCUMENTS, GEOAPPS, MAPS, RESOURCES, deferred_fields
from catalogue_app.reads.resources import Family, present
from catalogue_app.store import Connection, resources

# Fields that the detail leaves out unless asked for with include[].
ASKED_FOR = ("metadata", "linked_resources", "executions")


def field_answer(conn: Connection, ctx: Context, family: Family, pk: str, field_name: str) -> dict[str, Any]:
    """The field as the detail shows it (a read: ``await ctx.db.read``)."""
    if field_name not in family.field_names:
        raise not_found()
    viewer = ctx.viewer
    row = resources.get_visible(conn, viewer, path_id(pk, family.model), family.types)
    if row is None:
        raise not_found(family.model)
    if field_name in ASKED_FOR:
        return deferred_fields(conn, [row["id"]], Selection([field_name], []), viewer, ctx.base)[0]
    item = present(conn, family, [row], ctx.caller, viewer, ctx.base, detail=True, with_data=field_name == "data")[0]
    return {field_name: msgspec.to_builtins(item).get(field_name, [])}


def _handler(family: Family, name: str = "one_field"):
    async def one_field(ctx: Ctx, pk: FromPath[str], field_name: FromPath[str]) -> dict[str, Any]:
        return await ctx.db.read(field_answer, ctx, family, pk, field_name)

    # the handler's name makes its OpenAPI operationId: /resources keeps the one it had before
    one_field.__name__ = one_field.__qualname__ = name
    return get(f"/api/v2/{family.path}/{{pk:str}}/{{field_name:str}}", tags=[family.path],
               summary=f"One field of a {family.singular} (relations such as keywords, owner, regions)")(one_field)


ROUTES = [_handler(RESOURCES, "get_field"), *(_handler(f) for f in (DATASETS, DOCUMENTS, MAPS, GEOAPPS))]
