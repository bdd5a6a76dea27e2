"""What a harvester worker gives: the records a remote offers, and each one harvested.

A worker (one class per harvester type, see registry.py) is made with the harvester's remote
address, its type-specific configuration (a msgspec Struct, ``Config``) and an HTTP client, and
answers three questions: is the remote there (``available``), what does it offer
(``offered``: RemoteItem for each record), and what is one record (``harvest``: Harvested).
Workers never touch the database; harvesting/storing.py writes what they return.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Protocol

import msgspec


class RemoteItem(msgspec.Struct, kw_only=True):
    """A record the remote offers, as listed (cheap to get for thousands of them)."""

    unique_identifier: str          # stable on the remote: a GeoNode uuid, a WMS layer name, a CSW identifier
    title: str = ""
    resource_type: str = "dataset"  # dataset | document (what the record becomes here)
    last_updated: str | None = None  # the remote's last change, ISO 8601, when it says
    url: str | None = None           # where the worker reads the whole record


class DataFiles(msgspec.Struct, kw_only=True, tag="files"):
    """The dataset's data, copied here: files the remote serves, imported as an upload is."""

    urls: list[str]                  # each file (or one zip) to download
    names: list[str]                 # the file name to give each one


class RemoteLayer(msgspec.Struct, kw_only=True, tag="layer"):
    """The dataset's data stay on a remote OGC service and are shown through it."""

    service_url: str
    layer_name: str
    service_type: str = "WMS"
    download_url: str | None = None


class RemoteDocument(msgspec.Struct, kw_only=True, tag="document"):
    """A document whose content is at a remote address."""

    doc_url: str


class DocumentFile(msgspec.Struct, kw_only=True, tag="document_file"):
    """A document's file, copied here."""

    url: str
    name: str


class Link(msgspec.Struct, kw_only=True):
    url: str
    name: str = ""
    mime: str = ""
    link_type: str = "url"
    extension: str = ""


class Harvested(msgspec.Struct, kw_only=True):
    """One record, ready to be stored as a local resource (created, or updated in place)."""

    resource_type: str                         # dataset | document
    uuid: str | None = None                    # the remote's uuid, kept here when it is free
    values: dict[str, Any] = {}                # resource fields by their API names: title, abstract,
                                               # date, date_type, attribution, purpose, edition,
                                               # constraints_other, supplemental_information, language
    keywords: list[str] = []
    category: str | None = None                # a topic category identifier ("boundaries", ...)
    ll_bbox: list[float] | None = None         # [x0, y0, x1, y1] in EPSG:4326
    thumbnail_url: str | None = None           # fetched and kept as the local thumbnail
    links: list[Link] = []                     # the remote's own links for this record
    page_url: str | None = None                # the remote's page of the record, for a person
    data: DataFiles | RemoteLayer | RemoteDocument | DocumentFile | None = None


class HarvestError(Exception):
    """The remote could not be read, or a record could not be harvested: the message says why."""


class Worker(Protocol):
    type_name: ClassVar[str]                   # GeoNode's dotted name of the harvester type
    Config: ClassVar[type[msgspec.Struct]]     # the type-specific configuration

    def available(self) -> bool: ...
    def offered(self) -> Iterator[RemoteItem]: ...
    def harvest(self, item: RemoteItem) -> Harvested: ...
