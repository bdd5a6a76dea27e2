"""What /api/v2/harvesters and /api/v2/harvesting-sessions show: harvesters, what their
remotes offer, and the harvesting sessions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import msgspec

from catalogue_app.services import harvesting as harvesting_service
from catalogue_app.store import Connection, Row, harvesters
from catalogue_app.store.filters import ListSpec

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

# The fields the lists may be filtered and sorted on.
FIELDS = harvesters.FIELDS
HARVESTABLE_FIELDS = harvesters.HARVESTABLE_FIELDS
SESSION_FIELDS = harvesters.SESSION_FIELDS


class HarvesterLinks(msgspec.Struct):
    self: str
    harvestable_resources: str


class HarvesterBrief(msgspec.Struct):
    id: int
    name: str
    status: str
    remote_url: str
    remote_available: bool
    scheduling_enabled: bool
    harvesting_session_update_frequency: int
    refresh_harvestable_resources_update_frequency: int
    check_availability_frequency: int
    default_owner: int
    links: HarvesterLinks


class Harvester(HarvesterBrief):
    harvester_type: str
    harvester_type_specific_configuration: dict[str, Any]
    last_checked_availability: str | None
    last_checked_harvestable_resources: str | None
    last_check_harvestable_resources_message: str
    harvest_new_resources_by_default: bool
    delete_orphan_resources_automatically: bool
    last_updated: str


class HarvestableResource(msgspec.Struct):
    unique_identifier: str
    title: str
    should_be_harvested: bool
    last_updated: str
    status: str
    remote_resource_type: str
    last_harvested: str | None
    last_harvesting_succeeded: bool | None
    last_harvesting_message: str
    resource: int | None


class Session(msgspec.Struct):
    id: int
    started: str
    updated: str
    ended: str | None
    total_records_to_process: int
    records_done: int
    records_failed: int
    status: str
    session_type: str
    harvester: int
    details: str


def _links(base: str, row: Row) -> HarvesterLinks:
    url = f"{base}/api/v2/harvesters/{row['id']}/"
    return HarvesterLinks(url, f"{url}harvestable-resources/")


def brief(base: str, row: Row) -> HarvesterBrief:
    return HarvesterBrief(row["id"], row["name"], row["status"], row["remote_url"], bool(row["remote_available"]),
                          bool(row["scheduling_enabled"]), row["harvesting_session_update_frequency"],
                          row["refresh_harvestable_resources_update_frequency"], row["check_availability_frequency"],
                          row["default_owner_id"], _links(base, row))


def detail(base: str, row: Row) -> Harvester:
    b = brief(base, row)
    return Harvester(**{f: getattr(b, f) for f in HarvesterBrief.__struct_fields__},
                     harvester_type=row["harvester_type"],
                     harvester_type_specific_configuration=harvesting_service.shown_config(json.loads(row["config"] or "{}")),
                     last_checked_availability=row["last_checked_availability"],
                     last_checked_harvestable_resources=row["last_checked_harvestable_resources"],
                     last_check_harvestable_resources_message=row["last_check_harvestable_resources_message"],
                     harvest_new_resources_by_default=bool(row["harvest_new_resources_by_default"]),
                     delete_orphan_resources_automatically=bool(row["delete_orphan_resources_automatically"]),
                     last_updated=row["last_updated"])


def harvestable(row: Row) -> HarvestableResource:
    succeeded = row["last_harvesting_succeeded"]
    return HarvestableResource(row["unique_identifier"], row["title"], bool(row["should_be_harvested"]),
                               row["last_updated"], row["status"], row["remote_resource_type"], row["last_harvested"],
                               None if succeeded is None else bool(succeeded), row["last_harvesting_message"],
                               row["resource_id"])


def session(row: Row) -> Session:
    return Session(row["id"], row["started"], row["updated"], row["ended"], row["total_records_to_process"],
                   row["records_done"], row["records_failed"], row["status"], row["session_type"],
                   row["harvester_id"], row["details"])


def page(conn: Connection, spec: ListSpec, base: str, limit: int, offset: int) -> tuple[int, list[HarvesterBrief]]:
    """One page of the harvesters (anyone may list them), and how many there are."""
    total, rows = harvesters.page(conn, spec, limit, offset)
    return total, [brief(base, r) for r in rows]


def one(conn: Connection, caller: Caller, harvester_id: int, base: str) -> Harvester:
    """One harvester, for superusers (services/harvesting.py says who)."""
    return detail(base, harvesting_service.get(conn, caller, harvester_id))


def harvestable_page(conn: Connection, harvester_id: int, spec: ListSpec, limit: int,
                     offset: int) -> tuple[int, list[HarvestableResource]]:
    """One page of what a harvester's remote offers, and how many there are."""
    total, rows = harvesters.harvestable_page(conn, harvester_id, spec, limit, offset)
    return total, [harvestable(r) for r in rows]


def chosen(conn: Connection, harvester_id: int, identifiers: list[str]) -> list[HarvestableResource]:
    """The harvestable resources just chosen, in the order of ``identifiers``."""
    found = harvesters.harvestable_by_identifiers(conn, harvester_id, identifiers)
    return [harvestable(found[i]) for i in identifiers if i in found]


def sessions_page(conn: Connection, spec: ListSpec, limit: int, offset: int) -> tuple[int, list[Session]]:
    """One page of the harvesting sessions, newest first, and how many there are."""
    total, rows = harvesters.session_page(conn, spec, limit, offset)
    return total, [session(r) for r in rows]


def one_session(conn: Connection, session_id: int) -> Session:
    """One harvesting session; NotFound when there is none."""
    return session(harvesting_service.session(conn, session_id))
