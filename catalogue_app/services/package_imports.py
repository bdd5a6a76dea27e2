"""Starting the import of a field package (packages/importer.py does it, as the job
'package_import'): who may, and the job's parameters."""

from __future__ import annotations

from typing import Any

from catalogue_app import rules
from catalogue_app.services import access
from catalogue_app.services.errors import Forbidden, Invalid, NotSignedIn
from catalogue_app.store import Connection, users
from catalogue_app.store.resources import Viewer

FUNC = "package_import"


def check(viewer: Viewer) -> None:
    """Importing a package needs the right to add resources (updating one needs the change
    right on it, asked for each resource when the import runs)."""
    if viewer.is_anonymous:
        raise NotSignedIn()
    if not rules.may_add_resources(viewer):
        raise Forbidden("You may not add resources, so you may not import a package.")


def params(viewer: Viewer, file_name: str, *, name: str, dry_run: bool, trusted_keys: tuple[str, ...],
           reserve_bytes: int) -> dict[str, Any]:
    """The job's input: the file in its workspace (upload/``file_name``) and the name it was sent
    with, who imports it, whether it is a dry run, the signers this catalogue trusts and the disk
    it keeps free (its settings when the request was sent)."""
    check(viewer)
    return {"file": file_name, "name": name, "user_id": viewer.id, "dry_run": bool(dry_run),
            "trusted_keys": list(trusted_keys), "reserve_bytes": int(reserve_bytes)}


def importer_of(conn: Connection, username: str | None) -> Viewer:
    """The user a command-line import is made as: ``username``, or the first superuser;
    Invalid when there is no such active user."""
    row = users.by_username(conn, username) if username else None
    if username and (row is None or not row["is_active"]):
        raise Invalid(f"No active user named {username!r}.")
    user_id = row["id"] if row is not None else users.principal_superuser(conn)
    if user_id is None:
        raise Invalid("There is no superuser to import the package as; name a user with --user.")
    return access.viewer_of(conn, user_id)
