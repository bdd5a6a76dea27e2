"""Checks of an export request (``POST /api/v2/packages/exports``, ``GET /api/v2/packages/estimate``,
``catalogue package export``): what the package is cut by, turned into the resource list's own
query, and the package a "since" export follows, which must be known here."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalogue_app.geo import package_data
from catalogue_app.services.errors import Invalid
from catalogue_app.store import Connection, package_exports
from catalogue_app.store.resources import RESOURCE_TYPES, ResourceQuery

MAX_IDS = 10_000
MAX_TERMS = 100
MAX_TEXT = 1000
MAX_QUERY = 8000
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@dataclass
class Cut:
    """What a package is cut by (the manifest's ``cut``), and the package it follows."""

    q: str | None = None
    types: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    bbox: tuple[float, float, float, float] | None = None
    ids: list[int] = field(default_factory=list)
    clip: bool = False
    query: str | None = None
    since: str | None = None

    def manifest(self) -> dict[str, Any]:
        return {"q": self.q, "types": self.types, "keywords": self.keywords,
                "bbox": list(self.bbox) if self.bbox else None, "ids": self.ids, "clip": self.clip, "query": self.query}

    def as_params(self) -> dict[str, Any]:
        """As a job's input parameters (``check_cut`` reads them back)."""
        return {**self.manifest(), "since": self.since}

    @property
    def searches(self) -> bool:
        return bool(self.q or self.types or self.keywords or self.bbox or self.ids or self.query)


def _strings(value: Any, name: str, most: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid(f"{name} must be a list of strings.")
    if len(value) > most:
        raise Invalid(f"{name} takes at most {most} values.")
    if any(len(v) > MAX_TEXT or "\x00" in v for v in value):
        raise Invalid(f"A value of {name} is too long or holds a NUL character.")
    return [v.strip() for v in value if v.strip()]


def check_cut(body: dict[str, Any]) -> Cut:
    """The cut asked for, checked (Invalid naming the field that is wrong)."""
    cut = Cut()
    q = body.get("q")
    if q is not None:
        if not isinstance(q, str) or len(q) > MAX_TEXT or "\x00" in q:
            raise Invalid(f"q must be a text of at most {MAX_TEXT} characters.")
        cut.q = q.strip() or None
    cut.types = _strings(body.get("types"), "types", 20)
    bad = [t for t in cut.types if t not in RESOURCE_TYPES]
    if bad:
        raise Invalid(f"Unknown resource type {bad[0]!r}: types takes {', '.join(RESOURCE_TYPES)}.")
    cut.keywords = _strings(body.get("keywords"), "keywords", MAX_TERMS)
    bbox = body.get("bbox")
    if bbox is not None and bbox != "":
        if isinstance(bbox, str):
            bbox = bbox.split(",")
        try:
            cut.bbox = package_data.check_bbox(bbox)
        except ValueError as exc:
            raise Invalid(str(exc)) from None
    ids = body.get("ids")
    if ids is not None and ids != "":
        if isinstance(ids, str):
            ids = [v.strip() for v in ids.split(",") if v.strip()]
        if not isinstance(ids, list) or len(ids) > MAX_IDS:
            raise Invalid(f"ids must be a list of at most {MAX_IDS} resource ids.")
        try:
            cut.ids = [int(v) for v in ids if not isinstance(v, bool)]
        except (TypeError, ValueError):
            raise Invalid("ids must be whole numbers (resource ids).") from None
        if len(cut.ids) != len(ids) or any(not 0 < v < 2**63 for v in cut.ids):
            raise Invalid("ids must be positive whole numbers (resource ids).")
    clip = body.get("clip", False)
    if isinstance(clip, str):
        clip = clip.strip().lower() in ("1", "true", "yes", "on")
    if not isinstance(clip, bool):
        raise Invalid("clip must be true or false.")
    if clip and cut.bbox is None:
        raise Invalid("clip needs a bbox: the area to clip the data to.")
    cut.clip = clip
    query = body.get("query")
    if query is not None and query != "":
        if not isinstance(query, str) or len(query) > MAX_QUERY or "\x00" in query:
            raise Invalid(f"query must be a list query string of at most {MAX_QUERY} characters.")
        cut.query = query
    since = body.get("since")
    if since is not None and since != "":
        if not isinstance(since, str) or not UUID.match(since.strip()):
            raise Invalid("since must be the id of a package (a uuid) exported or imported here.")
        cut.since = since.strip().lower()
    return cut


def list_params(cut: Cut) -> list[tuple[str, str]]:
    """The cut as the parameters of ``GET /api/v2/resources`` (as the web UI's search sends them)."""
    params: list[tuple[str, str]] = []
    if cut.q:
        params += [("search", cut.q), ("search_fields", "title"), ("search_fields", "abstract")]
    params += [("filter{resource_type.in}", t) for t in cut.types]
    params += [("filter{keywords.name.in}", k) for k in cut.keywords]
    if cut.bbox:
        params.append(("extent", ",".join(repr(v) for v in cut.bbox)))
    params += [("filter{pk.in}", str(i)) for i in cut.ids]
    if cut.query:
        text = cut.query.strip()
        if "?" in text:
            text = text.split("?", 1)[1]
        params += [(k, v) for k, v in urllib.parse.parse_qsl(text, keep_blank_values=True)
                   if k not in ("page", "page_size")]
    return params


def resource_query(cut: Cut, user_id: int | None) -> tuple[ResourceQuery | None, list[int], bool]:
    """The cut as the resource list's own parsed query (None: no search at all), with the
    thesaurus keywords asked for; Invalid with the list's own message for a bad query."""
    if not cut.searches:
        return None, [], False
    from catalogue_app.api.errors import ApiError
    from catalogue_app.api.resources.params import resource_query as parse

    try:
        return parse(list_params(cut), user_id, ())
    except ApiError as exc:
        raise Invalid(exc.message) from None




def export_request(conn: Connection, user_id: int, body: dict[str, Any]) -> Cut:
    """The cut asked for, checked in full before a job is stored: its fields, its list query, and
    the base of a since export (Invalid: "unknown package" when this catalogue never exported or
    imported it)."""
    cut = check_cut(body)
    resource_query(cut, user_id)
    if cut.since is not None and package_exports.get(conn, cut.since) is None:
        raise Invalid(f"Unknown package {cut.since!r}: this catalogue never exported or imported it, so there "
                      "is nothing to compare with. Export a whole package instead.")
    return cut


FOLDER = "packages"  # the exported packages, in the data folder


def package_file(data_dir: Path, name: str) -> Path | None:
    """The exported package file ``name`` under packages/ (None when it is gone or the name is
    not a plain file name)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    path = data_dir / FOLDER / name
    return path if path.is_file() else None
