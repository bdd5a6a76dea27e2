"""/api/v2/tokens/: the signed-in user's own API tokens (an extension of this catalogue; GeoNode
has no such endpoint). List them (never the token nor its digest), make a personal one with a
label (the token is in the 201 answer, and nowhere ever again), and revoke one. A token made here
is sent as ``Authorization: Bearer <token>`` and is revoked by /o/revoke_token/ too."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, Response, delete, get, post
from litestar.params import FromPath

from catalogue_app.api import pagination
from catalogue_app.api.context import Ctx
from catalogue_app.api.request_bodies import declared_body, path_id
from catalogue_app.reads import tokens as token_reads
from catalogue_app.reads.tokens import Token
from catalogue_app.services import tokens as tokens_service
from catalogue_app.services.bodies import fields_of


class TokenList(pagination.ListPage):
    tokens: list[Token]


class TokenDetail(msgspec.Struct):
    token: Token


class NewToken(msgspec.Struct):
    """The new token's record, and the token itself (``access_token``): shown this once."""

    token: Token
    access_token: str
    token_type: str


class TokenWrite(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A new personal token: what it is for, and how many days it lasts (null or left out: until
    it is revoked)."""

    label: Annotated[str, msgspec.Meta(min_length=1, max_length=tokens_service.LABEL_MAX)]
    expires_in_days: Annotated[int, msgspec.Meta(ge=1, le=tokens_service.DAYS_MAX)] | None = None


class TokensController(Controller):
    path = "/api/v2/tokens"
    tags = ["tokens"]

    @get("/", summary="The caller's API tokens, newest first (never the tokens themselves)")
    async def list_tokens(self, ctx: Ctx) -> TokenList:
        items = await ctx.db.read(token_reads.mine, tokens_service.require_user(ctx.caller), ctx.base)
        return pagination.page_of(ctx.request, ctx.params, TokenList, items, lambda t: t)

    @post("/", status_code=201, opt={"body": TokenWrite},
          summary="Make a personal API token with a label; the answer holds the token, shown this once")
    async def create_token(self, ctx: Ctx) -> Response[NewToken]:
        user_id = tokens_service.require_user(ctx.caller)
        values = tokens_service.new_token_values(fields_of(await declared_body(ctx.request, singular="token")))
        issued, row = await ctx.db.write(tokens_service.create_token, user_id, values)
        return Response(NewToken(token_reads.shape(row, ctx.base), issued, "Bearer"), status_code=201,
                        headers={"Cache-Control": "no-store"})

    @get("/{token_id:str}", summary="One of the caller's tokens")
    async def get_token(self, ctx: Ctx, token_id: FromPath[str]) -> TokenDetail:
        user_id = tokens_service.require_user(ctx.caller)
        return TokenDetail(await ctx.db.read(token_reads.one, user_id, path_id(token_id, "Token"), ctx.base))

    @delete("/{token_id:str}", status_code=204, summary="Revoke one of the caller's tokens")
    async def revoke_token(self, ctx: Ctx, token_id: FromPath[str]) -> None:
        user_id = tokens_service.require_user(ctx.caller)
        await ctx.db.write(tokens_service.revoke_token, user_id, path_id(token_id, "Token"))


ROUTES = [TokensController]
