"""Upload limits as resources: /api/v2/upload-size-limits and /api/v2/upload-parallelism-limits.

Anyone may read them. Administrators may add one (POST, any bulk shape) and change one (PUT or
PATCH on its slug: GeoNode does that in its admin pages, which this catalogue does not have).
They cannot be deleted: the uploads need them. (No postponed annotations here: the
controllers are made by a function, and their answer types are its local names.)
"""

import re
from typing import Any

import msgspec
from litestar import Controller, Response, get, patch, post, put
from litestar.params import FromPath

from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.query import list_spec
from catalogue_app.api.request_bodies import read_body, records, unwrap
from catalogue_app.reads import limits as limit_reads
from catalogue_app.reads.limits import ParallelismLimit, SizeLimit
from catalogue_app.services import limits as limit_service

SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,255}$")
size_label = limit_reads.size_label  # the upload handlers name the limit in their errors with it


class LimitFamily(msgspec.Struct, frozen=True):
    path: str
    singular: str
    plural: str
    kind: Any  # reads.limits.SIZE or PARALLELISM
    bounds: tuple[int, int]  # allowed values of the limit


SIZE = LimitFamily("upload-size-limits", "upload-size-limit", "upload-size-limits", limit_reads.SIZE, (0, 2**62))
PARALLELISM = LimitFamily("upload-parallelism-limits", "upload-parallelism-limit", "upload-parallelism-limits",
                     limit_reads.PARALLELISM, (1, 32767))


def _clean(family: LimitFamily, item: dict[str, Any], *, creating: bool) -> tuple[str | None, str | None, int | None]:
    value_name = family.kind.value
    slug, description, value = item.get("slug"), item.get("description"), item.get(value_name)
    if creating and (not isinstance(slug, str) or not SLUG.match(slug)):
        raise invalid("slug: letters, digits, '-' and '_' only, 1 to 255 of them.")
    if description is not None and not isinstance(description, str):
        raise invalid("description: Not a valid string.")
    low, high = family.bounds
    if creating and value is None:
        raise invalid(f"{value_name}: This field is required.")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high):
        raise invalid(f"{value_name}: expected a whole number from {low} to {high}.")
    return slug, description, value


def _admin(ctx: Context) -> None:
    """Refused before the body is read (the service asks the same rule again)."""
    limit_service.require_admin(ctx.caller)


class SizeLimitList(pagination.ListPage, rename={"upload_size_limits": "upload-size-limits"}):
    upload_size_limits: list[SizeLimit]


class ParallelismLimitList(pagination.ListPage, rename={"upload_parallelism_limits": "upload-parallelism-limits"}):
    upload_parallelism_limits: list[ParallelismLimit]


async def _page(ctx: Context, family: LimitFamily, cls: type[pagination.ListPage]) -> Any:
    spec = list_spec(ctx.params, family.kind.listing.fields, {})

    page = pagination.wanted(ctx.request, ctx.params)
    total, items = await ctx.db.read(limit_reads.page, family.kind, spec, ctx.base, page.size, page.offset)
    pagination.check(page, total)
    return pagination.build(ctx.request, ctx.params, cls, page, total, items)


async def _one(ctx: Context, family: LimitFamily, slug: str) -> Response[Any]:
    return Response({family.singular: await _shaped(ctx, family, slug)})


async def _create(ctx: Context, family: LimitFamily) -> Response[Any]:
    _admin(ctx)
    items, many = records(await read_body(ctx.request), family.singular, family.plural)
    cleaned = [_clean(family, item, creating=True) for item in items]
    rows = await ctx.db.write(limit_service.create, ctx.caller, family.kind, cleaned)
    shaped = [limit_reads.shape(family.kind, r, ctx.base) for r in rows]
    return Response({family.plural: shaped} if many else {family.singular: shaped[0]}, status_code=201)


class SizeLimitsController(Controller):
    path, tags = f"/api/v2/{SIZE.path}", [SIZE.path]

    @get("/", summary="List the upload size limits")
    async def list_limits(self, ctx: Ctx) -> SizeLimitList:
        return await _page(ctx, SIZE, SizeLimitList)

    @get("/{slug:str}", summary="One upload size limit")
    async def get_limit(self, ctx: Ctx, slug: FromPath[str]) -> Response[dict[str, SizeLimit]]:
        return await _one(ctx, SIZE, slug)

    @post("/", status_code=201, summary="Add upload size limits (administrators)")
    async def create_limits(self, ctx: Ctx) -> Response[dict[str, SizeLimit | list[SizeLimit]]]:
        return await _create(ctx, SIZE)

    @patch("/{slug:str}", summary="Change a upload size limit (administrators)")
    async def patch_limit(self, ctx: Ctx, slug: FromPath[str]) -> Response[dict[str, SizeLimit]]:
        return await _update(ctx, SIZE, slug)

    @put("/{slug:str}", summary="Change a upload size limit (administrators)")
    async def put_limit(self, ctx: Ctx, slug: FromPath[str]) -> Response[dict[str, SizeLimit]]:
        return await _update(ctx, SIZE, slug)


class ParallelismLimitsController(Controller):
    path, tags = f"/api/v2/{PARALLELISM.path}", [PARALLELISM.path]

    @get("/", summary="List the upload parallelism limits")
    async def list_limits(self, ctx: Ctx) -> ParallelismLimitList:
        return await _page(ctx, PARALLELISM, ParallelismLimitList)

    @get("/{slug:str}", summary="One upload parallelism limit")
    async def get_limit(self, ctx: Ctx, slug: FromPath[str]) -> Response[dict[str, ParallelismLimit]]:
        return await _one(ctx, PARALLELISM, slug)

    @post("/", status_code=201, summary="Add upload parallelism limits (administrators)")
    async def create_limits(self, ctx: Ctx) -> Response[dict[str, ParallelismLimit | list[ParallelismLimit]]]:
        return await _create(ctx, PARALLELISM)

    @patch("/{slug:str}", summary="Change a upload parallelism limit (administrators)")
    async def patch_limit(self, ctx: Ctx, slug: FromPath[str]) -> Response[dict[str, ParallelismLimit]]:
        return await _update(ctx, PARALLELISM, slug)

    @put("/{slug:str}", summary="Change a upload parallelism limit (administrators)")
    async def put_limit(self, ctx: Ctx, slug: FromPath[str]) -> Response[dict[str, ParallelismLimit]]:
        return await _update(ctx, PARALLELISM, slug)


async def _shaped(ctx: Context, family: LimitFamily, slug: str) -> SizeLimit | ParallelismLimit:
    found = await ctx.db.read(limit_reads.one, family.kind, slug, ctx.base)
    if found is None:
        raise ApiError(404, "No limit matches the given query.", "not_found")
    return found


async def _update(ctx: Context, family: LimitFamily, slug: str) -> Response[Any]:
    _admin(ctx)
    body = unwrap(await read_body(ctx.request), family.singular)
    if not isinstance(body, dict):
        raise invalid("Expected a JSON object.")
    _, description, value = _clean(family, body, creating=False)
    await ctx.db.write(limit_service.change, ctx.caller, family.kind, slug, description, value)
    return Response({family.singular: await _shaped(ctx, family, slug)})


ROUTES = [SizeLimitsController, ParallelismLimitsController]
