"""The rules of harvesters (GeoNode's, facts §17): anyone lists them; only superusers read one,
create, change or delete one, or choose what it harvests (GeoNode leaves that last one open to
anyone: a hole not kept here).

A harvester is 'ready' or busy with one piece of work, named by its status. Setting a busy
status through the API asks for that work (the harvesting runner, harvesting/runner.py, takes
it up); while it runs, the only change accepted is the matching 'aborting-...' status. A change
of the type-specific configuration makes the list of what the remote offers anew.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from catalogue_app import rules
from catalogue_app.harvesting import registry
from catalogue_app.services.errors import Forbidden, Invalid, NotFound, NotSignedIn
from catalogue_app.store import Connection, Row, harvesters, users

READY = "ready"
REFRESHING = "updating-harvestable-resources"
HARVESTING = "harvesting-resources"
CHECKING = "checking-availability"
ABORT_REFRESH = "aborting-update-harvestable-resources"
ABORT_HARVEST = "aborting-harvesting-resources"
STATUSES = (READY, REFRESHING, ABORT_REFRESH, HARVESTING, ABORT_HARVEST, CHECKING)
WORK = (REFRESHING, HARVESTING, CHECKING)          # statuses that ask for work
ABORTS = {REFRESHING: ABORT_REFRESH, HARVESTING: ABORT_HARVEST}
FREQUENCIES = ("harvesting_session_update_frequency", "refresh_harvestable_resources_update_frequency",
               "check_availability_frequency")
MAX_MINUTES = 60 * 24 * 366
HIDDEN = "********"  # a token in a configuration, as it is shown (and may be sent back unchanged)


def shown_config(config: dict[str, Any]) -> dict[str, Any]:
    """A configuration as the API shows it: a token is never shown."""
    return {**config, "token": HIDDEN} if config.get("token") else config


def require_superuser(caller) -> None:
    if caller.is_anonymous:
        raise NotSignedIn()
    if not rules.may_harvest(caller):
        raise Forbidden()


def get(conn: Connection, caller, harvester_id: int) -> Row:
    require_superuser(caller)
    row = harvesters.get(conn, harvester_id)
    if row is None:
        raise NotFound("Harvester")
    return row


def _url(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("remote_url: This field is required.")
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 - raises ValueError on a port that is no number, or out of range
    except ValueError:
        raise Invalid("remote_url: Enter a valid URL (http or https).") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() or ord(c) < 32 for c in value.strip()):
        raise Invalid("remote_url: Enter a valid URL (http or https).")
    if len(value) > 2000:
        raise Invalid("remote_url: Ensure this field has no more than 2000 characters.")
    return value.strip()


def _checked(conn: Connection, values: dict[str, Any], current: Row | None) -> dict[str, Any]:
    """Values of a create or an update, checked; the configuration with its defaults."""
    out = dict(values)
    if "name" in out:
        name = out["name"]
        if not isinstance(name, str) or not name.strip():
            raise Invalid("name: This field may not be blank.")
        if len(name) > 255:
            raise Invalid("name: Ensure this field has no more than 255 characters.")
        if harvesters.name_taken(conn, name.strip(), current["id"] if current else None):
            raise Invalid("name: harvester with this name already exists.")
        out["name"] = name.strip()
    if "remote_url" in out:
        out["remote_url"] = _url(out["remote_url"])
    for field in FREQUENCIES:
        if field in out and not 1 <= out[field] <= MAX_MINUTES:
            raise Invalid(f"{field}: Ensure this value is between 1 and {MAX_MINUTES} (minutes).")
    if "default_owner_id" in out and users.get(conn, out["default_owner_id"]) is None:
        raise Invalid(f'default_owner: Invalid pk "{out["default_owner_id"]}" - object does not exist.')
    if "harvester_type" in out or "config" in out:
        type_name = out.get("harvester_type") or (current["harvester_type"] if current else registry.DEFAULT)
        config = out["config"] if "config" in out else (harvesters.config_of(current) if current else {})
        if isinstance(config, dict) and config.get("token") == HIDDEN:  # sent back as shown: kept
            config = {**config, "token": harvesters.config_of(current).get("token") if current else None}
        try:
            out["config"] = registry.checked_config(type_name, config)
        except registry.BadConfiguration as exc:
            raise Invalid(f"Invalid 'harvester_type_specific_configuration' configuration: {exc}") from None
    return out


def create(conn: Connection, caller, values: dict[str, Any]) -> int:
    require_superuser(caller)
    status = values.pop("status", READY)
    if status != READY:
        raise Invalid(f"Invalid initial value for status: {status}")
    if "name" not in values:
        raise Invalid("name: This field is required.")
    if "remote_url" not in values:
        raise Invalid("remote_url: This field is required.")
    values.setdefault("harvester_type", registry.DEFAULT)
    values.setdefault("config", {})
    values.setdefault("default_owner_id", caller.id)
    return harvesters.create(conn, _checked(conn, values, None))


def change(conn: Connection, caller, harvester_id: int, values: dict[str, Any]) -> str | None:
    """Apply an update; the work it asks for (a busy status), if any, for the runner to start."""
    current = get(conn, caller, harvester_id)
    status = values.get("status")
    if status is not None and status not in STATUSES:
        raise Invalid(f'status: "{status}" is not a valid choice.')
    busy = current["status"] != READY
    if busy:
        if status is not None and status == ABORTS.get(current["status"]) and len(values) == 1:
            harvesters.set_status(conn, harvester_id, status, only_from=(current["status"],))
            return None
        raise Invalid(f"Harvester is currently busy (status: {current['status']}). Wait until it is ready, "
                      "or abort what it does.")
    if status == READY:
        raise Invalid("Cannot set the status to ready: it becomes ready once its work is done.")
    if status is not None and "config" in values:
        raise Invalid("Cannot set the status and change 'harvester_type_specific_configuration' together.")
    if status in ABORTS.values():
        raise Invalid(f"Nothing to abort: the harvester is {current['status']}.")
    checked = _checked(conn, values, current)
    config_changed = "config" in checked and (checked["config"] != harvesters.config_of(current)
                                              or checked.get("harvester_type", current["harvester_type"])
                                              != current["harvester_type"])
    url_changed = "remote_url" in checked and checked["remote_url"] != current["remote_url"]
    harvesters.update(conn, harvester_id, checked)
    if config_changed or url_changed:
        harvesters.drop_harvestable(conn, harvester_id)
        status = REFRESHING
    if status in WORK:
        harvesters.set_status(conn, harvester_id, status)
        return status
    return None


def delete(conn: Connection, caller, harvester_id: int) -> None:
    current = get(conn, caller, harvester_id)
    if current["status"] != READY:
        raise Invalid(f"Harvester is currently busy (status: {current['status']}). Abort what it does first.")
    harvesters.delete(conn, harvester_id)


def choose(conn: Connection, caller, harvester_id: int, choices: list[tuple[str, bool]]) -> list[str]:
    """Mark items to harvest (or not); their identifiers, to render them."""
    get(conn, caller, harvester_id)
    identifiers = [identifier for identifier, _ in choices]
    found = harvesters.harvestable_by_identifiers(conn, harvester_id, identifiers)
    missing = [i for i in identifiers if i not in found]
    if missing:
        raise Invalid(f"Harvestable resource not found: {missing[0]!r} is not offered by harvester {harvester_id}.")
    harvesters.choose(conn, harvester_id, dict(choices))
    return list(dict.fromkeys(identifiers))


def visible_harvester(conn: Connection, caller, harvester_id: int) -> Row:
    """A harvester for its harvestable resources' list: open to anyone, as GeoNode, but for a
    harvester that reads its remote with a token (what it lists may be private there, and what
    it harvested is private here): superusers only."""
    row = harvesters.get(conn, harvester_id)
    if row is None:
        raise NotFound("Harvester")
    if harvesters.config_of(row).get("token"):
        require_superuser(caller)
    return row


def session(conn: Connection, session_id: int) -> Row:
    row = harvesters.session(conn, session_id)
    if row is None:
        raise NotFound("AsynchronousHarvestingSession")
    return row
