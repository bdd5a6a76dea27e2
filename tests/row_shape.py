"""What a resource row must look like for the clients that read it: the QGIS GeoNode plugin and
geonodectl (reference/client-expectations.md). Used by the row-shape tests."""

from __future__ import annotations

import re
import uuid

Z_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")
RESOURCE_TYPES = {"dataset", "document", "map", "service", "geostory", "dashboard"}


def _z_time(value, key: str, nullable: bool = True) -> None:
    if value is None and nullable:
        return
    assert isinstance(value, str) and Z_TIME.match(value), f"{key}: {value!r} is not a UTC time ending in Z"


def _polygon(value, key: str) -> None:
    assert isinstance(value, dict) and value["type"] == "Polygon", f"{key}: {value!r}"
    ring = value["coordinates"][0]
    assert len(ring) >= 4 and ring[0] == ring[-1], f"{key}: ring not closed"
    for position in ring:
        assert len(position) == 2 and all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in position), \
            f"{key}: positions must be two numbers, got {position!r}"


def check_row(row: dict, base_url: str) -> None:
    """Every key QGIS or geonodectl reads from a resource row, with the JSON type they expect."""
    pk = row["pk"]
    assert isinstance(pk, str) and pk.isdigit(), f"pk {pk!r}"  # GeoNode renders it as a string; QGIS int()s it
    uuid.UUID(row["uuid"])
    assert row["resource_type"] in RESOURCE_TYPES
    # QGIS indexes these directly: a missing key breaks the whole result page
    for key in ("thumbnail_url", "link", "detail_url", "bbox_polygon", "srid", "date_type"):
        assert key in row, key
    assert row["thumbnail_url"] is None or isinstance(row["thumbnail_url"], str)
    # the detail URL of the endpoint that listed it (tests/api/test_client_facts.py checks which)
    assert re.fullmatch(rf"{re.escape(base_url)}/api/v2/(resources|datasets|documents|maps|geoapps)/{pk}", row["link"])
    assert isinstance(row["detail_url"], str) and row["detail_url"].startswith(base_url)
    assert isinstance(row["embed_url"], str)
    assert re.fullmatch(r"EPSG:\d+", row["srid"]), row["srid"]
    assert isinstance(row["date_type"], str) and row["date_type"]
    if row["date_type"] == "publication":  # QGIS then parses `date`
        _z_time(row["date"], "date", nullable=False)
    else:
        _z_time(row["date"], "date")
    for key in ("bbox_polygon", "ll_bbox_polygon"):
        if row[key] is not None:
            _polygon(row[key], key)
    if row["resource_type"] == "dataset":  # QGIS reads the extent of every dataset row
        _polygon(row["bbox_polygon"], "bbox_polygon")
    # read with defaults by QGIS, shown by geonodectl
    for key in ("title", "abstract", "raw_abstract", "raw_constraints_other", "language", "state"):
        assert isinstance(row[key], str), key
    for key in ("alternate", "subtype"):
        assert row[key] is None or isinstance(row[key], str), key
    if row["resource_type"] == "dataset":
        assert isinstance(row["alternate"], str) and isinstance(row["subtype"], str)
    assert isinstance(row["links"], list)
    for link in row["links"]:
        assert isinstance(link["link_type"], str) and isinstance(link["url"], str)
    assert isinstance(row["keywords"], list)
    for keyword in row["keywords"]:
        assert isinstance(keyword["name"], str) and isinstance(keyword["slug"], str)
    for key in ("category", "license"):
        assert row[key] is None or isinstance(row[key]["identifier"], str), key
    assert isinstance(row["perms"], list) and all(isinstance(p, str) for p in row["perms"])
    _z_time(row["temporal_extent_start"], "temporal_extent_start")
    _z_time(row["temporal_extent_end"], "temporal_extent_end")
    _z_time(row["created"], "created", nullable=False)
    _z_time(row["last_updated"], "last_updated", nullable=False)
    owner = row["owner"]
    assert isinstance(owner, dict) and isinstance(owner["username"], str) and owner["username"]
    assert isinstance(owner["pk"], int) and not isinstance(owner["pk"], bool)
    assert isinstance(row["metadata_author"], list)
    for person in row["metadata_author"]:
        assert isinstance(person["username"], str)
    for key in ("is_approved", "is_published", "featured", "advertised", "favorite", "metadata_only"):
        assert isinstance(row[key], bool), key
    extent = row["extent"]  # geonodectl `maps create` reads extent.srid and extent.coords[4]
    assert re.fullmatch(r"EPSG:\d+", extent["srid"]) and len(extent["coords"]) == 4
    assert all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in extent["coords"])
    for key in ("popular_count", "share_count", "rating", "polymorphic_ctype_id"):
        assert isinstance(row[key], str) and row[key].isdigit(), key
    assert row["download_url"] is None or isinstance(row["download_url"], str)
    assert isinstance(row["regions"], list) and all(isinstance(g["name"], str) for g in row["regions"])
