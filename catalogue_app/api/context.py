"""What every handler needs from a request, gathered in one place: a handler names ``ctx: Ctx``
and Litestar's dependency injection hands it a Context (app.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from litestar import Request
from litestar.di import NamedDependency

from catalogue_app.api.middleware.auth import Caller, caller_of
from catalogue_app.api.errors import ApiError, not_authenticated
from catalogue_app.api.pagination import base_url
from catalogue_app.config import Settings
from catalogue_app.store import resources
from catalogue_app.store.db import Database
from catalogue_app.store.resources import Viewer

T = TypeVar("T")
PARAMS_KEY = "catalogue.params"  # the parsed query string, kept in the request's ASGI scope


async def reading(request: Request, fn: Callable[..., T], *args: Any, slow: bool | None = None) -> T:
    """``fn(*args)``, the read side of a handler, in one snapshot, on a reader thread unless it
    is quick (store/db.py Database.offload): the event loop keeps serving other requests while
    a long read runs. ``slow=True`` for reads that may take long whatever they took before."""
    return await request.app.state.db.offload(fn, *args, slow=slow)


@dataclass
class Context:
    """The caller, the database owner, the settings, the base URL and the query parameters of
    one request, each worked out once when first asked."""

    request: Request

    @cached_property
    def caller(self) -> Caller:
        return caller_of(self.request)

    @cached_property
    def viewer(self) -> Viewer:
        """The caller as the resource store needs it (with the groups they belong to)."""
        caller = self.caller
        return self.db.read(resources.viewer_of, caller.id, caller.is_superuser, caller.is_staff)

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
        scope = self.request.scope
        parsed = scope.get(PARAMS_KEY)
        if parsed is None:
            raw = scope.get("query_string", b"").decode("utf-8", "replace")
            parsed = scope[PARAMS_KEY] = parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace")
        return parsed

    def require_bulk_update(self) -> None:
        """Bulk update of list URLs exists only when ENABLE_BULK_UPDATE is on."""
        if not self.settings.enable_bulk_update:
            raise ApiError(405, f'Method "{self.request.method}" not allowed.', "method_not_allowed")

    def require_login(self) -> Caller:
        if self.caller.is_anonymous:
            raise not_authenticated()
        return self.caller


# The type of a handler's ``ctx`` parameter: a Context, given by dependency injection.
Ctx = NamedDependency[Context]
