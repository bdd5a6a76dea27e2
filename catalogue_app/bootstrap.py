"""First start: the data folder, the database schema and an admin account."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue_app.config import Settings
from catalogue_app.passwords import generate_password, hash_password
from catalogue_app.store import db as dbmod
from catalogue_app.store import users


@dataclass
class Prepared:
    created_admin: bool
    admin_username: str | None = None
    admin_password: str | None = None  # set only when it was generated here


def prepare(settings: Settings) -> Prepared:
    """Create what is missing; safe to run on every start and from several processes."""
    for folder in (settings.data_dir, settings.files_dir, settings.tmp_dir, settings.import_folder):
        folder.mkdir(parents=True, exist_ok=True)
    dbmod.migrate(settings.database_path)
    with dbmod.transaction(settings.database_path) as conn:
        if users.principal_superuser(conn) is not None:
            return Prepared(False)
        password = settings.admin_password
        generated = not password
        if generated:
            password = generate_password()
        username = settings.admin_username or "admin"
        users.create(conn, {
            "username": username, "password": hash_password(password),
            "email": settings.admin_email,
            "is_superuser": 1, "is_staff": 1,
        })
    return Prepared(True, username, password if generated else None)
