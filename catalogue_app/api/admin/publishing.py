"""Remotes and publishing (an extension of this catalogue; superusers only): /api/v2/remotes/
(the catalogues resources are published to: GeoNodes, or other instances of this one),
POST /api/v2/resources/{pk}/publish (an execution request, func_name 'publish'), and
GET /api/v2/resources/{pk}/publications (where the resource was published, and how far)."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import msgspec
from msgspec import UNSET, UnsetType
from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath

from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.resources.executions import Receipt, queue_job
from catalogue_app.api.request_bodies import declared_body, path_id
from catalogue_app.reads import remotes as remote_reads
from catalogue_app.reads.remotes import Publication, Remote
from catalogue_app.services import publishing as publishing_service
from catalogue_app.services.bodies import FieldError, fields_of


class RemoteList(pagination.ListPage):
    remotes: list[Remote]


class RemoteDetail(msgspec.Struct):
    remote: Remote


class RemoteWrite(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A remote's fields; ``token`` (a Bearer token of a user of the remote, who will own what is
    published there; needed to add a remote) is written, never shown (``has_token`` says whether
    there is one). A new address or token is checked against the remote before it is saved: a
    400 says what is wrong (nothing answers there, it is no GeoNode API v2, it refused the token)."""

    name: str | UnsetType = UNSET
    url: str | UnsetType = UNSET
    token: str | None | UnsetType = UNSET
    id: Any = UNSET  # sent back as read: ignored
    has_token: Any = UNSET
    created: Any = UNSET


class PublishBody(msgspec.Struct):
    """The remote to publish to: its id or its name."""

    remote: int | str


class PublicationList(msgspec.Struct):
    publications: list[Publication]


def _superuser(ctx: Context) -> None:
    publishing_service.require_superuser(ctx.caller)


async def _body(ctx: Context) -> dict[str, Any]:
    return fields_of(await declared_body(ctx.request, singular="remote"))


class RemotesController(Controller):
    path = "/api/v2/remotes"
    tags = ["remotes"]

    @get("/", summary="The remotes resources are published to (superusers)")
    async def list_remotes(self, ctx: Ctx) -> RemoteList:
        _superuser(ctx)
        items = await ctx.db.read(remote_reads.every, ctx.base)
        return pagination.page_of(ctx.request, ctx.params, RemoteList, items, lambda r: r)

    @post("/", status_code=201, opt={"body": RemoteWrite},
          summary="Add a remote: name, url and token, checked against the remote first (superusers)")
    async def create_remote(self, ctx: Ctx) -> RemoteDetail:
        _superuser(ctx)
        values = publishing_service.remote_values(await _body(ctx), creating=True)
        saved = await anyio.to_thread.run_sync(publishing_service.save_remote, ctx.db, values)
        return RemoteDetail(remote_reads.shape(saved, ctx.base))

    @get("/{remote_id:str}", summary="One remote (superusers)")
    async def get_remote(self, ctx: Ctx, remote_id: FromPath[str]) -> RemoteDetail:
        _superuser(ctx)
        return RemoteDetail(await ctx.db.read(remote_reads.one, path_id(remote_id, "Remote"), ctx.base))

    @patch("/{remote_id:str}", opt={"body": RemoteWrite},
           summary="Change a remote's name, url or token; a new url or token is checked first (superusers)")
    async def change_remote(self, ctx: Ctx, remote_id: FromPath[str]) -> RemoteDetail:
        _superuser(ctx)
        number = path_id(remote_id, "Remote")
        values = publishing_service.remote_values(await _body(ctx), creating=False)
        saved = await anyio.to_thread.run_sync(publishing_service.save_remote, ctx.db, values, number)
        return RemoteDetail(remote_reads.shape(saved, ctx.base))

    @delete("/{remote_id:str}", status_code=204,
            summary="Remove a remote and the records of what was published there (nothing on the remote)")
    async def delete_remote(self, ctx: Ctx, remote_id: FromPath[str]) -> None:
        _superuser(ctx)
        await ctx.db.write(publishing_service.delete_remote, path_id(remote_id, "Remote"))


@post("/api/v2/resources/{pk:str}/publish", status_code=200, tags=["resources"], opt={"body": PublishBody},
      summary="Publish a dataset or document to a remote, or update it there (asynchronous; superusers)")
async def publish(ctx: Ctx, pk: FromPath[str]) -> Response[Receipt]:
    _superuser(ctx)
    rid = path_id(pk, "ResourceBase")
    try:
        body: PublishBody = await declared_body(ctx.request)
    except FieldError as exc:
        if exc.field == "remote" and exc.missing:
            raise invalid('remote: give the remote to publish to, {"remote": <its id or name>}.') from None
        raise
    found = await ctx.db.read(publishing_service.publish_request, rid, body.remote)
    params = {"remote_id": found["remote_id"], "resource_id": rid, "remote": found["remote"], "site_url": ctx.base}
    receipt = await queue_job(ctx, "publish", "publish", params, rid, name=f"{found['title']} to {found['remote']}",
                              source="publish")
    return Response(receipt)


@get("/api/v2/resources/{pk:str}/publications", tags=["resources"],
     summary="Where a resource was published, and how far each publication got (superusers)")
async def publications(ctx: Ctx, pk: FromPath[str]) -> PublicationList:
    _superuser(ctx)
    return PublicationList(await ctx.db.read(remote_reads.publications_of, path_id(pk, "ResourceBase")))


ROUTES = [RemotesController, publish, publications]
