"""The dataset representation on /api/v2/datasets: the resource fields plus GeoNode's dataset
fields (name, workspace, store, styles, attribute_set...).

Lists leave out attribute_set and the three OGC addresses, as GeoNode's do. Datasets made up
by `catalogue seed` have no data: their names come from the alternate, and they have no style.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import msgspec

from catalogue_app.reads.links import joined
from catalogue_app.reads.resources import Resource
from catalogue_app.rules import Viewer
from catalogue_app.services import access
from catalogue_app.services.errors import NotFound, refusal_for
from catalogue_app.store import Connection, Row, datasets, remote_layers, resources

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

STATISTICS = ("count", "min", "max", "average", "median", "stddev", "sum", "unique_values")
PTYPE = "gxp_wmscsource"
GEOMETRY_TYPES = ("gml:",)


class Attribute(msgspec.Struct):
    pk: int
    attribute: str
    description: str | None
    attribute_label: str | None
    attribute_type: str
    visible: bool
    display_order: int
    featureinfo_type: str
    count: str
    min: str
    max: str
    average: str
    median: str
    stddev: str
    sum: str
    unique_values: str
    last_stats_updated: str | None


class Style(msgspec.Struct):
    pk: int
    name: str
    workspace: str
    sld_title: str | None
    sld_url: str


class DatasetItem(Resource, kw_only=True):
    """A dataset in a list."""

    name: str
    workspace: str
    store: str
    charset: str
    is_mosaic: bool
    has_time: bool
    has_elevation: bool
    time_regex: str | None
    elevation_regex: str | None
    ptype: str
    featureinfo_custom_template: str | None
    default_style: Style | None
    styles: list[Style]


class Dataset(DatasetItem, kw_only=True):
    """A dataset on its own (detail)."""

    ows_url: str
    capabilities_url: str
    dataset_ows_url: str
    attribute_set: list[Attribute]


class AttributeSet(msgspec.Struct):
    attributes: list[Attribute]


class Download(msgspec.Struct):
    """What a dataset download sends: the address of a remote dataset's download (``url``),
    or the folder of a local one's files and their names."""

    url: str | None = None
    folder: str = ""
    names: list[str] = []


ITEM_FIELDS = set(DatasetItem.__struct_fields__)
FIELDS = set(Dataset.__struct_fields__)


def attribute(row: Row) -> Attribute:
    return Attribute(pk=row["id"], attribute=row["attribute"], description=row["description"],
                     attribute_label=row["attribute_label"], attribute_type=row["attribute_type"],
                     visible=bool(row["visible"]), display_order=row["display_order"], featureinfo_type="type_property",
                     last_stats_updated=None, **dict.fromkeys(STATISTICS, "NA"))  # statistics are not computed


def sld_url(base: str, workspace: str, name: str) -> str:
    """Where a style's SLD is read and written (GeoServer's REST address, which QGIS rewrites to /gs/)."""
    return f"{base}/geoserver/rest/workspaces/{workspace}/styles/{name}.sld"


def featureinfo_template(attributes: list[Row]) -> str | None:
    """A grid of the visible fields, with MapStore's ${properties.name} placeholders."""
    shown = [a for a in attributes if a["visible"] and not a["attribute_type"].startswith(GEOMETRY_TYPES)]
    if not shown:
        return None
    rows = "".join(
        f'<div class="row"><div class="col-xs-6" style="font-weight: bold;">'
        f'{html.escape(a["attribute_label"] or a["attribute"])}:</div>'
        f'<div class="col-xs-6">${{properties[\'{a["attribute"]}\']}}</div></div>' for a in shown)
    return f'<div style="overflow-x: hidden">{rows}</div>'


def extend(conn: Connection, items: list[Resource], base: str, detail: bool) -> list[DatasetItem]:
    """The dataset fields added to rendered resources (all of them datasets)."""
    ids = [int(i.pk) for i in items]
    rows = datasets.details(conn, ids)
    styles = datasets.styles_of(conn, ids)
    needs_attributes = detail or any(r["use_featureinfo_custom_template"] == 0 for r in rows.values())
    attributes = datasets.attributes_of(conn, ids) if needs_attributes else {i: [] for i in ids}
    remotes = remote_layers.of_many(conn, ids) if detail else {}
    out: list[DatasetItem] = []
    for item in items:
        rid = int(item.pk)
        row = rows.get(rid)
        workspace, _, name = (item.alternate or "").rpartition(":")
        own = [Style(s["id"], s["name"], s["workspace"], s["sld_title"], sld_url(base, s["workspace"], s["name"]))
               for s in styles[rid]]
        default = next((s for s in own if row is not None and s.pk == row["default_style_id"]), None)
        if row is not None and row["use_featureinfo_custom_template"] and row["featureinfo_custom_template"]:
            template = row["featureinfo_custom_template"]
        else:
            template = featureinfo_template(attributes[rid]) if item.subtype != "raster" else None
        fields = msgspec.structs.asdict(item)
        # a copy needs the data, which made-up datasets lack and remote ones keep on their remote
        fields["is_copyable"] = row is not None and item.sourcetype != "REMOTE"
        common = dict(
            name=row["name"] if row else name, workspace=row["workspace"] if row else workspace,
            store=row["store"] if row else "", charset=row["charset"] if row else "UTF-8", is_mosaic=False,
            has_time=bool(row["has_time"]) if row else False, has_elevation=False, time_regex=None,
            elevation_regex=None, ptype=PTYPE, featureinfo_custom_template=template, default_style=default, styles=own)
        remote = remotes.get(rid)
        if detail and remote is not None:  # its services are the remote's
            out.append(Dataset(
                **fields, **common, ows_url=remote["service_url"],
                capabilities_url=joined(remote["service_url"], "service=WMS&request=GetCapabilities"),
                dataset_ows_url=remote["service_url"], attribute_set=[attribute(a) for a in attributes[rid]]))
        elif detail:
            ws = common["workspace"] or datasets.WORKSPACE
            out.append(Dataset(
                **fields, **common, ows_url=f"{base}/geoserver/ows",
                capabilities_url=(f"{base}/geoserver/{ws}/{common['name']}/ows?service=wms&version=1.3.0"
                                  "&request=GetCapabilities"),
                dataset_ows_url=f"{base}/geoserver/{ws}/ows",
                attribute_set=[attribute(a) for a in attributes[rid]]))
        else:
            out.append(DatasetItem(**fields, **common))
    return out


def attribute_set(conn: Connection, viewer: Viewer, rid: int) -> AttributeSet:
    """The attributes of a dataset the viewer sees (NotFound otherwise)."""
    row = resources.get_visible(conn, viewer, rid, ("dataset",))
    if row is None:
        raise NotFound("Dataset")
    return AttributeSet([attribute(r) for r in datasets.attributes(conn, row["id"])])


def download(conn: Connection, viewer: Viewer, caller: Caller, alternate: str) -> Download:
    """What the download of the dataset named ``alternate`` sends: NotFound when the viewer
    cannot see it or it has no data here, 401/403 when they may not download it."""
    rid = datasets.by_alternate(conn, alternate)
    row = resources.get_visible(conn, viewer, rid, ("dataset",)) if rid else None
    if row is None:
        raise NotFound("Dataset")
    if not access.may(conn, viewer, row, access.DOWNLOAD):
        raise refusal_for(caller)
    remote = remote_layers.get(conn, row["id"])
    if remote is not None:  # its data stay on its remote service
        if remote["download_url"]:
            return Download(url=remote["download_url"])
        raise NotFound(message="The data of this dataset stay on its remote service, which gives no download: "
                       f"read it there ({remote['service_url']}, layer {remote['layer_name']}).")
    found = datasets.detail(conn, row["id"])
    if found is None:
        raise NotFound(message="This dataset has no data to download.")
    return Download(folder=found["folder"], names=datasets.file_names(conn, row["id"]))
