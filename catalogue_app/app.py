"""create_app(settings): the Litestar application with its routes, auth, errors and lifespan."""

from __future__ import annotations

import gc
import logging
import os

from litestar import Controller, Litestar, Response, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig

from catalogue_app import __version__, geo, processes
from catalogue_app.api import openapi, packages_export, packages_import, root, web_ui
from catalogue_app.api import facets, linked_data, ogcapi, package_conflicts
from catalogue_app.api.accounts import groups, oauth, sessions, tokens, users
from catalogue_app.api.admin import harvesting, limits, management, publishing, signing_key
from catalogue_app.api.context import provide_context
from catalogue_app.api.errors import EXCEPTION_HANDLERS
from catalogue_app.api.middleware.admission import ReadAdmission
from catalogue_app.api.middleware.auth import AuthMiddleware, CredentialCache
from catalogue_app.api.middleware.drain import DrainUnread
from catalogue_app.api.middleware.head import HeadAsGet
from catalogue_app.api.ogc import service as ogc_service
from catalogue_app.api.ogc.csw import endpoint as csw
from catalogue_app.api.resources import (actions, assets, async_actions, datasets, documents, embed, executions,
                                         fields, lookups, maps, metadata, metadata_editor, permissions, routes,
                                         styles, thumbnails, upload_sessions, uploads)
from catalogue_app.api.resources import data_state
from catalogue_app.api.resources import edits as feature_edits
from catalogue_app.api.resources import versions as history
from catalogue_app.config import Settings, load_settings
from catalogue_app.harvesting.runner import HarvestRunner
from catalogue_app.jobs import thumbnails as thumbnail_jobs
from catalogue_app.jobs.folders import Folders
from catalogue_app.jobs.runner import JobRunner
from catalogue_app.management.runner import ManagementRunner
from catalogue_app.store.db import Database, migrate

AVATAR_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" fill="#d9dee4"/>'
    '<circle cx="32" cy="24" r="12" fill="#8a96a3"/><path d="M10 60c2-14 12-20 22-20s20 6 22 20z" fill="#8a96a3"/></svg>'
)


@get("/static/img/avatar.svg", include_in_schema=False)
async def default_avatar() -> Response[str]:
    return Response(AVATAR_SVG, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


class NoSchemaRoutes(Controller):
    """Takes the place of Litestar's own OpenAPI routes, and has none."""

    path = "/api/v2/_litestar_schema"


# Every endpoint family, one module each; each lists its routes in ROUTES.
FAMILIES = (root, users, groups, routes, lookups, actions, fields, maps, executions,
            permissions, limits, uploads, upload_sessions, datasets, documents, metadata, csw, embed,
            styles, ogc_service, async_actions, oauth, openapi, thumbnails, assets, metadata_editor, sessions, web_ui,
            harvesting, publishing, management, tokens, feature_edits, history, data_state,
            packages_export, packages_import, package_conflicts, signing_key, ogcapi, linked_data, facets)


# The runners of background work in app.state, in the order they start (and stop the other way):
# execution requests, harvesting, management jobs.
RUNNERS = ("runner", "harvesting", "management")


class MsgspecOnlyLitestar(Litestar):
    """Litestar without the plugins it adds for pydantic and attrs whenever they are installed
    (morecantile brings both): the catalogue's bodies are msgspec Structs, and those plugins
    would import pydantic (with its v1) and attrs at every start, some 0.2 s of CPU."""

    @staticmethod
    def _get_default_plugins(plugins: list) -> list:
        from litestar.plugins.core import MsgspecDIPlugin

        return [*plugins, MsgspecDIPlugin()]


def create_app(settings: Settings) -> Litestar:
    state = State({"settings": settings, "credentials": CredentialCache(settings.basic_auth_cache_seconds)})

    def open_database(app: Litestar) -> None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        migrate(settings.database_path)  # a no-op when `catalogue serve` has already done it
        app.state.db = Database(settings.database_path, settings.reader_threads)
        geo.layer_cache_limit = settings.layer_cache_mb * 1024 * 1024
        thumbnail_jobs.quiet_seconds = settings.thumbnail_quiet_seconds
        # the runners of background work, all of one shape (ticker.py) on the same folders
        db, folders = app.state.db, Folders.of(settings)
        app.state.runner = JobRunner(db, folders, workers=settings.job_workers)
        app.state.harvesting = HarvestRunner(db, folders, tick_seconds=settings.harvest_tick_seconds)
        app.state.management = ManagementRunner(db, folders)
        for name in RUNNERS:
            runner = getattr(app.state, name)
            if runner.runs:  # a harvesting tick of 0: this server runs no harvesting (tests, a read replica)
                runner.start()

    def close_database(app: Litestar) -> None:
        for name in reversed(RUNNERS):  # what runs work, before the database goes
            runner = getattr(app.state, name, None)
            if runner is not None:
                runner.close()
        db = getattr(app.state, "db", None)
        if db is not None:
            thumbnail_jobs.REDRAWS.flush(db)  # thumbnails waiting for a quiet time after edits
            db.close()

    return MsgspecOnlyLitestar(
        route_handlers=[default_avatar, *(route for family in FAMILIES for route in family.ROUTES)],
        state=state,
        # a handler that names ``ctx: Context`` gets what it needs of its request in one object
        dependencies={"ctx": Provide(provide_context)},
        middleware=[AuthMiddleware()],
        exception_handlers=EXCEPTION_HANDLERS,
        on_startup=[open_database, thumbnails.sweep_at_start, feature_edits.reconcile_at_start],
        on_shutdown=[close_database],
        # Litestar builds the schema that api/openapi.py serves at /api/v2/schema/; its own routes
        # for it are replaced by a controller without any, so that there is one schema only
        openapi_config=OpenAPIConfig(
            title="Catalogue API", version=__version__, path="/api/v2/_litestar_schema",
            openapi_controller=NoSchemaRoutes,
            render_plugins=[], description="A geospatial catalogue that speaks the GeoNode REST API v2.",
        ),
        request_max_body_size=10 * 1024 * 1024,
        logging_config=None,
        debug=False,
    )


def create_app_from_env() -> HeadAsGet:
    """Factory for server worker processes: settings come from the environment."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = load_settings()
    if settings.server_pid and settings.server_pid != os.getpid():
        processes.end_with(settings.server_pid)
    app = served_app(settings)
    # What is there now (the modules, the routes, everything made while starting) stays for the
    # life of the worker: kept out of the garbage collector's sight, a full collection under
    # load takes about a millisecond instead of 100 to 160 ms in which the worker answered no one.
    gc.freeze()
    return app


def served_app(settings: Settings) -> HeadAsGet:
    """The application as a worker serves it: HEAD answered as GET, reads let in a few at a
    time (writes first), unread request bodies drained."""
    return HeadAsGet(ReadAdmission(DrainUnread(create_app(settings)), settings.reads_at_once))
