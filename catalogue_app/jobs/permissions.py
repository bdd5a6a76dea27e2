"""Permission change jobs: ``set_permissions`` and ``remove_permissions``.

Each runs inside one write transaction on the connection the runner hands it, and answers
GeoNode's output_params ``{"output": true}``. The resource is found by its uuid (an id may be
reused after a delete); a resource deleted before the job runs makes the job fail. Both jobs are
idempotent: running one again gives the same rows.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from catalogue_app.store import permissions, resources


def _resource_id(conn: sqlite3.Connection, params: dict[str, Any]) -> int:
    rid = resources.id_by_uuid(conn, params["uuid"])
    if rid is None:
        raise LookupError(f"The resource {params['uuid']} no longer exists.")
    return rid


def set_permissions(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """params: ``{"uuid", "resource_id", "permissions": {"users": {"<id>": "<level>"},
    "groups": {"<id>": "<level>"}}, "replace": bool}``."""
    spec = params.get("permissions") or {}
    users = {int(k): v for k, v in (spec.get("users") or {}).items()}
    groups = {int(k): v for k, v in (spec.get("groups") or {}).items()}
    permissions.apply(conn, _resource_id(conn, params), users, groups, replace=bool(params.get("replace")))
    return {"output": True}


def remove_permissions(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """params: ``{"uuid", "resource_id", "keep_groups": [special group ids the caller may not change]}``."""
    keep = tuple(int(g) for g in params.get("keep_groups") or ())
    permissions.remove_all(conn, _resource_id(conn, params), keep)
    return {"output": True}
