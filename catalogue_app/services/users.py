"""The rules of user accounts: what a user's fields may hold, who may create, change or delete
whom, the last superuser kept, deletion rules (USER_DELETION_RULES), ownership transfers and
group-manager demotion."""

from __future__ import annotations

import re
from typing import Any

from catalogue_app import rules
from catalogue_app.passwords import check_strength
from catalogue_app.services import history
from catalogue_app.services.errors import Forbidden, Invalid, NotFound
from catalogue_app.store import Connection, Row, field_history, groups, harvesters, users

USERNAME = re.compile(r"^[\w.@+-]{1,150}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


def check_values(values: dict[str, Any], caller, *, creating: bool, settings, username: str = "") -> None:
    """The checks that need no database: Invalid or Forbidden."""
    if creating:
        if not values.get("username"):
            raise Invalid("username missing from payload")
        if settings.account_email_required and not values.get("email"):
            raise Invalid("email missing from payload")
    elif "username" in values:
        raise Invalid("username cannot be updated")
    if "username" in values and not USERNAME.match(values["username"]):
        raise Invalid("Enter a valid username. This value may contain only letters, numbers, "
                      "and @/./+/-/_ characters.")
    if values.get("email") and not EMAIL.match(values["email"]):
        raise Invalid("Enter a valid email address.")
    if values.get("password"):
        problems = check_strength(values["password"], values.get("username") or username)
        if problems:
            raise Invalid(",".join(problems))
    for flag in ("is_superuser", "is_staff", "is_active"):
        if flag in values and not rules.is_admin(caller):
            raise Forbidden(f"Only administrators may change {flag}.")
    if values.get("is_superuser") and "grant_superuser" not in rules.user_actions(caller, 0, False):
        raise Forbidden("Only a superuser may grant superuser status.")


def create(conn: Connection, batch: list[dict[str, Any]]) -> list[int]:
    """New users from checked values (names and emails unique); returns their ids."""
    ids = []
    for values in batch:
        if users.by_username(conn, values["username"]):
            raise Invalid("A user with that username already exists.")
        if values.get("email") and users.email_taken(conn, values["email"]):
            raise Invalid("A user is already registered with that email")
        ids.append(users.create(conn, values))
    return ids


def may_edit(caller, target: Row) -> bool:
    """Whether the rule book lets the caller change (and delete) the account ``target``."""
    return "change" in rules.user_actions(caller, target["id"], bool(target["is_superuser"]))


def change(conn: Connection, caller, batch: list[tuple[int, dict[str, Any]]]) -> None:
    """Apply checked values to users the caller may edit; the last active superuser stays one."""
    for user_id, values in batch:
        target = users.get(conn, user_id)
        if target is None or not target["is_active"] and not rules.sees_every_account(caller):
            raise NotFound("User")
        if not may_edit(caller, target):
            raise Forbidden()
        if values.get("email") and users.email_taken(conn, values["email"], except_id=user_id):
            raise Invalid("A user is already registered with that email")
        demoting = values.get("is_superuser") is False or values.get("is_active") is False
        if demoting and target["is_superuser"] and users.active_superuser_count(conn) <= 1:
            raise Invalid("The last active superuser cannot be demoted or deactivated.")
        users.update(conn, user_id, values)


def deletion_check(conn: Connection, caller, user_id: int, conditions: tuple[str, ...]) -> None:
    target = users.get(conn, user_id)
    if target is None:
        raise NotFound("User")
    if not may_edit(caller, target):
        raise Forbidden()
    if target["is_superuser"] and users.active_superuser_count(conn) <= 1:
        raise Invalid("The last active superuser cannot be deleted.")
    owning = harvesters.names_owned_by(conn, user_id)
    if owning:
        raise Invalid(f"This user is the default owner of the harvester(s) {', '.join(map(repr, owning))}: "
                      "give them another default owner first.")
    violated = [
        rule for rule, broken in (
            ("user_has_resources", lambda: users.owned_resource_count(conn, user_id) > 0),
            ("user_is_manager", lambda: users.managed_group_count(conn, user_id) > 0),
        ) if rule in conditions and broken()
    ]
    if violated:
        raise Invalid(f"One or more validation rules are violated: {', '.join(violated)}")


def delete(conn: Connection, caller, ids: list[int], conditions: tuple[str, ...]) -> None:
    for user_id in ids:
        deletion_check(conn, caller, user_id, conditions)
        # what they owned goes to the principal superuser, and they leave the contacts they were
        # in: a version of each resource that named them
        with history.recorded(conn, history.By(caller.id, history.OWNER), *field_history.naming_user(conn, user_id)):
            users.delete(conn, user_id)


def transfer(conn: Connection, caller, target_id: int, current: int, new: int | str,
             subset: list[int] | None) -> int:
    """Give ``current``'s resources (or the ``subset`` of them) to ``new`` (a user id, or "DEFAULT":
    the principal superuser), asked on the user ``target_id``: administrators may, and users for
    their own resources. Returns how many changed hands."""
    if not rules.may_transfer_resources(caller, target_id, current):
        raise Forbidden()
    new_id = int(new) if isinstance(new, str) and new.isdecimal() and len(new) < 19 else new
    if new_id == "DEFAULT":
        new_id = users.principal_superuser(conn)
        if new_id is None:
            raise Invalid("Principal User not found")
    elif isinstance(new_id, str):
        raise Invalid('"owner" must be a user id or "DEFAULT"')
    heir = users.get(conn, new_id)
    if heir is None or not heir["is_active"]:
        raise NotFound("User")
    if users.get(conn, current) is None:
        raise NotFound("User")
    if new_id == current:
        raise Invalid("Cannot reassign to self")
    if subset is not None:
        missing = set(subset) - users.owned_resource_ids(conn, current)
        if missing:
            raise Forbidden("The user does not have any right to perform this action on this resource")
    moved = sorted(users.owned_resource_ids(conn, current)) if subset is None else subset
    with history.recorded(conn, history.By(caller.id, history.OWNER), *moved):
        return users.transfer_resources(conn, current, new_id, subset)


def may_demote(caller, user_id: int) -> bool:
    """Administrators may make a manager a plain member, and managers themselves."""
    return rules.may_demote_manager(caller, user_id)



def demote(conn: Connection, user_id: int, wanted_groups: list[int] | str) -> tuple[list[str], list[int]]:
    """Make the user a plain member of the listed groups they manage ("ALL": every one); returns
    the titles of those groups and the ids of the listed groups they do not manage."""
    managed = {r["group_id"]: r["title"] for r in groups.managed_groups(conn, user_id)}
    wanted = list(managed) if wanted_groups == "ALL" else list(dict.fromkeys(wanted_groups))
    done = [g for g in wanted if g in managed]
    groups.demote(conn, user_id, done)
    return [managed[g] for g in done], [g for g in wanted if g not in managed]
