"""The rules of writing a map's layers: which items change, add or remove a layer, and which
dataset a layer shows (one the caller may view, or a layer from elsewhere)."""

from __future__ import annotations

import json
from typing import Any

from catalogue_app.services.errors import Invalid, Unreadable
from catalogue_app.store import Connection, Row
from catalogue_app.store import map_layers as store
from catalogue_app.store.datasets import RESERVED, WORKSPACE
from catalogue_app.store.resources import Viewer


def _int(value: Any) -> int | None:
    if isinstance(value, str) and value.isdecimal() and len(value) <= 18:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63:
        return value
    return None


def _values(item: dict[str, Any], index: int) -> dict[str, Any]:
    """The layer columns an item sets, checked (a null where null means nothing is left out)."""
    where = f"maplayers[{index}]"
    out: dict[str, Any] = {}
    if item.get("name") is not None:
        name = item["name"]
        if not isinstance(name, str) or not name.strip():
            raise Invalid(f"{where}.name: a layer name is a non-empty string.")
        out["name"] = name.strip()
    if item.get("order") is not None:
        order = item["order"]
        if isinstance(order, str) and order.isdecimal():
            order = int(order)
        if not isinstance(order, int) or isinstance(order, bool) or not 0 <= order < 2**31:
            raise Invalid(f"{where}.order: a whole number, 0 or more.")
        out["position"] = order
    if item.get("visibility") is not None:
        if not isinstance(item["visibility"], bool):
            raise Invalid(f"{where}.visibility: Must be a valid boolean.")
        out["visibility"] = item["visibility"]
    if item.get("opacity") is not None:
        opacity = item["opacity"]
        if not isinstance(opacity, (int, float)) or isinstance(opacity, bool) or not 0 <= opacity <= 1:
            raise Invalid(f"{where}.opacity: a number from 0 to 1.")
        out["opacity"] = float(opacity)
    if "current_style" in item:
        style = item["current_style"]
        if style is not None and not isinstance(style, str):
            raise Invalid(f"{where}.current_style: a style name or null.")
        out["current_style"] = style or None
    if item.get("extra_params") is not None:
        extra = item["extra_params"]
        if isinstance(extra, str):
            try:
                extra = json.loads(extra)
            except ValueError:
                extra = None
        if extra is not None and not isinstance(extra, dict):
            raise Invalid(f"{where}.extra_params: a JSON object.")
        out["extra_params"] = extra or {}
    return out


def _dataset(conn: Connection, viewer: Viewer, item: dict[str, Any], name: str | None,
             index: int) -> Row | None:
    """The dataset a layer item names: by ``dataset`` (a pk or an object with one), else by a
    name that is a dataset's alternate. A name in the catalogue's own workspace must be a dataset
    the caller may view; other names that are none are layers from elsewhere (None)."""
    given = item.get("dataset")
    if given is not None:
        rid = _int(given.get("pk", given.get("id")) if isinstance(given, dict) else given)
        row = store.visible_datasets(conn, viewer, [rid]).get(rid) if rid else None
        if row is None:
            shown = given.get("pk", given.get("id")) if isinstance(given, dict) else given
            raise Invalid(f"Invalid value for 'maplayers': Dataset object with ID={shown} not found")
        return row
    if name is None:
        return None
    rid = store.dataset_named(conn, name)
    row = store.visible_datasets(conn, viewer, [rid]).get(rid) if rid else None
    if row is None and name.partition(":")[0] == WORKSPACE and name not in RESERVED:
        raise Invalid(f"Invalid value for 'maplayers[{index}]': no dataset named {name!r} that you may view.")
    return row


def write_layers(conn: Connection, viewer: Viewer, map_id: int, items: Any, *, creating: bool) -> None:
    """Make the map's layers those of ``items`` (inside the caller's write transaction): items
    with the pk (or id) of a layer of the map change it, items without one are new layers, the
    map's other layers are deleted. Any bad item answers 400 and the transaction writes nothing.

    On a new map an item with a pk and neither name nor dataset names a dataset by its pk: the
    body geonodectl sent before it sent layer names (``"maplayers": [{"pk": <dataset pk>}]``)."""
    if not isinstance(items, list):
        raise Unreadable("'maplayers' value must be a list")
    existing = {r["id"]: r for r in store.layers_of(conn, [map_id])[map_id]}
    kept: set[int] = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise Invalid(f"maplayers[{index}]: each map layer is an object.")
        ref = item.get("pk", item.get("id"))
        if isinstance(ref, str) and not ref.isdecimal():
            ref = None  # not a layer of ours: MapStore's own layer id, say
        if ref is not None:
            layer_id = _int(ref)
            if layer_id in existing:
                current = existing[layer_id]
                values = _values(item, index)
                if item.get("dataset") is not None or values.get("name", current["name"]) != current["name"]:
                    row = _dataset(conn, viewer, item, values.get("name", current["name"]), index)
                    values["dataset_id"] = row["id"] if row else None
                store.update(conn, layer_id, values)
                kept.add(layer_id)
                continue
            if creating and item.get("name") is None and item.get("dataset") is None:
                item = {k: v for k, v in item.items() if k not in ("pk", "id")} | {"dataset": ref}
            else:
                raise Invalid(f"maplayers[{index}]: the map has no layer {ref!r}; leave out the pk of a new layer.")
        values = _values(item, index)
        row = _dataset(conn, viewer, item, values.get("name"), index)
        if "name" not in values:
            if row is None or not row["alternate"]:
                raise Invalid(f"maplayers[{index}]: a map layer needs a name or a dataset.")
            values["name"] = row["alternate"]
        values.setdefault("position", index)
        values["dataset_id"] = row["id"] if row else None
        store.insert(conn, map_id, values)
    store.delete(conn, [i for i in existing if i not in kept])
    store.sync_links(conn, map_id)
    store.fit_extent(conn, map_id)
