"""What GeoNode 5's metadata editor API reads beside a resource: the choices its schema offers
(categories, licences, thesauri), the resources one links to, and the choices its autocomplete
addresses answer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from catalogue_app import rules
from catalogue_app.reads import extras
from catalogue_app.store import Connection, metadata, resources, users
from catalogue_app.store.resources import Viewer
from catalogue_app.translations import translated

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller


def choices(conn: Connection) -> dict[str, list[dict[str, Any]]]:
    """The ISO topic categories, the licences and the thesauri, in a stable order."""
    return metadata.choices(conn)


def linked_to(conn: Connection, viewer: Viewer, resource_id: int, base: str) -> list[dict[str, Any]]:
    """The resources this one links to (not those the catalogue linked itself) that the viewer
    sees, as {"id", "label"}."""
    found = extras.linked(conn, viewer, resource_id, base, [("link_type", "linked_to")])
    return [{"id": str(item.pk), "label": item.title} for item in found.get("linked_to", []) if not item.internal]


AUTOCOMPLETE_LIMIT = 50
KINDS = ("categories", "licenses", "regions", "hkeywords", "users", "resources")


def _matching(items: list[tuple[str, str]], text: str) -> list[dict[str, str]]:
    wanted = text.casefold()
    return [{"id": key, "label": label} for key, label in items if wanted in label.casefold()][:AUTOCOMPLETE_LIMIT]


def autocomplete(conn: Connection, caller: Caller, viewer: Viewer, kind: str, text: str, lang: str,
                 thesaurus: str | None = None) -> list[Any]:
    """The choices of a field of the metadata schema whose label holds ``text``, as GeoNode's
    autocomplete answers them ({"id", "label"}; keywords as their names), labels in ``lang``:
    users and resources as far as the caller sees them."""
    if thesaurus is not None:
        rows = metadata.thesaurus_keywords(conn, thesaurus)
        return _matching([(r["about"], (json.loads(r["labels"] or "{}") or {}).get(lang) or r["alt_label"])
                          for r in rows], text)
    if kind == "categories":
        return _matching([(c["identifier"], translated("category", c["identifier"], lang, c["gn_description"]) or "")
                          for c in metadata.choices(conn)["categories"]], text)
    if kind == "licenses":
        return _matching([(c["identifier"], translated("license", c["identifier"], lang, c["name"]) or "")
                          for c in metadata.choices(conn)["licenses"]], text)
    if kind == "regions":
        return _matching([(r["code"], translated("region", r["code"], lang, r["name"]) or "")
                          for r in metadata.region_choices(conn)], text)
    if kind == "hkeywords":
        return metadata.keyword_names(conn, text, AUTOCOMPLETE_LIMIT)
    if kind == "users":
        condition, params = users.visibility(caller.id, rules.sees_every_account(caller))
        out = []
        for r in metadata.user_choices(conn, condition, params, text, AUTOCOMPLETE_LIMIT):
            names = " ".join(n for n in (r["first_name"], r["last_name"]) if n)
            out.append({"id": str(r["id"]), "label": f"{r['username']} ({names})" if names else r["username"]})
        return out
    if kind == "resources":
        condition, params = resources.visibility(viewer)
        return [{"id": str(r["id"]), "label": r["title"]}
                for r in metadata.resource_choices(conn, condition, params, text, AUTOCOMPLETE_LIMIT)]
    return []
