"""Who may do what with a resource: the one place these rules live.

- Superusers may do everything; an owner everything with their own resources.
- Others act through the permissions granted to them or to their groups (rows of
  resource_perms, see store/permissions.py), checked here by the action they allow:
  change (its metadata or data), delete, download, restyle a dataset.
- Deleting is allowed with ``delete_resourcebase``, and, as in GeoNode, to whoever may manage
  the resource's permissions.
- A manager of the resource's group who holds any permission on it may also edit it and manage
  its permissions, as in GeoNode 5 (added where the held permissions are read:
  store/resources.py ``held_perms``).
- Seeing a resource is a condition joined into every query (store/resources.py ``visibility``),
  never a check made afterwards, so that lists, totals and pages agree.
- The flags of a resource: ``featured`` is set by superusers and managers of its group;
  ``is_published`` and ``advertised`` also by its owner; ``is_approved`` also by whoever may
  change its metadata. A flag the caller may not set is left as it is, as GeoNode does.
"""

from __future__ import annotations

from catalogue_app.store import Connection, Row, groups, resources
from catalogue_app.store.resources import Viewer

CHANGE = frozenset({"change_resourcebase", "change_resourcebase_metadata"})
DELETE = frozenset({"delete_resourcebase", "change_resourcebase_permissions"})
DOWNLOAD = frozenset({"download_resourcebase"})
EDIT_STYLE = frozenset({"change_dataset_style", "change_resourcebase"})


def may(conn: Connection, viewer: Viewer, row: Row | dict, wanted: frozenset[str] | set[str]) -> bool:
    """Whether the viewer holds one of the ``wanted`` permissions on the resource ``row``
    (its ``id`` and ``owner_id``); owners and superusers hold them all."""
    if viewer.is_superuser or (viewer.id is not None and row["owner_id"] == viewer.id):
        return True
    return bool(wanted & resources.held_perms(conn, viewer, row["id"]))


def may_set_flag(conn: Connection, viewer: Viewer, row: Row | None, flag: str) -> bool:
    """Whether the viewer may set ``featured``, ``is_published``, ``advertised`` or
    ``is_approved`` on the resource ``row`` (None: a resource being created by the viewer)."""
    if viewer.is_superuser:
        return True
    owner = row is None or row["owner_id"] == viewer.id
    manager = bool(row is not None and row["group_id"] and groups.role(conn, row["group_id"], viewer.id) == "manager")
    if flag == "featured":
        return manager
    if flag in ("is_published", "advertised"):
        return owner or manager
    return owner or manager or (row is not None and "change_resourcebase_metadata" in
                                resources.held_perms(conn, viewer, row["id"]))
