"""What several commands share: users, groups, categories and permission specs named on the
command line turned into ids (CommandError when one is unknown), lists written with commas,
the resources a command works on, and the folder rule of commands run over HTTP."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from catalogue_app.management.base import CommandContext, CommandError, Stopped
from catalogue_app.store import maintenance, permissions, resource_writes, users
from catalogue_app.store.users import ANONYMOUS_GROUP_ID

ANONYMOUS_USER = "AnonymousUser"
# GeoNode's names and letters for the levels (set_layers_permissions took r, w, d, o).
LEVEL_NAMES = {"view": "view", "read": "view", "r": "view", "download": "download", "d": "download",
               "edit": "edit", "write": "edit", "w": "edit", "change": "edit", "manage": "manage",
               "owner": "manage", "o": "manage", "none": "none"}
GRANTABLE = ("view", "download", "edit", "manage")
ORDER = ("none", "view", "download", "edit", "manage")
PERMISSIONS_HELP = (
    "JSON, either GeoNode's perms spec ({\"users\": [{\"id\": 3, \"permissions\": \"edit\"}], \"groups\": "
    "[...]}, user id -1 being AnonymousUser; or {\"users\": {\"alice\": [\"view_resourcebase\", ...]}}) or "
    "the simple form {\"users\": {\"alice\": \"edit\", \"AnonymousUser\": \"view\"}, \"groups\": "
    "{\"editors\": \"download\"}} with levels none, view, download, edit or manage")


def comma_list(text: str | None) -> list[str]:
    """``a, b,,c`` -> ["a", "b", "c"]."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def id_list(text: str | None, what: str = "--ids") -> list[int] | None:
    """``1,2,3`` -> [1, 2, 3]; None when not given; CommandError for anything else."""
    if text is None:
        return None
    out = []
    for part in comma_list(text):
        if not part.isdecimal() or len(part) > 18:
            raise CommandError(f"{what}: {part!r} is not an id (write ids separated by commas, e.g. 3,7,12).")
        out.append(int(part))
    if not out:
        raise CommandError(f"{what}: no id given.")
    return out


def level(text: str) -> str:
    found = LEVEL_NAMES.get(text.strip().lower())
    if found is None or found == "none":
        raise CommandError(f"unknown permission level {text!r}: use {', '.join(GRANTABLE)} "
                           "(or GeoNode's r, d, w, o).")
    return found


def db(ctx: CommandContext):
    if ctx.db is None:
        raise CommandError("this command needs the catalogue's database.")
    return ctx.db


def user_id(ctx: CommandContext, username: str | None, default_to_caller: bool = True) -> int:
    """The id of the user named (CommandError when there is none); without a name, the caller
    over HTTP, or on the command line the first active superuser."""
    if username:
        row = db(ctx).read_sync(users.by_username, username)
        if row is None:
            raise CommandError(f"--user: there is no user {username!r}.")
        return row["id"]
    if ctx.user_id is not None and default_to_caller:
        return ctx.user_id
    found = db(ctx).read_sync(users.principal_superuser)
    if found is None:
        raise CommandError("there is no active superuser to own the data; name an owner with --user.")
    return found


def owner_filter(ctx: CommandContext, username: str | None) -> int | None:
    """The owner a ``--username`` option names (None when not given)."""
    if not username:
        return None
    row = db(ctx).read_sync(users.by_username, username)
    if row is None:
        raise CommandError(f"--username: there is no user {username!r}.")
    return row["id"]


def category_id(ctx: CommandContext, identifier: str | None) -> int | None:
    if not identifier:
        return None
    found = db(ctx).read_sync(resource_writes.lookup_id, "categories", "identifier", identifier.strip())
    if found is None:
        known = ", ".join(db(ctx).read_sync(maintenance.category_identifiers)) or "none"
        raise CommandError(f"--category: there is no category {identifier!r} (known: {known}).")
    return found


def principal_ids(ctx: CommandContext, names: list[str], table: str) -> dict[str, int]:
    """Users (by user name; AnonymousUser is the anonymous group) or groups (by name) -> ids."""
    wanted = {n for n in names if not (table == "users" and n == ANONYMOUS_USER)}
    found = db(ctx).read_sync(permissions.ids_by_name, table, wanted)
    missing = sorted(wanted - set(found))
    if missing:
        option = "--users" if table == "users" else "--groups"
        raise CommandError(f"{option}: there is no {table[:-1]} named {', '.join(repr(m) for m in missing)}.")
    return found


def permissions_spec(ctx: CommandContext, text: str) -> tuple[dict[int, str], dict[int, str]]:
    """``--permissions`` (see PERMISSIONS_HELP) -> levels by user id and by group id."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--permissions: not valid JSON ({exc.msg} at character {exc.pos}).") from None
    if not isinstance(body, dict):
        raise CommandError("--permissions: expected a JSON object with \"users\" and/or \"groups\".")
    unknown = sorted(set(body) - {"users", "groups", "organizations"})
    if unknown:
        raise CommandError(f"--permissions: unknown key {unknown[0]!r} (expected users, groups, organizations).")
    users_out: dict[int, str] = {}
    groups_out: dict[int, str] = {}
    for key in ("users", "groups", "organizations"):
        value = body.get(key)
        if value is None:
            continue
        table = "users" if key == "users" else "groups"
        if isinstance(value, list):
            entries = _array_entries(ctx, key, table, value)
        elif isinstance(value, dict):
            entries = _mapping_entries(ctx, key, table, value)
        else:
            raise CommandError(f"--permissions: {key} must be a list of {{id, permissions}} or an object of names.")
        for where, target, ident, lvl in entries:
            if target == "group":
                refusal = permissions.special_group_refusal(ident, lvl)
                if refusal:
                    raise CommandError(f"--permissions: {where}: {refusal}")
                groups_out[ident] = lvl
            else:
                users_out[ident] = lvl
    return users_out, groups_out


def _entry_level(where: str, value: Any) -> str:
    if isinstance(value, str):
        found = LEVEL_NAMES.get(value.strip().lower())
        if found is None:
            raise CommandError(f"--permissions: {where}: unknown level {value!r} (none, view, download, edit, manage).")
        return found
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        unknown = sorted(set(value) - permissions.NAMES)
        if unknown:
            raise CommandError(f"--permissions: {where}: unknown permission {unknown[0]!r}.")
        return permissions.level_of(set(value), "dataset")
    raise CommandError(f"--permissions: {where}: expected a level or a list of permission names.")


def _array_entries(ctx: CommandContext, key: str, table: str, value: list[Any]) -> list[tuple[str, str, int, str]]:
    out = []
    for i, entry in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(entry, dict) or "id" not in entry or "permissions" not in entry:
            raise CommandError(f"--permissions: {where}: expected an object with id and permissions.")
        ident = entry["id"]
        if isinstance(ident, str) and ident.lstrip("-").isdecimal():
            ident = int(ident)
        if not isinstance(ident, int) or isinstance(ident, bool):
            raise CommandError(f"--permissions: {where}: id must be a whole number.")
        lvl = _entry_level(where, entry["permissions"])
        if key == "users" and ident == -1:
            out.append((where, "group", ANONYMOUS_GROUP_ID, lvl))
            continue
        if not db(ctx).read_sync(permissions.known_ids, table, {ident}):
            raise CommandError(f"--permissions: {where}: there is no {table[:-1]} with id {ident}.")
        out.append((where, "user" if key == "users" else "group", ident, lvl))
    return out


def _mapping_entries(ctx: CommandContext, key: str, table: str, value: dict[str, Any]
                     ) -> list[tuple[str, str, int, str]]:
    names = {n for n in value if not (key == "users" and n == ANONYMOUS_USER)}
    found = db(ctx).read_sync(permissions.ids_by_name, table, names)
    out = []
    for name, perms in value.items():
        where = f"{key}[{name!r}]"
        lvl = _entry_level(where, perms)
        if key == "users" and name == ANONYMOUS_USER:
            out.append((where, "group", ANONYMOUS_GROUP_ID, lvl))
        elif name not in found:
            raise CommandError(f"--permissions: there is no {table[:-1]} named {name!r}.")
        else:
            out.append((where, "user" if key == "users" else "group", found[name], lvl))
    return out


# -- folders ------------------------------------------------------------------------------------
def inside(base: Path, path: Path) -> bool:
    """Whether ``path``, links resolved, lies in ``base`` (or is it)."""
    try:
        real, root = path.resolve(), base.resolve()
    except (OSError, RuntimeError):
        return False
    return real == root or root in real.parents


def allowed_path(ctx: CommandContext, text: str, option: str = "path") -> Path:
    """A path named by the operator. Over HTTP (a caller is known) it is taken relative to the
    import folder and must stay inside it, links resolved; on the command line it may be any
    path. CommandError when it does not exist or lies outside."""
    if "\x00" in text:
        raise CommandError(f"{option}: {text!r} is not a path.")
    if ctx.user_id is not None:
        path = Path(text) if os.path.isabs(text) else ctx.import_dir / text
        if not inside(ctx.import_dir, path):
            raise CommandError(f"{option}: {text!r} is outside the import folder; over HTTP only files in the "
                               f"import folder may be registered.")
    else:
        path = Path(text).expanduser()
    if not path.exists():
        raise CommandError(f"{option}: there is no file or folder {text!r}.")
    return path


def run_each(ctx: CommandContext, rows: list[Any], kind: str, one, done: str = "synced") -> None:
    """``one(row) -> str`` for each row (one transaction each), a line each, ctx.check() between them;
    a row's failure is reported and the others go on; CommandError at the end when one failed."""
    if not rows:
        ctx.say(f"No {kind} matches.")
        return
    failed = 0
    for row in rows:
        ctx.check()
        try:
            said = one(row)
        except (Stopped, CommandError):
            raise
        except Exception as exc:  # this one's failure (unreadable data, a vanished row...): the others go on
            failed += 1
            ctx.say(f"failed  {kind} {row['id']} {row['title']!r}: {exc}")
            continue
        ctx.say(f"done    {kind} {row['id']} {row['title']!r}: {said}")
    ctx.say(f"{len(rows)} {kind}{'s' if len(rows) != 1 else ''}: {len(rows) - failed} done, {failed} failed")
    if failed:
        raise CommandError(f"{failed} {kind}{'s' if failed != 1 else ''} could not be {done} (see above).")
