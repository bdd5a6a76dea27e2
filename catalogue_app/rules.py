"""Who may do what: the rule book of the catalogue, in one place.

For a viewer and a thing (a resource of any type, an execution, an upload, a group, a user, a
harvester, a management job, a remote), each function here gives the set of actions the viewer may
take on it. The functions are pure: they take facts (who asks, the thing's owner and group, the
permissions held on it) and read nothing. ``services/access.py`` gathers those facts from the store
and asks here; the store compiles which resources a viewer may see into SQL from the definitions
below (``VIEWING``, ``sees_every_resource``, the owner rule), so that lists, totals and checks
agree.

Resources follow GeoNode 5 (facts §8): actions are its permission names, and the ``perms`` a
resource body shows is exactly ``resource_actions``: what a body shows is what every check
enforces. Where one permission lets a holder do what another names (GeoNode's route rules: a
change permission lets its holder edit metadata; the permission to manage permissions lets its
holder delete, as GeoNode's "manage" level does), the other is shown too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

# -- who asks ----------------------------------------------------------------------------------


class Person(Protocol):
    """What the rules need of whoever asks: a signed-in user or anonymous (id None)."""

    id: int | None
    is_superuser: bool
    is_staff: bool


@dataclass(frozen=True)
class Viewer:
    """Who asks about resources: the person, with the groups they belong to and those they manage."""

    id: int | None = None
    is_superuser: bool = False
    group_ids: tuple[int, ...] = ()
    managed_group_ids: tuple[int, ...] = ()
    is_staff: bool = False

    @property
    def is_anonymous(self) -> bool:
        return self.id is None


def is_admin(who: Person) -> bool:
    """Staff and superusers: they manage users, groups, jobs and the catalogue's upkeep."""
    return who.is_superuser or who.is_staff


# -- resources ---------------------------------------------------------------------------------
VIEW = "view_resourcebase"
DOWNLOAD = "download_resourcebase"
CHANGE = "change_resourcebase"
CHANGE_METADATA = "change_resourcebase_metadata"
DELETE = "delete_resourcebase"
MANAGE = "change_resourcebase_permissions"
PUBLISH = "publish_resourcebase"
CHANGE_DATA = "change_dataset_data"
CHANGE_STYLE = "change_dataset_style"
APPROVE = "approve_resourcebase"
FEATURE = "feature_resourcebase"
MANAGE_ANONYMOUS = "can_manage_anonymous_permissions"
MANAGE_REGISTERED = "can_manage_registered_member_permissions"

# The order of a body's ``perms``.
ORDER = (VIEW, DOWNLOAD, CHANGE, CHANGE_METADATA, DELETE, MANAGE, PUBLISH, CHANGE_DATA, CHANGE_STYLE,
         APPROVE, FEATURE, MANAGE_ANONYMOUS, MANAGE_REGISTERED)
DOWNLOADABLE = ("dataset", "document")
EDITABLE_SUBTYPES = ("vector", "vector_time", "raster", "remote")  # data and style may be changed

# Held permissions that let their holder see a resource (store/resources.py ``visibility``).
VIEWING = (VIEW, CHANGE)
# The groups that stand for everyone (anonymous, registered members) count for these only.
EVERYONE_MAY_HOLD = (VIEW, DOWNLOAD)
# A manager of the resource's group who holds some permission on it is given these (GeoNode 5).
MANAGER_GRANTS = (CHANGE, CHANGE_METADATA, CHANGE_DATA, CHANGE_STYLE, MANAGE, PUBLISH, APPROVE, FEATURE)
# Holders of these may manage the entries of anonymous and registered members, as staff may
# (GeoNode's EDITORS_CAN_MANAGE_* settings, on by default).
EDITING = (CHANGE, CHANGE_METADATA)


@dataclass(frozen=True)
class ResourceFacts:
    """What the rules need of a resource: its owner, group, kind, and what the viewer holds on it
    (granted to them or to one of their groups; rows of resource_perms)."""

    owner_id: int | None
    group_id: int | None
    resource_type: str
    subtype: str | None
    held: frozenset[str] = frozenset()

    @classmethod
    def of(cls, row, held=frozenset()) -> "ResourceFacts":
        """From a resource row (or dict) with ``owner_id``, ``group_id``, ``resource_type`` and
        ``subtype``, and the permission names held on it."""
        return cls(row["owner_id"], row["group_id"], row["resource_type"], row["subtype"], frozenset(held))


def sees_every_resource(viewer: Viewer) -> bool:
    return viewer.is_superuser


def owns(viewer: Viewer, facts: ResourceFacts) -> bool:
    return viewer.id is not None and facts.owner_id == viewer.id


def _applicable(facts: ResourceFacts) -> set[str]:
    """Every permission that means something for this kind of resource."""
    out = set(ORDER)
    if facts.resource_type not in DOWNLOADABLE:
        out.discard(DOWNLOAD)
    if not (facts.resource_type == "dataset" and facts.subtype in EDITABLE_SUBTYPES):
        out -= {CHANGE_DATA, CHANGE_STYLE}
    return out


def resource_actions(viewer: Viewer, facts: ResourceFacts) -> tuple[str, ...]:
    """What the viewer may do with the resource, as GeoNode's permission names in body order:
    the ``perms`` its body shows, and what every check (HTTP, OGC services, downloads, jobs) asks.

    - Superusers may do everything; owners everything but approve and feature (GeoNode 5).
    - Others act through what they hold. A manager of the resource's group who holds something on
      it is also given ``MANAGER_GRANTS``, approving and featuring included.
    - ``change_resourcebase`` lets its holder see the resource and edit its metadata (a dataset's
      data and style need their own permissions, as in GeoNode); ``change_resourcebase_permissions``
      lets its holder delete it (GeoNode's "manage").
    - The two ``can_manage_*`` permissions go to owners, staff and editors of the resource.
    """
    applicable = _applicable(facts)
    if viewer.is_superuser:
        have = set(applicable)
    elif owns(viewer, facts):
        have = applicable - {APPROVE, FEATURE}
    else:
        have = set(facts.held) & applicable
        if have and facts.group_id is not None and facts.group_id in viewer.managed_group_ids:
            have |= set(MANAGER_GRANTS) & applicable
        if CHANGE in have:
            have |= {VIEW, CHANGE_METADATA}
        if MANAGE in have:
            have.add(DELETE)
        if VIEW in have and (viewer.is_staff or have & set(EDITING)):
            have |= {MANAGE_ANONYMOUS, MANAGE_REGISTERED}
        else:
            have -= {MANAGE_ANONYMOUS, MANAGE_REGISTERED}
    return tuple(p for p in ORDER if p in have)


def resource_may(viewer: Viewer, facts: ResourceFacts, action: str) -> bool:
    return action in resource_actions(viewer, facts)


# The content of a map or a geoapp (its layers and configuration), as a body names it: changing
# it is changing the resource itself (``change_resourcebase``), not its metadata.
CONTENT_FIELDS = ("maplayers", "data", "blob")


def may_change(actions: tuple[str, ...] | frozenset[str], body_keys) -> bool:
    """Whether a viewer who may take ``actions`` on a resource may send a change (PUT, PATCH) of
    these fields: its content needs ``change_resourcebase``, its metadata
    ``change_resourcebase_metadata``; a change of flags alone needs the permission of one of them
    (the flags the viewer may not set are left as they are)."""
    keys = set(body_keys)
    if keys and keys <= set(FLAGS):
        return any(FLAGS[k] in actions for k in keys)
    return (CHANGE if keys & set(CONTENT_FIELDS) else CHANGE_METADATA) in actions


# What a resource's flags need: ``featured``, ``is_approved``, ``is_published`` and ``advertised``.
# A flag the viewer may not set is left as it is, as GeoNode does.
FLAGS = {"featured": FEATURE, "is_approved": APPROVE, "is_published": PUBLISH, "advertised": PUBLISH}


def may_set_flag(viewer: Viewer, facts: ResourceFacts | None, flag: str) -> bool:
    """Whether the viewer may set ``flag`` on the resource (None: one the viewer is creating, which
    they will own)."""
    if facts is None:
        return viewer.is_superuser or FLAGS[flag] == PUBLISH
    return FLAGS[flag] in resource_actions(viewer, facts)


# -- what a user may create --------------------------------------------------------------------
def may_add_resources(who: Person) -> bool:
    """Every signed-in user may add resources (GeoNode's ``add_resource``)."""
    return who.id is not None


# -- executions and uploads --------------------------------------------------------------------
def execution_actions(who: Person, requester_id: int | None) -> frozenset[str]:
    """An execution request (a job) and the upload it may carry: whoever asked for it, and
    administrators, may see it and delete its record."""
    if who.id is not None and (is_admin(who) or requester_id == who.id):
        return frozenset({"view", "delete"})
    return frozenset()


def sees_every_execution(who: Person) -> bool:
    return is_admin(who)


# -- groups ------------------------------------------------------------------------------------
def group_actions(who: Person, *, access: str, role: str | None) -> frozenset[str]:
    """A group (its profile, members and managers): ``role`` is the viewer's in it (None,
    "member" or "manager"), ``access`` the group's ("public", "public-invite" or "private").

    - Private groups are seen by their members and administrators only.
    - Managers and administrators change the group and add or remove anyone; administrators also
      replace it whole (PUT) and delete it.
    - A signed-in user may join a public group and leave any group they belong to.
    """
    if who.id is None:
        return frozenset({"view"}) if access != "private" else frozenset()
    out = set()
    if access != "private" or role is not None or is_admin(who):
        out.add("view")
    if role == "manager" or is_admin(who):
        out |= {"change", "manage_members"}
    if is_admin(who):
        out |= {"replace", "delete"}
    if role is None and access == "public":
        out.add("join")
    if role is not None:
        out.add("leave")
    return frozenset(out)


def may_create_groups(who: Person) -> bool:
    return is_admin(who)


# -- users -------------------------------------------------------------------------------------
def user_actions(who: Person, target_id: int, target_is_superuser: bool) -> frozenset[str]:
    """Another user's (or one's own) account.

    - Superusers change and delete anyone; users themselves; staff everyone but superusers.
    - Only administrators change ``is_staff``, ``is_active`` and ``is_superuser``; only superusers
      make someone a superuser.
    """
    if who.id is None:
        return frozenset()
    out = set()
    if who.is_superuser or who.id == target_id or (who.is_staff and not target_is_superuser):
        out |= {"change", "delete"}
    if is_admin(who) and "change" in out:
        out.add("change_status")
    if who.is_superuser:
        out.add("grant_superuser")
    return frozenset(out)


def sees_every_account(who: Person) -> bool:
    """Administrators list and see every account (inactive ones, private groups) and every
    field of a user; others see active users, and their own fields in full."""
    return is_admin(who)


def sees_private_fields(who: Person, target_id: int) -> bool:
    """A user's email and permissions: themselves and administrators."""
    return is_admin(who) or (who.id is not None and who.id == target_id)


def may_create_users(who: Person) -> bool:
    return is_admin(who)


def may_transfer_resources(who: Person, target_id: int, current_owner_id: int) -> bool:
    """Giving resources to another owner: administrators, and users for their own resources."""
    return is_admin(who) or (who.id is not None and who.id == current_owner_id == target_id)


def may_demote_manager(who: Person, user_id: int) -> bool:
    """Making a group manager a plain member: administrators, and managers themselves."""
    return is_admin(who) or (who.id is not None and who.id == user_id)


def may_put_in_group(who: Person, role: str | None) -> bool:
    """Putting a resource in a group: administrators, and members of that group."""
    return is_admin(who) or role is not None


# -- the catalogue's upkeep --------------------------------------------------------------------
def may_run_management(who: Person) -> bool:
    """Management commands, their jobs and the list of backups they wrote: staff and superusers."""
    return is_admin(who)


def may_download_backups(who: Person) -> bool:
    """A backup holds password hashes and token digests: superusers only."""
    return who.is_superuser


def may_harvest(who: Person) -> bool:
    """Harvesters, their resources and sessions: superusers."""
    return who.is_superuser


def may_publish(who: Person) -> bool:
    """Remotes (other catalogues) and publishing to them: superusers."""
    return who.is_superuser


def may_ingest(who: Person) -> bool:
    """Registering files from the server's import folder as resources: administrators."""
    return is_admin(who)


def may_change_limits(who: Person) -> bool:
    """Upload size and parallelism limits: administrators change them; everyone reads them."""
    return is_admin(who)

