"""Checking and applying resource writes: which fields, which values, who may.

``ResourceFields`` is what a resource write takes: the body the API declares for resources,
documents, maps and geoapps, and the first check of ``clean``, which decodes every body into it
(400 naming the field of a wrong type). ``clean`` then turns the fields into column values and
relation lists, or answers 400 naming the field (an unknown category, a group the caller may not
use); it runs inside the write transaction so lookups and the write see the same data.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import msgspec
from msgspec import UNSET, UnsetType

from catalogue_app import rules
from catalogue_app import json_text
from catalogue_app.services import access
from catalogue_app.services.bodies import typed
from catalogue_app.services.errors import Invalid
from catalogue_app.services.values import parse_datetime
from catalogue_app.store import Connection, Row, groups, origins, resource_writes
from catalogue_app.store.resources import Viewer

TEXT = ("title", "abstract", "attribution", "doi", "edition", "purpose", "maintenance_frequency",
        "constraints_other", "supplemental_information", "data_quality_statement")
NOT_NULL_TEXT = ("title", "abstract", "language", "date_type")
DATES = ("date", "temporal_extent_start", "temporal_extent_end")
FLAGS = ("metadata_only", "metadata_uploaded_preserve")
ROLE_FLAGS = ("featured", "is_published", "is_approved", "advertised")
CONTACT_ROLES = ("poc", "metadata_author", "processor", "publisher", "custodian", "distributor",
                 "resource_user", "resource_provider", "originator", "principal_investigator")
EXTENT_TYPES = ("document", "geostory", "dashboard")

# a relation: a pk, an object used as an exact lookup ({"identifier": "biota"}), or that object
# as a JSON string; null or "" clears it
Relation = int | str | dict[str, Any] | None
# users in a contact role: pks, usernames or objects with either ({"pk", "username"})
Contacts = list[int | str | dict[str, Any]] | dict[str, Any] | None


class ResourceFields(msgspec.Struct, kw_only=True):
    """The writable fields of a resource (all optional on update; ``title`` needed on create).
    Fields not named here are ignored, as GeoNode ignores read-only ones sent back."""

    title: str | None | UnsetType = UNSET
    abstract: str | None | UnsetType = UNSET
    resource_type: str | None | UnsetType = UNSET
    subtype: str | None | UnsetType = UNSET
    language: str | None | UnsetType = UNSET
    date_type: str | None | UnsetType = UNSET
    date: str | None | UnsetType = UNSET
    temporal_extent_start: str | None | UnsetType = UNSET
    temporal_extent_end: str | None | UnsetType = UNSET
    attribution: str | None | UnsetType = UNSET
    doi: str | None | UnsetType = UNSET
    edition: str | None | UnsetType = UNSET
    purpose: str | None | UnsetType = UNSET
    maintenance_frequency: str | None | UnsetType = UNSET
    constraints_other: str | None | UnsetType = UNSET
    supplemental_information: str | None | UnsetType = UNSET
    data_quality_statement: str | None | UnsetType = UNSET
    category: Relation | UnsetType = UNSET
    license: Relation | UnsetType = UNSET
    group: Relation | UnsetType = UNSET
    restriction_code_type: str | dict[str, Any] | None | UnsetType = UNSET
    spatial_representation_type: str | dict[str, Any] | None | UnsetType = UNSET
    keywords: list[str | dict[str, Any]] | str | None | UnsetType = UNSET  # names, {"name"} or "a,b"
    tkeywords: list[int | dict[str, Any]] | None | UnsetType = UNSET  # thesaurus keyword ids or {"id"}
    regions: list[int | str | dict[str, Any]] | None | UnsetType = UNSET  # ids, codes, names or objects
    poc: Contacts | UnsetType = UNSET
    metadata_author: Contacts | UnsetType = UNSET
    processor: Contacts | UnsetType = UNSET
    publisher: Contacts | UnsetType = UNSET
    custodian: Contacts | UnsetType = UNSET
    distributor: Contacts | UnsetType = UNSET
    resource_user: Contacts | UnsetType = UNSET
    resource_provider: Contacts | UnsetType = UNSET
    originator: Contacts | UnsetType = UNSET
    principal_investigator: Contacts | UnsetType = UNSET
    featured: bool | None | UnsetType = UNSET
    is_published: bool | None | UnsetType = UNSET
    is_approved: bool | None | UnsetType = UNSET
    advertised: bool | None | UnsetType = UNSET
    metadata_only: bool | None | UnsetType = UNSET
    metadata_uploaded_preserve: bool | None | UnsetType = UNSET
    # {"coords": [minx, miny, maxx, maxy], "srid": "EPSG:n"}: taken for documents and geoapps
    extent: dict[str, Any] | None | UnsetType = UNSET
    blob: Any = UNSET  # a map's or geoapp's JSON document (also as ``data``)
    data: Any = UNSET
    # beyond GeoNode's, write-only (shown in ``origin``): the http(s) address and title of the
    # original in another catalogue that this resource is a copy of; null forgets them
    origin_url: str | None | UnsetType = UNSET
    origin_title: str | None | UnsetType = UNSET


def set_fields(fields: msgspec.Struct) -> dict[str, Any]:
    """The fields a body set, by name (those left UNSET left out), values as decoded."""
    return {name: value for name in fields.__struct_fields__
            if (value := getattr(fields, name)) is not UNSET}


@dataclass
class Cleaned:
    values: dict[str, Any] = field(default_factory=dict)
    keywords: list[str] | None = None
    tkeywords: list[int] | None = None
    contacts: dict[str, list[int]] = field(default_factory=dict)
    contact_names: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # contacts that are no users
    regions_from_extent: bool = False
    regions: list[int] | None = None
    origin: dict[str, Any] | None = None  # {"url", "title"} of the original elsewhere (url None: forgotten)


def _error(name: str, value: Any, model: str) -> Exception:
    return Invalid(f"Invalid value for '{name}': {model} object with ID={value} not found")


def _relation(conn: Connection, name: str, value: Any, table: str, key: str, model: str) -> int | None:
    """A pk, an object used as an exact lookup, or that object as a JSON string -> row id."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                value = json_text.loads(text)
            except ValueError:
                raise _error(name, value, model) from None
        elif text.isdecimal():
            value = int(text)
        else:
            value = {key: text}
    if isinstance(value, bool):
        raise _error(name, value, model)
    if isinstance(value, int):
        found = resource_writes.lookup_id(conn, table, "id", value)
    elif isinstance(value, dict):
        if "pk" in value or "id" in value:
            found = resource_writes.lookup_id(conn, table, "id", value.get("pk", value.get("id")))
        elif key in value:
            found = resource_writes.lookup_id(conn, table, key, value[key])
        else:
            raise _error(name, value, model)
    else:
        raise _error(name, value, model)
    if found is None:
        raise _error(name, value if not isinstance(value, dict) else next(iter(value.values()), value), model)
    return found


def _identifier(name: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, dict) and isinstance(value.get("identifier"), str):
        return value["identifier"]
    if isinstance(value, str):
        return value
    raise Invalid(f"Invalid value for '{name}': expected an identifier.")


EMAIL = re.compile(r"[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+\.[^@\s<>()\[\],;:\".]+")
NAMED_KEYS = ("name", "organization", "email")


def named_contact(role: str, item: dict[str, Any]) -> dict[str, str]:
    """A contact that is no user: {"name", "organization", "email"} (a name or an organisation
    needed; an email, if given, that looks like one)."""
    out = {}
    for key in NAMED_KEYS:
        value = item.get(key)
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise Invalid(f"Invalid value for '{role}': a contact's {key} is a text.")
        value = value.strip()
        if len(value) > 255:
            raise Invalid(f"Invalid value for '{role}': a contact's {key} is at most 255 characters.")
        out[key] = value
    if not (out["name"] or out["organization"]):
        raise Invalid(f"Invalid value for '{role}': a contact that is no user needs a name or an organization.")
    if out["email"] and not EMAIL.fullmatch(out["email"]):
        raise Invalid(f"Invalid value for '{role}': {out['email']!r} is not a valid email address.")
    return out


def _contacts(conn: Connection, role: str, value: Any) -> tuple[list[int], list[dict[str, str]]]:
    """The users of a contact role (pks, usernames or objects with either) and its contacts that
    are no users (objects with a name or an organization, and an email, but no pk nor username)."""
    if value is None:
        return [], []
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise Invalid(f"{role}: expected a list of users.")
    ids, names = [], []
    for item in value:
        pk = item.get("pk", item.get("id")) if isinstance(item, dict) else item
        name = item.get("username") if isinstance(item, dict) else None
        if pk is not None:
            found = resource_writes.lookup_id(conn, "users", "id", pk) if isinstance(pk, int) and not isinstance(pk, bool) else None
            if found is None:
                raise Invalid(f"Invalid value for '{role}': user {pk} not found")
            if name is not None and resource_writes.lookup_id(conn, "users", "username", name) != found:
                raise Invalid(f"Invalid value for '{role}': pk {pk} and username {name!r} are different users")
        elif isinstance(name, str) or isinstance(item, str):
            found = resource_writes.lookup_id(conn, "users", "username", name or item)
            if found is None:
                raise Invalid(f"Invalid value for '{role}': user {name or item!r} not found")
        elif isinstance(item, dict) and any(item.get(k) is not None for k in NAMED_KEYS):
            names.append(named_contact(role, item))
            continue
        else:
            raise Invalid(f"Invalid value for '{role}': each user needs a pk or a username"
                          " (a contact that is no user: a name or an organization, and an email).")
        ids.append(found)
    return list(dict.fromkeys(ids)), names


def _keywords(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [part for part in value.split(",")]
    if not isinstance(value, list):
        raise Invalid("keywords: expected a list of keywords.")
    names = []
    for item in value:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str):
            raise Invalid("keywords: each keyword needs a name.")
        names.append(name[:255])
    return names


def _regions(conn: Connection, value: Any) -> list[int]:
    """Regions named by id, code ("CHE"), name ("Switzerland") or an object holding one of them."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid("regions: expected a list of regions (ids, codes, names or objects with one of them).")
    ids = []
    for item in value:
        if isinstance(item, dict):
            item = next((item[k] for k in ("pk", "id", "code", "name") if k in item), None)
        found = None
        if isinstance(item, int) and not isinstance(item, bool):
            found = resource_writes.lookup_id(conn, "regions", "id", item)
        elif isinstance(item, str) and item.strip():
            found = (resource_writes.lookup_id(conn, "regions", "code", item.strip())
                     or resource_writes.lookup_id(conn, "regions", "name", item.strip()))
        if found is None:
            raise _error("regions", item, "Region")
        ids.append(found)
    return list(dict.fromkeys(ids))


def _tkeywords(conn: Connection, value: Any) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid("tkeywords: expected a list of thesaurus keyword ids.")
    ids = []
    for item in value:
        pk = item.get("id", item.get("pk")) if isinstance(item, dict) else item
        found = resource_writes.lookup_id(conn, "thesaurus_keywords", "id", pk) if isinstance(pk, int) else None
        if found is None:
            raise _error("tkeywords", pk, "ThesaurusKeyword")
        ids.append(found)
    return ids


def _extent(value: Any) -> dict[str, float]:
    """{"coords": [minx, miny, maxx, maxy], "srid": "EPSG:n"} -> native and WGS84 box columns."""
    from catalogue_app.geo.crs import to_wgs84_bounds

    if not isinstance(value, dict) or "coords" not in value:
        return {}
    coords, srid = value.get("coords"), value.get("srid") or "EPSG:4326"
    if (not isinstance(coords, list) or len(coords) != 4
            or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in coords)):
        raise Invalid("The standard bbox provided is invalid")
    x0, y0, x1, y1 = (float(c) for c in coords)
    if x0 > x1 or y0 > y1:
        raise Invalid("The standard bbox provided is invalid")
    try:
        lx0, ly0, lx1, ly1 = to_wgs84_bounds(str(srid), (x0, y0, x1, y1))
    except ValueError as exc:
        raise Invalid(f"extent: {exc}") from None
    return {"srid": str(srid).upper(), "bbox_x0": x0, "bbox_y0": y0, "bbox_x1": x1, "bbox_y1": y1,
            "ll_x0": lx0, "ll_y0": ly0, "ll_x1": lx1, "ll_y1": ly1}


def clean(conn: Connection, body: dict[str, Any], viewer: Viewer, row: Row | None, resource_type: str) -> Cleaned:
    """Validated values for a create (row None) or an update of ``row``."""
    body = set_fields(typed(body, ResourceFields))
    out = Cleaned()
    v = out.values
    for name, value in body.items():
        if name in TEXT or name in ("language", "date_type"):
            if value is None and name not in NOT_NULL_TEXT:
                v[name] = None
            elif value is not None:
                v[name] = value.lower() if name == "date_type" else value
        elif name in DATES:
            if value is None and name != "date":
                v[name] = None
            elif value is not None:
                v[name] = parse_datetime(value)
        elif name == "category":
            v["category_id"] = _relation(conn, name, value, "categories", "identifier", "TopicCategory")
        elif name == "license":
            v["license_id"] = _relation(conn, name, value, "licenses", "identifier", "License")
        elif name in ("restriction_code_type", "spatial_representation_type"):
            v[name] = _identifier(name, value)
        elif name == "group":
            v["group_id"] = _group(conn, value, viewer)
        elif name == "keywords":
            out.keywords = _keywords(value)
        elif name == "tkeywords":
            out.tkeywords = _tkeywords(conn, value)
        elif name == "regions":
            out.regions = _regions(conn, value)
        elif name in CONTACT_ROLES:
            out.contacts[name], out.contact_names[name] = _contacts(conn, name, value)
        elif name in FLAGS:
            if value is not None:
                v[name] = int(value)
        elif name in ROLE_FLAGS:
            if value is not None and access.may_set_flag(conn, viewer, row, name):
                v[name] = int(value)  # not allowed: ignored, as GeoNode does
        elif name == "extent" and resource_type in EXTENT_TYPES:
            box = _extent(value)
            v.update(box)
            out.regions_from_extent = bool(box)
        elif name in ("blob", "data"):
            v["blob"] = resource_writes.blob(value) if value is not None else None
        elif name == "subtype" and resource_type not in ("dataset", "document"):
            v["subtype"] = value  # a dataset's or document's comes from its data
    out.origin = _origin(conn, body, row)
    if row is None and not (v.get("title") or "").strip():
        raise Invalid("title: This field is required.")
    if "title" in v and not v["title"].strip():
        raise Invalid("title: This field may not be blank.")
    return out


def _origin(conn: Connection, body: dict[str, Any], row: Row | None) -> dict[str, Any] | None:
    """``origin_url`` (and ``origin_title``): the address (and title) of the original in another
    catalogue that this resource is a copy of, as a publisher sends it; null or "" forgets it.
    Write-only (the resource shows it in ``origin``), and refused where the catalogue recorded
    the origin itself (a copy made here, a harvested record)."""
    if "origin_url" not in body:
        if "origin_title" in body:
            raise Invalid("origin_title: send it with origin_url, the address of the original.")
        return None
    url, title = body["origin_url"], body.get("origin_title")
    if url is not None and url != "":
        if not _web_address(url):
            raise Invalid("origin_url: expected the http(s) address of the original, up to 2000 characters.")
        url = url.strip()
    if title is not None and (not isinstance(title, str) or len(title) > 255):
        raise Invalid("origin_title: expected a text of up to 255 characters.")
    if row is not None and origins.recorded_here(origins.get(conn, row["id"])):
        raise Invalid("origin_url: this resource is a copy made here or a harvested record; the catalogue"
                      " records where it came from, and that cannot be changed.")
    return {"url": url or None, "title": (title or "").strip()}


def _web_address(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 2000 or not value.strip().isprintable() or " " in value.strip():
        return False
    try:
        parts = urlsplit(value.strip())
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def _group(conn: Connection, value: Any, viewer: Viewer) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, dict):
        value = value.get("pk", value.get("id", value.get("name")))
    group_id = None
    if isinstance(value, int) and not isinstance(value, bool):
        group_id = resource_writes.lookup_id(conn, "groups", "id", value)
    elif isinstance(value, str):
        group_id = resource_writes.lookup_id(conn, "groups", "id", int(value)) if value.isdecimal() else \
            resource_writes.lookup_id(conn, "groups", "name", value)
    if group_id is None:
        raise _error("group", value, "Group")
    if not groups.has_profile(conn, group_id):
        raise Invalid("The selected group does not have a valid group profile.")
    if not rules.may_put_in_group(viewer, groups.role(conn, group_id, viewer.id)):
        raise Invalid("You do not have permission to use this group.")
    return group_id


def apply(conn: Connection, resource_id: int, cleaned: Cleaned) -> None:
    resource_writes.apply_changes(conn, resource_id, asdict(cleaned))