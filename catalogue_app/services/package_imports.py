"""Starting the import of a field package (packages/importer.py does it, as the job
'package_import'): who may, and the job's parameters."""

from __future__ import annotations

from typing import Any

from catalogue_app import rules
from catalogue_app.services.errors import Forbidden, NotSignedIn
from catalogue_app.store.resources import Viewer

FUNC = "package_import"


def check(viewer: Viewer) -> None:
    """Importing a package needs the right to add resources (updating one needs the change
    right on it, asked for each resource when the import runs)."""
    if viewer.is_anonymous:
        raise NotSignedIn()
    if not rules.may_add_resources(viewer):
        raise Forbidden("You may not add resources, so you may not import a package.")


def params(viewer: Viewer, file_name: str, *, dry_run: bool, trusted_keys: tuple[str, ...]) -> dict[str, Any]:
    """The job's input: the file in its workspace (upload/``file_name``), who imports it, whether
    it is a dry run, and the signers this catalogue trusts (its settings, when it was sent)."""
    check(viewer)
    return {"file": file_name, "user_id": viewer.id, "dry_run": bool(dry_run), "trusted_keys": list(trusted_keys)}
