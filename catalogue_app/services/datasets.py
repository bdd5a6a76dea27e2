"""The rules of changing what is particular to datasets: attributes (labels, descriptions,
visibility, order), styles (SLD documents), and the uploaded ISO metadata document."""

from __future__ import annotations

from typing import Any

import msgspec

from catalogue_app.services import access, history
from catalogue_app.services.errors import Forbidden, Invalid, NotFound
from catalogue_app.store import Connection, datasets, metadata, resources
from catalogue_app.store.resources import Viewer


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


def set_style(conn: Connection, viewer: Viewer, workspace: str, name: str, sld: bytes, title: str | None) -> None:
    """Replace the dataset style ``workspace:name`` with an SLD document, for those who may
    restyle the dataset (access.EDIT_STYLE); a style the viewer cannot see is NotFound."""
    style = datasets.style_named(conn, workspace, name)
    row = resources.get_visible(conn, viewer, style["resource_id"]) if style is not None else None
    if row is None:
        raise NotFound(message=f"No such style: {workspace}:{name}")
    if not access.may(conn, viewer, row, access.EDIT_STYLE):
        raise Forbidden()
    datasets.set_default_style(conn, row["id"], name=name, workspace=workspace, title=title or style["sld_title"],
                               sld=sld, generated=False)


def apply_iso_metadata(conn: Connection, viewer: Viewer, rid: int, fields: dict[str, Any], xml: bytes) -> None:
    """Take a dataset's fields from an uploaded ISO document (kept as sent), for those who may
    change the dataset."""
    row = resources.get_visible(conn, viewer, rid, ("dataset",))
    if row is None or datasets.detail(conn, row["id"]) is None:
        raise NotFound(message=f"Dataset with ID {rid} is not available")
    if not access.may(conn, viewer, row, access.CHANGE):
        raise Forbidden()
    with history.recorded(conn, history.By(viewer.id, history.ISO), row["id"]):
        metadata.apply_iso(conn, row["id"], fields, xml)
