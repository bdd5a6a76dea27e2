"""Reading a perms spec in either of its two shapes into levels by user id and group id.

Array form: ``{"users": [{"id", "permissions": <level>}], "groups": [...], "organizations": [...]}``
(user id -1 is AnonymousUser, that is the anonymous group; other keys of an entry are ignored).
Mapping form: ``{"users": {"<username>" | "AnonymousUser": [<permission names>]},
"groups": {"<group name>": [...]}}``; the names become the level they amount to. Each key may
use either form. Anything unknown or of the wrong type is a 400 naming it, and so is a level
above download for the anonymous or registered-members group (they stand for everyone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from catalogue_app.services.errors import Invalid
from catalogue_app.store import Connection, permissions
from catalogue_app.store.users import ANONYMOUS_GROUP_ID

ANONYMOUS_USER_ID = -1
ANONYMOUS_USER = "AnonymousUser"
KEYS = ("users", "groups", "organizations")
NUMBER = re.compile(r"-?[0-9]{1,18}")


@dataclass
class Spec:
    users: dict[int, str] = field(default_factory=dict)
    groups: dict[int, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, dict[str, str]]:
        return {"users": {str(k): v for k, v in self.users.items()},
                "groups": {str(k): v for k, v in self.groups.items()}}


def _id(where: str, value: Any) -> int:
    if isinstance(value, str) and NUMBER.fullmatch(value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not -1 <= value < 2**63:
        raise Invalid(f"{where}: id must be a whole number (-1 for AnonymousUser), not {value!r}.")
    return value


def _level(where: str, value: Any) -> str:
    if not isinstance(value, str) or value not in permissions.LEVELS:
        raise Invalid(f"{where}: unknown permissions level {value!r}; expected one of "
                      f"{', '.join(permissions.LEVELS)}.")
    return value


def _names_level(where: str, value: Any, resource_type: str) -> str:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid(f"{where}: expected a list of permission names.")
    unknown = sorted(set(value) - permissions.NAMES)
    if unknown:
        raise Invalid(f"{where}: unknown permission {unknown[0]!r}.")
    return permissions.level_of(set(value), resource_type)


def _entries(key: str, value: Any) -> list[tuple[str, int, str]]:
    """(where, id, level) of the array form."""
    out = []
    for index, entry in enumerate(value):
        where = f"{key}[{index}]"
        if not isinstance(entry, dict):
            raise Invalid(f"{where}: expected an object with id and permissions.")
        for required in ("id", "permissions"):
            if required not in entry:
                raise Invalid(f"{where}: {required} is required.")
        out.append((where, _id(where, entry["id"]), _level(where, entry["permissions"])))
    return out


def _set_group(spec: Spec, where: str, group_id: int, level: str) -> None:
    """Record a group's level; the groups that stand for everyone may only be given read levels."""
    refusal = permissions.special_group_refusal(group_id, level)
    if refusal:
        raise Invalid(f"{where}: {refusal} Nothing was changed.")
    spec.groups[group_id] = level


def parse(conn: Connection, body: Any, resource_type: str) -> Spec:
    """The levels a body asks for, with every user and group checked to exist."""
    if not isinstance(body, dict):
        raise Invalid("Expected a JSON object with users, groups or organizations.")
    spec = Spec()
    for key in KEYS:
        value = body.get(key)
        if value is None:
            continue
        if isinstance(value, list):
            entries = _entries(key, value)
            table = "users" if key == "users" else "groups"
            wanted = {i for _, i, _ in entries if not (key == "users" and i == ANONYMOUS_USER_ID)}
            known = permissions.known_ids(conn, table, wanted)
            for where, ident, level in entries:
                if key == "users" and ident == ANONYMOUS_USER_ID:
                    _set_group(spec, where, ANONYMOUS_GROUP_ID, level)
                elif ident not in known:
                    raise Invalid(f"{where}: no {table[:-1]} with id {ident}.")
                elif key == "users":
                    spec.users[ident] = level
                else:
                    _set_group(spec, where, ident, level)
        elif isinstance(value, dict):
            table = "users" if key == "users" else "groups"
            names = {n for n in value if not (key == "users" and n == ANONYMOUS_USER)}
            found = permissions.ids_by_name(conn, table, names)
            for name, perms in value.items():
                where = f"{key}[{name!r}]"
                level = _names_level(where, perms, resource_type)
                if key == "users" and name == ANONYMOUS_USER:
                    _set_group(spec, where, ANONYMOUS_GROUP_ID, level)
                elif name not in found:
                    raise Invalid(f"{key}: no {table[:-1]} named {name!r}.")
                elif key == "users":
                    spec.users[found[name]] = level
                else:
                    _set_group(spec, where, found[name], level)
        else:
            raise Invalid(f"{key}: expected a list of {{id, permissions}} objects or a mapping from "
                          f"names to lists of permission names.")
    return spec
