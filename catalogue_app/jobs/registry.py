"""Job kinds by the func_name their execution requests carry.

A job is a function ``fn(conn, input_params) -> output_params`` that runs inside one write
transaction together with the request's move to 'finished' (if it raises, nothing of it is
kept and the request is 'failed' with the message), or a class whose instances stage slow work
first (see jobs/runner.py). Modules are imported when a job of theirs first runs.

Re-run after a crash: none. A request left 'running' by a stopped server is failed (its
transaction never committed, so nothing of it exists) and the user sends it again; requests
still 'ready' simply run when the server starts again. A job function is claimed in the same
transaction it runs in, so a crash leaves its request 'ready', never 'running'.
"""

from __future__ import annotations

import importlib
from typing import Any

JOBS = {
    "set_permissions": "catalogue_app.jobs.permissions:set_permissions",
    "remove_permissions": "catalogue_app.jobs.permissions:remove_permissions",
    "delete": "catalogue_app.jobs.resources:DeleteResource",
    "copy": "catalogue_app.jobs.copies:CopyResource",
    "create": "catalogue_app.jobs.resources:create_resource",
    "update": "catalogue_app.jobs.resources:update_resource",
    "ingest": "catalogue_app.jobs.ingest:IngestDocument",
    "import": "catalogue_app.jobs.imports:ImportDataset",
    "apply_metadata": "catalogue_app.jobs.apply:ApplyMetadata",
    "apply_style": "catalogue_app.jobs.apply:ApplyStyle",
    "publish": "catalogue_app.publishing.job:PublishResource",
    "package_import": "catalogue_app.jobs.package_import:ImportPackage",
    "package_export": "catalogue_app.jobs.package_export:ExportPackage",
}


class UnknownJob(Exception):
    pass


def job(func_name: str) -> Any:
    """The job function, or an instance of the job class (see jobs/runner.py for both forms)."""
    target = JOBS.get(func_name)
    if target is None:
        raise UnknownJob(f"No job is called {func_name!r}.")
    module, _, name = target.partition(":")
    found = getattr(importlib.import_module(module), name)
    return found() if isinstance(found, type) else found
