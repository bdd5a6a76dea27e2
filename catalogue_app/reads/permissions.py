"""Permissions as the API shows them: who holds which level on a resource (the overview of
/api/v2/resources/{pk}/permissions), the resource a caller may manage the permissions of, a
perms spec checked against it, and what each level stands for on each resource type (the
``allowed_perms`` of /api/v2/resources/resource_types)."""

from __future__ import annotations

from typing import Any

import msgspec

from catalogue_app import rules
from catalogue_app.reads import perms_spec
from catalogue_app.reads import resources as resource_reads
from catalogue_app.reads.perms_spec import Spec
from catalogue_app.reads.users import DEFAULT_AVATAR, absolute
from catalogue_app.rules import Viewer
from catalogue_app.services import access
from catalogue_app.services.errors import Forbidden, NotFound
from catalogue_app.store import Connection, permissions, resources
from catalogue_app.store.resources import GEOAPP_TYPES
from catalogue_app.store.users import ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID

DEFAULT_GROUP_LOGO = DEFAULT_AVATAR


class UserLevel(msgspec.Struct):
    id: int
    username: str
    first_name: str
    last_name: str
    avatar: str
    permissions: str
    is_superuser: bool
    is_staff: bool


class OrganizationLevel(msgspec.Struct):
    id: int
    title: str
    name: str
    logo: str
    permissions: str


class GroupLevel(msgspec.Struct):
    id: int
    title: str
    name: str
    permissions: str


class Overview(msgspec.Struct):
    users: list[UserLevel]
    organizations: list[OrganizationLevel]
    groups: list[GroupLevel]


class Managed(msgspec.Struct):
    """A resource the caller may change the permissions of, and which special groups."""

    id: int
    uuid: str
    resource_type: str
    subtype: str | None
    anonymous: bool      # can_manage_anonymous_permissions
    registered: bool     # can_manage_registered_member_permissions

    def kept_groups(self) -> list[int]:
        """The special groups whose levels the caller may not change (kept when all others go)."""
        return [g for g, may in ((ANONYMOUS_GROUP_ID, self.anonymous), (REGISTERED_GROUP_ID, self.registered))
                if not may]


class CompactLevel(msgspec.Struct):
    name: str
    label: str


class AllowedPerms(msgspec.Struct):
    """Who may be given what on a type: permission names and levels, for the anonymous group,
    the registered-members group and everyone else ("default")."""

    perms: dict[str, list[str]]
    compact: dict[str, list[CompactLevel]]


class TypeCount(msgspec.Struct):
    name: str
    count: int
    allowed_perms: AllowedPerms


class ResourceTypes(msgspec.Struct):
    resource_types: list[TypeCount]


def managed(conn: Connection, viewer: Viewer, rid: int) -> Managed:
    """The resource if the viewer may manage its permissions: NotFound when they cannot see it,
    Forbidden when the rule book does not give them change_resourcebase_permissions on it. Which
    special groups they may set is the rule book's too (the two ``can_manage_*`` permissions)."""
    row = resources.get_visible(conn, viewer, rid)
    if row is None:
        raise NotFound("ResourceBase")
    actions = access.resource_actions(conn, viewer, row)
    if rules.MANAGE not in actions:
        raise Forbidden()
    return Managed(row["id"], row["uuid"], row["resource_type"], row["subtype"],
                   rules.MANAGE_ANONYMOUS in actions, rules.MANAGE_REGISTERED in actions)


def overview(conn: Connection, viewer: Viewer, rid: int, base: str) -> Overview:
    """Who holds which level on a resource whose permissions the viewer may manage."""
    data = permissions.overview(conn, managed(conn, viewer, rid).id)
    return Overview(
        users=[UserLevel(**{**u, "avatar": absolute(base, u["avatar"] or DEFAULT_AVATAR)}) for u in data["users"]],
        organizations=[OrganizationLevel(**{**o, "logo": absolute(base, o["logo"] or DEFAULT_GROUP_LOGO)})
                       for o in data["organizations"]],
        groups=[GroupLevel(**g) for g in data["groups"]],
    )


def spec(conn: Connection, body: Any, target: Managed) -> Spec:
    """The levels a perms spec body gives on ``target`` (Invalid names what is wrong in it);
    entries for the special groups are dropped unless the caller may manage them (GeoNode 5)."""
    parsed = perms_spec.parse(conn, body, target.resource_type)
    dropped = set(target.kept_groups())
    return Spec(parsed.users, {g: level for g, level in parsed.groups.items() if g not in dropped})


def allowed_perms(resource_type: str) -> AllowedPerms:
    subtype = "vector" if resource_type == "dataset" else None
    everyone = permissions.level_perms(resource_type, subtype, "download")
    levels = ["view", "download"] if resource_type in resources.DOWNLOADABLE else ["view"]
    level = [CompactLevel(name, name.capitalize()) for name in levels]
    read_only = [CompactLevel("none", "None"), *level]
    return AllowedPerms(
        perms={"anonymous": everyone, "default": permissions.level_perms(resource_type, subtype, "manage"),
               "registered-members": everyone},
        compact={"anonymous": read_only,
                 "default": [*level, *(CompactLevel(n, n.capitalize()) for n in ("edit", "manage", "owner"))],
                 "registered-members": read_only})


def resource_types(conn: Connection, viewer: Viewer) -> ResourceTypes:
    """Each resource type with the number the viewer can see and the levels it takes."""
    counts = resource_reads.type_counts(conn, viewer)
    return ResourceTypes([TypeCount(name, counts.get(name, 0), allowed_perms(name))
                          for name in ("dataset", "document", "map", *GEOAPP_TYPES)])
