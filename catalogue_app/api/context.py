"""What every handler needs from a request, gathered in one place: a handler names ``ctx: Ctx``
and Litestar's dependency injection hands it a Context (app.py ``provide_context``).

The caller comes from the auth middleware; the viewer (the caller with their groups, as the
store's visibility rules need it) is read once, by the dependency, before the handler runs, so
that no attribute of a Context does I/O. Reads go through the database owner: ``await
ctx.db.read(fn, ...)`` (store/db.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from litestar import Request
from litestar.di import NamedDependency

from catalogue_app.api.errors import ApiError, not_authenticated
from catalogue_app.api.middleware.auth import VIEWER_KEY, Caller, caller_of
from catalogue_app.api.pagination import base_url
from catalogue_app.config import Settings
from catalogue_app.reads import users as user_reads
from catalogue_app.rules import Viewer
from catalogue_app.store.db import Database

PARAMS_KEY = "catalogue.params"  # the parsed query string, kept in the request's ASGI scope
ANONYMOUS_VIEWER = user_reads.ANONYMOUS_VIEWER


@dataclass
class Context:
    """The caller and viewer, the database owner, the settings, the base URL and the query
    parameters of one request; those derived from the request are worked out once when first
    asked."""

    request: Request
    caller: Caller
    viewer: Viewer

    @property
    def db(self) -> Database:
        return self.request.app.state.db

    @property
    def settings(self) -> Settings:
        return self.request.app.state.settings

    @cached_property
    def base(self) -> str:
        return base_url(self.request)

    @cached_property
    def params(self) -> list[tuple[str, str]]:
        """Query parameters in the order the client sent them (sort keys depend on it); parsed
        once per request, however many Contexts its handler makes."""
        from urllib.parse import parse_qsl

        scope = self.request.scope
        parsed = scope.get(PARAMS_KEY)
        if parsed is None:
            raw = scope.get("query_string", b"").decode("utf-8", "replace")
            parsed = scope[PARAMS_KEY] = parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace")
        return parsed

    @cached_property
    def lang(self) -> str:
        """The language text the catalogue supplies is answered in (translations.py): the ``lang``
        parameter, else Accept-Language, else English."""
        from catalogue_app.translations import language_of

        asked = next((v for k, v in self.params if k == "lang"), None)
        return language_of(asked, self.request.headers.get("accept-language"))

    def require_bulk_update(self) -> None:
        """Bulk update of list URLs exists only when ENABLE_BULK_UPDATE is on."""
        if not self.settings.enable_bulk_update:
            raise ApiError(405, f'Method "{self.request.method}" not allowed.', "method_not_allowed")

    def require_login(self) -> Caller:
        if self.caller.is_anonymous:
            raise not_authenticated()
        return self.caller


async def provide_context(request: Request) -> Context:
    """The Context of a request with its viewer: read by the auth middleware together with the
    signed-in caller (else here: one indexed read, kept by the database owner until the data
    change); nothing to read for an anonymous caller."""
    caller = caller_of(request)
    if caller.id is None:
        return Context(request, caller, ANONYMOUS_VIEWER)
    viewer = request.scope.get(VIEWER_KEY)  # read by the auth middleware with the caller
    if viewer is None:
        viewer = await request.app.state.db.read(user_reads.viewer, caller.id, caller.is_superuser,
                                                    caller.is_staff)
    return Context(request, caller, viewer)


# The type of a handler's ``ctx`` parameter: a Context, given by dependency injection.
Ctx = NamedDependency[Context]
