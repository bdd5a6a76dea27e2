"""Job kinds by the func_name their execution requests carry.

A job is ``fn(conn, input_params) -> output_params``: it runs inside one write transaction on
the writer connection, together with the request's move to 'finished'; if it raises, nothing
of it is kept and the request is 'failed' with the message. Modules are imported when a job of
theirs first runs.

Re-run after a crash: none. A request left 'running' by a stopped server is failed (its
transaction never committed, so nothing of it exists) and the user sends it again; requests
still 'ready' simply run when the server starts again.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

JOBS = {
    "set_permissions": "catalogue_app.jobs.permissions:set_permissions",
    "remove_permissions": "catalogue_app.jobs.permissions:remove_permissions",
    "delete": "catalogue_app.jobs.resources:delete_resource",
    "copy": "catalogue_app.jobs.resources:copy_resource",
    "create": "catalogue_app.jobs.resources:create_resource",
    "update": "catalogue_app.jobs.resources:update_resource",
}


class UnknownJob(Exception):
    pass


def job(func_name: str) -> Callable[..., dict[str, Any]]:
    target = JOBS.get(func_name)
    if target is None:
        raise UnknownJob(f"No job is called {func_name!r}.")
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
