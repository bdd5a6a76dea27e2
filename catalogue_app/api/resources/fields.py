"""GET /api/v2/{resources|datasets|documents|maps|geoapps}/{pk}/{field_name}: one field of one
resource, as the family's detail shows it, with the detail's permission check; an unknown
field is 404. One handler for the five families."""

from __future__ import annotations

from typing import Any

from litestar import get
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import not_found
from catalogue_app.api.request_bodies import path_id
from catalogue_app.api.resources.params import Selection
from catalogue_app.api.resources.routes import DATASETS, DOCUMENTS, GEOAPPS, MAPS, RESOURCES
from catalogue_app.reads import deferred
from catalogue_app.reads import fields as reads
from catalogue_app.reads.resources import Family

# Fields that the detail leaves out unless asked for with include[].
ASKED_FOR = ("metadata", "linked_resources", "executions")


def _handler(family: Family, name: str = "one_field"):
    async def one_field(ctx: Ctx, pk: FromPath[str], field_name: FromPath[str]) -> dict[str, Any]:
        if field_name not in family.field_names:
            raise not_found()
        rid = path_id(pk, family.model)
        asked = Selection([field_name], []) if field_name in ASKED_FOR else None
        found = await ctx.db.read(reads.field, family, rid, field_name, ctx.caller, ctx.viewer, ctx.base, asked,
                                  deferred.fields)
        if found is None:
            raise not_found(family.model)
        return found

    # the handler's name makes its OpenAPI operationId: /resources keeps the one it had before
    one_field.__name__ = one_field.__qualname__ = name
    return get(f"/api/v2/{family.path}/{{pk:str}}/{{field_name:str}}", tags=[family.path],
               summary=f"One field of a {family.singular} (relations such as keywords, owner, regions)")(one_field)


ROUTES = [_handler(RESOURCES, "get_field"), *(_handler(f) for f in (DATASETS, DOCUMENTS, MAPS, GEOAPPS))]
