"""The caller's permission names on a resource, as the ``perms`` of its representation shows them
(the representation itself is read whole by reads/resources.py)."""

from __future__ import annotations

from catalogue_app.store import Row, resources
from catalogue_app.store.resources import Viewer

EDITABLE_SUBTYPES = ("vector", "vector_time", "raster", "remote")


def full_perms(row: Row, superuser: bool) -> list[str]:
    perms = ["view_resourcebase"]
    if row["resource_type"] in resources.DOWNLOADABLE:
        perms.append("download_resourcebase")
    perms += ["change_resourcebase", "change_resourcebase_metadata", "delete_resourcebase",
              "change_resourcebase_permissions", "publish_resourcebase"]
    if row["resource_type"] == "dataset" and row["subtype"] in EDITABLE_SUBTYPES:
        perms += ["change_dataset_data", "change_dataset_style"]
    if superuser:
        perms += ["approve_resourcebase", "feature_resourcebase"]
    return perms + ["can_manage_anonymous_permissions", "can_manage_registered_member_permissions"]


def caller_perms(row: Row, held: set[str], viewer: Viewer) -> list[str]:
    """The caller's permission names on one resource."""
    if viewer.is_superuser or (viewer.id is not None and row["owner_id"] == viewer.id):
        return full_perms(row, viewer.is_superuser)
    order = full_perms(row, True)
    perms = [p for p in order if p in held]
    if {"change_resourcebase", "change_resourcebase_metadata"} & held:
        perms = [p for p in perms if not p.startswith("can_manage")]
        perms += ["can_manage_anonymous_permissions", "can_manage_registered_member_permissions"]
    return perms
