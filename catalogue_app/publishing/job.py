"""The publish job (func_name 'publish'): one resource to one remote, all of it in ``stage``
(network work, no transaction held; the publication row is written as each step ends), so a
failure fails the request with the step, the remote and what it said, and keeps what was done."""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.jobs.thumbnails import folder as thumbs_folder
from catalogue_app.publishing.publish import publish


class PublishResource:
    """params: ``{"remote_id", "resource_id"}`` (and ``site_url``, this catalogue's address as the
    caller used it); output: publish.Outcome.output()."""

    def stage(self, params: dict[str, Any], ctx) -> dict[str, Any]:
        outcome = publish(ctx.db, int(params["remote_id"]), int(params["resource_id"]), files_dir=ctx.folders.files,
                          thumbs_dir=thumbs_folder(ctx.folders.files.parent), workspace=ctx.workspace / "publish",
                          progress=ctx.progress, site_url=params.get("site_url"))
        return outcome.output()

    def commit(self, conn: sqlite3.Connection, params: dict[str, Any], staged: dict[str, Any], ctx) -> dict[str, Any]:
        return staged
