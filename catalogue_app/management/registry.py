"""The commands by name (GeoNode's seven exposed over HTTP, then the catalogue's own). A
module is imported when its command is first used."""

from __future__ import annotations

import importlib

from catalogue_app.management.base import Command

COMMANDS = {
    "ping_mngmt_commands_http": "catalogue_app.management.ping:Ping",
    "updatelayers": "catalogue_app.management.layers:UpdateLayers",
    "sync_geonode_datasets": "catalogue_app.management.sync:SyncDatasets",
    "sync_geonode_maps": "catalogue_app.management.sync:SyncMaps",
    "importlayers": "catalogue_app.management.layers:ImportLayers",
    "set_all_datasets_metadata": "catalogue_app.management.sync:SetAllDatasetsMetadata",
    "set_layers_permissions": "catalogue_app.management.permissions:SetLayersPermissions",
    "backup": "catalogue_app.management.backup:Backup",
    "restore": "catalogue_app.management.restore:Restore",
    "check": "catalogue_app.management.check:Check",
    "repair": "catalogue_app.management.check:Repair",
    "vacuum": "catalogue_app.management.vacuum:Vacuum",
}


COMMAND_LINE_ONLY = {"restore"}  # (their classes say so too: over_http = False)


def command(name: str) -> Command | None:
    """The command of that name (its module imported now), or None when there is none."""
    target = COMMANDS.get(name)
    if target is None:
        return None
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)()


def known(over_http: bool = True) -> list[str]:
    """The names of the commands (those offered over HTTP, or all of them), without importing them."""
    return [n for n in COMMANDS if not (over_http and n in COMMAND_LINE_ONLY)]
