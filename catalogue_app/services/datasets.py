"""The rules of changing a dataset's attributes (labels, descriptions, visibility, order)."""

from __future__ import annotations

from typing import Any

import msgspec

from catalogue_app.services.errors import Invalid
from catalogue_app.store import Connection, datasets


class AttributeChange(msgspec.Struct, kw_only=True):
    """One attribute to change, named by its pk or its name."""

    pk: int | None = None
    attribute: str | None = None
    attribute_label: str | None = None
    description: str | None = None
    visible: bool | None = None
    display_order: int | None = None


def change_attributes(conn: Connection, rid: int, items: Any) -> None:
    """Apply a list of attribute changes (GeoNode's attribute_set items; geonodectl's ``label``
    is taken for attribute_label). An unknown attribute answers 400 and changes nothing."""
    if not isinstance(items, list):
        raise Invalid("attribute_set: expected a list of attributes, each with its pk or its attribute name.")
    for item in items:
        if not isinstance(item, dict):
            raise Invalid("attribute_set: each item is an object with its pk or its attribute name.")
        if "label" in item and "attribute_label" not in item:
            item = {**item, "attribute_label": item["label"]}
        try:
            change = msgspec.convert({k: v for k, v in item.items() if k in AttributeChange.__struct_fields__},
                                     AttributeChange)
        except msgspec.ValidationError as exc:
            raise Invalid(f"attribute_set: {exc}") from None
        attribute_id = change.pk if change.pk is not None else (
            datasets.attribute_id_named(conn, rid, change.attribute) if change.attribute else None)
        values = {k: v for k, v in msgspec.structs.asdict(change).items() if k in datasets.ATTRIBUTE_FIELDS
                  and k in item}
        if attribute_id is None or not datasets.update_attribute(conn, rid, attribute_id, values):
            raise Invalid(f"attribute_set: the dataset has no attribute {change.pk or change.attribute!r}.")
