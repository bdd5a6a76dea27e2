"""Writes through GeoNode 5's metadata editor API: a JSON schema instance of a resource's
metadata, checked field by field, then applied as one resource change.

Every field of the instance is checked before anything is written; ``MetadataRefused`` carries
each refused field's message, keyed as the JSON schema nests them (``{"contacts":
{"pointOfContact": {"__errors": [...]}}}``), and nothing is stored. A field left out is left as
it is; a required field cannot be emptied (unless it is empty already); unknown fields are
refused.
"""

from __future__ import annotations

import re
from typing import Any

from catalogue_app import metadata_codes, rules
from catalogue_app.services import access, history, resource_changes
from catalogue_app.services import resources as resources_service
from catalogue_app.services.errors import Forbidden, Invalid
from catalogue_app.services.values import parse_datetime
from catalogue_app.store import Connection, package_conflicts, resource_extras, resource_writes, resources
from catalogue_app.store.resources import Viewer

MESSAGE = "Some errors were found while updating the resource"
REQUIRED = "This field is required."

# the instance's plain text fields, with their longest value (as GeoNode's schema says; the
# others get a generous bound so that no value is too big to store)
TEXTS = {"title": 255, "abstract": 2000, "attribution": 2048, "data_quality_statement": 2000,
         "constraints_other": 20000, "edition": 255, "doi": 255, "purpose": 500, "supplemental_information": 2000}
CODES = ("date_type", "language", "restriction_code_type", "maintenance_frequency", "spatial_representation_type")
DATES = ("date", "temporal_extent_start", "temporal_extent_end")
FIELDS = ("uuid", *TEXTS, *CODES, *DATES, "category", "license", "tkeywords", "hkeywords", "regions",
          "linkedresources", "contacts")
# required fields that a write may not empty (the abstract is marked required, as GeoNode marks
# it, but an empty one is taken: GeoNode's store takes it, and clients send back what they read)
REQUIRED_FIELDS = ("title", "date", "date_type", "category", "language", "license")
# a DOI: 10.<registrant>/<suffix>, alone or as doi:… or https://doi.org/…
DOI = re.compile(r"(?:doi:|https?://(?:dx\.)?doi\.org/)?10\.\d{4,9}/\S{1,200}", re.IGNORECASE)
ROLE_FIELDS = {key: api for api, key, _iso, _title in metadata_codes.ROLES}
MAX_ITEMS = 1000


class MetadataRefused(Invalid):
    """Refused metadata: ``errors`` holds each refused field's messages, nested as the schema."""

    def __init__(self, errors: dict[str, Any]):
        super().__init__(MESSAGE, extra={"message": MESSAGE, "extraErrors": errors})
        self.errors = errors


class _Errors:
    def __init__(self) -> None:
        self.tree: dict[str, Any] = {}

    def add(self, message: str, *where: str) -> None:
        node = self.tree
        for key in where:
            node = node.setdefault(key, {})
        node.setdefault("__errors", []).append(message)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {} or (
        isinstance(value, dict) and value.get("id") in (None, ""))


def _id_of(value: Any) -> Any:
    """The ``id`` of an {"id", "label"} choice (or the value itself)."""
    return value.get("id") if isinstance(value, dict) else value


def _int_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) < 19:
        return int(value.strip())
    return None


def _date(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise Invalid("Expected a date and time (YYYY-MM-DDThh:mm[:ss][Z|±hh:mm]).")
    try:
        return parse_datetime(value)
    except (OverflowError, ValueError):
        raise Invalid(f"'{value[:64]}' is not a valid date.") from None


def _list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"Expected a list of {what}.")
    if len(value) > MAX_ITEMS:
        raise Invalid(f"At most {MAX_ITEMS} {what}.")
    return value


def _contact_item(item: Any) -> Any:
    """An item of a contact role as a resource write takes it: a user pk, or a named contact."""
    if not isinstance(item, dict):
        raise Invalid("Each contact is an object: {\"id\": a user's id} or {\"name\", \"organization\", \"email\"}.")
    if item.get("id") not in (None, ""):
        pk = _int_id(item["id"])
        if pk is None:
            raise Invalid(f"User with id {str(item['id'])[:40]} does not exist.")
        return pk
    return {k: item.get(k) for k in resource_changes.NAMED_KEYS}


def translate(conn: Connection, row: Any, instance: dict[str, Any], errors: _Errors) -> tuple[dict[str, Any], list[int] | None]:
    """The resource change an instance asks for, and the linked resources it names (None: left
    as they are); what is wrong goes into ``errors`` under the instance's own names."""
    change: dict[str, Any] = {}
    linked: list[int] | None = None
    for name, value in instance.items():
        try:
            if name not in FIELDS:
                raise Invalid("This field is not stored by this catalogue.")
            if name == "uuid":
                if value not in (None, row["uuid"]):
                    raise Invalid("The uuid of a resource cannot be changed.")
            elif name in TEXTS:
                if value is not None and not isinstance(value, str):
                    raise Invalid("Expected a text.")
                if value is not None and len(value) > TEXTS[name]:
                    raise Invalid(f"Ensure this field has no more than {TEXTS[name]} characters.")
                if name == "doi" and value and not DOI.fullmatch(value.strip()):
                    raise Invalid("Enter a valid DOI, such as 10.1234/abcd (or doi:10.1234/abcd,"
                                  " https://doi.org/10.1234/abcd).")
                change[name] = value.strip() if name == "doi" and value else value
            elif name in CODES:
                if value is not None and (not isinstance(value, str) or value not in metadata_codes.CODES[name]):
                    shown = value[:40] if isinstance(value, str) else value
                    raise Invalid(f"'{shown}' is not one of the permitted values." if isinstance(value, str)
                                  else "Expected one of the permitted values.")
                change[name] = value
            elif name in DATES:
                change[name] = None if value is None else _date(value)
            elif name in ("category", "license"):
                ident = _id_of(value)
                if ident is not None and not isinstance(ident, (str, int)) or isinstance(ident, bool):
                    raise Invalid("Expected {\"id\": an identifier}.")
                if ident in (None, ""):
                    change[name] = None
                else:
                    table = "categories" if name == "category" else "licenses"
                    key = "identifier"
                    found = resource_writes.lookup_id(conn, table, key, str(ident))
                    if found is None and name == "license" and _int_id(ident) is not None:
                        found = resource_writes.lookup_id(conn, table, "id", _int_id(ident))
                    if found is None:
                        raise Invalid(f"'{str(ident)[:60]}' is not a known {name}.")
                    change[name] = found
            elif name == "hkeywords":
                words = _list(value, "keywords")
                if not all(isinstance(w, str) and 0 < len(w.strip()) <= 255 for w in words):
                    raise Invalid("Each keyword is a text of 1 to 255 characters.")
                change["keywords"] = words
            elif name == "tkeywords":
                if value is None:
                    value = {}
                if not isinstance(value, dict):
                    raise Invalid("Expected an object: each thesaurus' identifier and its keywords.")
                ids = []
                for thesaurus, words in value.items():
                    for word in _list(words, "keywords"):
                        about = _id_of(word)
                        found = package_conflicts.tkeyword_id(conn, thesaurus, about) if isinstance(about, str) else None
                        if found is None:
                            errors.add(f"'{str(about)[:80]}' is not a keyword of the thesaurus.", name, str(thesaurus)[:80])
                        else:
                            ids.append(found)
                change["tkeywords"] = ids
            elif name == "regions":
                codes = []
                for item in _list(value, "regions"):
                    code = _id_of(item)
                    if _int_id(code) is not None:
                        code = _int_id(code)
                    if not isinstance(code, (str, int)) or isinstance(code, bool):
                        raise Invalid("Each region is {\"id\": its code, \"label\"}.")
                    codes.append(code)
                change["regions"] = codes
            elif name == "linkedresources":
                linked = []
                for item in _list(value, "resources"):
                    pk = _int_id(_id_of(item))
                    if pk is None or pk == row["id"] or pk >= 2**63:
                        raise Invalid(f"'{str(_id_of(item))[:40]}' is not a resource that may be linked.")
                    linked.append(pk)
            elif name == "contacts":
                _contacts(conn, row, value, change, errors)
        except Invalid as exc:
            errors.add(exc.message, name)
    return change, linked


def _contacts(conn: Connection, row: Any, value: Any, change: dict[str, Any], errors: _Errors) -> None:
    if not isinstance(value, dict):
        raise Invalid("Expected an object of contact roles.")
    for role, people in value.items():
        try:
            if role == "owner":
                pk = _int_id(_id_of(people))
                if _empty(people):
                    raise Invalid("The owner is required.")
                if pk is None or resource_writes.lookup_id(conn, "users", "id", pk) is None:
                    raise Invalid(f"User with id {str(_id_of(people))[:40]} does not exist.")
                if pk != row["owner_id"]:
                    raise Invalid("The owner is changed by a transfer of resources, not here.")
            elif role in ROLE_FIELDS:
                items = [_contact_item(item) for item in _list(people, "contacts")]
                if not items and role in metadata_codes.REQUIRED_ROLES and _has_contacts(conn, row["id"], ROLE_FIELDS[role]):
                    raise Invalid(REQUIRED)
                change[ROLE_FIELDS[role]] = items
            else:
                raise Invalid("This contact role is not known.")
        except Invalid as exc:
            errors.add(exc.message, "contacts", str(role)[:60])


def _has_contacts(conn: Connection, rid: int, role: str) -> bool:
    return bool(resources.contacts_of(conn, rid, role))


def check(conn: Connection, viewer: Viewer, row: Any, change: dict[str, Any], errors: _Errors) -> None:
    """Each field as a resource write checks it, required fields not emptied, and the temporal
    extent in order."""
    for name, value in change.items():
        field = {"keywords": "hkeywords", **{api: "contacts" for api in ROLE_FIELDS.values()}}.get(name, name)
        if field in REQUIRED_FIELDS and _empty(value) and not _empty(row[name if name not in ("category", "license")
                                                                          else f"{name}_id"]):
            errors.add(REQUIRED, field)
            continue
        try:
            resource_changes.clean(conn, {name: value}, viewer, row, row["resource_type"])
        except Invalid as exc:
            message = exc.message.split(": ", 1)[1] if exc.message.startswith(f"{name}: ") else exc.message
            if field == "contacts":
                role = next(k for k, api in ROLE_FIELDS.items() if api == name)
                errors.add(message, "contacts", role)
            else:
                errors.add(message, field)
    start = change.get("temporal_extent_start", row["temporal_extent_start"])
    end = change.get("temporal_extent_end", row["temporal_extent_end"])
    if start and end and end < start and not errors.tree.get("temporal_extent_end") and \
            not errors.tree.get("temporal_extent_start"):
        errors.add("The end of the temporal extent is before its start.", "temporal_extent_end")


def change(conn: Connection, viewer: Viewer, rid: int, instance: Any) -> None:
    """Apply a metadata instance (PUT or PATCH) to the resource, if the viewer may change its
    metadata: every field checked first (MetadataRefused naming each refused one), then all
    applied in this transaction."""
    row = resources_service.visible(conn, viewer, rid)
    if not rules.may_change(access.resource_actions(conn, viewer, row), ["title"]):
        raise Forbidden()
    if not isinstance(instance, dict):
        raise MetadataRefused({"__errors": ["Expected a JSON object of metadata fields."]})
    errors = _Errors()
    body, linked = translate(conn, row, instance, errors)
    check(conn, viewer, row, body, errors)
    if linked is not None:
        for pk in linked:
            if resources.get_visible(conn, viewer, pk) is None:
                errors.add(f"Resource {pk} does not exist.", "linkedresources")
    if errors.tree:
        raise MetadataRefused(errors.tree)
    with history.recorded(conn, history.By(viewer.id), rid):
        resource_changes.apply(conn, rid, resource_changes.clean(conn, body, viewer, row, row["resource_type"]))
        if linked is not None:
            resource_extras.set_links(conn, rid, linked)
