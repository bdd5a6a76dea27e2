"""The rules of remotes and publishing, free of HTTP: only superusers manage remotes and publish;
a remote has a unique name, an http(s) address and a token; its address and token are checked
against the remote whenever they are saved (a GeoNode API v2 must answer there, and take the
token), so that a wrong one is refused at once with what to fix, not at the first publish; a
publish names an existing remote (by id or name) and a dataset or document. Called by
api/admin/publishing.py and the CLI alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from catalogue_app import rules
from catalogue_app.publishing.client import MAKE_TOKEN, Remote, RemoteError, base_of
from catalogue_app.publishing.publish import unpublishable
from catalogue_app.services.errors import Invalid, NotFound, refusal_for
from catalogue_app.store import Connection, Row, publications, remotes

NAME_MAX = 100
URL_MAX = 2048
TOKEN_MAX = 4096


def require_superuser(caller: Any) -> None:
    """401 for anonymous callers, 403 for everyone but superusers."""
    if not rules.may_publish(caller):
        raise refusal_for(caller)


def checked_url(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("url: the remote's address is required (http://... or https://...).")
    url = base_of(value)
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is no number
    except ValueError:
        raise Invalid(f"url: {value!r} is not a valid address.") from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise Invalid(f"url: {value!r} is not an http:// or https:// address of a site.")
    if parts.query or parts.fragment or len(url) > URL_MAX or any(c.isspace() or ord(c) < 32 for c in url):
        raise Invalid(f"url: {value!r} is not a plain site address (no query, fragment or spaces).")
    return url


def checked_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("name: a name is required.")
    name = value.strip()
    if len(name) > NAME_MAX or any(ord(c) < 32 for c in name):
        raise Invalid(f"name: at most {NAME_MAX} printable characters.")
    if name.isdecimal():
        raise Invalid("name: a name cannot be only digits (publish takes a remote's id or its name).")
    return name


def checked_token(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > TOKEN_MAX or any(c.isspace() for c in value.strip()):
        raise Invalid("token: a token is a string without spaces.")
    return value.strip()


def remote_values(body: Any, creating: bool) -> dict[str, Any]:
    """The checked name, url and token of a remote's create or change."""
    if not isinstance(body, dict):
        raise Invalid("Expected a JSON object with name, url and token.")
    unknown = sorted(set(body) - {"name", "url", "token", "id", "has_token", "created"})
    if unknown:
        raise Invalid(f"{unknown[0]}: not a field of a remote (name, url, token).")
    values: dict[str, Any] = {}
    if creating or "name" in body:
        values["name"] = checked_name(body.get("name"))
    if creating or "url" in body:
        values["url"] = checked_url(body.get("url"))
    if "token" in body:
        values["token"] = checked_token(body["token"])
    return values


class Db(Protocol):
    """What saving a remote needs of the database owner (store/db.py Database)."""

    def read(self, fn: Callable[..., Any], *args: Any) -> Any: ...
    def write_sync(self, fn: Callable[..., Any], *args: Any) -> Any: ...


def verify_remote(url: str, token: str) -> None:
    """That a GeoNode API v2 answers at ``url`` and takes ``token`` (the address alone when there
    is no token); Invalid with a message that says what to fix otherwise. Network work: call it
    outside any transaction."""
    with Remote(url, token) as client:
        try:
            client.verify()
        except RemoteError as exc:
            raise Invalid(str(exc)) from None


def check_new_remote(values: dict[str, Any]) -> None:
    """A new remote has a token, and the remote answers and takes it (network work)."""
    if not values.get("token"):
        raise Invalid("token: a token of a user of the remote catalogue is needed (publishing sends it with "
                      f"every request, and what is published there belongs to that user). {MAKE_TOKEN}")
    verify_remote(values["url"], values["token"])


def save_remote(db: Db, values: dict[str, Any], remote_id: int | None = None) -> Row:
    """Add a remote (``remote_id`` None) or change one, its address and token checked against
    the remote first when they are new (the name is checked before, so that a name taken costs
    no request)."""
    if remote_id is None:
        if db.read_sync(remotes.name_taken, values["name"]):
            raise Invalid(f"name: a remote named {values['name']!r} exists already.")
        check_new_remote(values)
        return db.write_sync(create_remote, values)
    current = db.read_sync(remotes.credentials, remote_id)
    if current is None:
        raise NotFound("Remote")
    if "name" in values and db.read_sync(remotes.name_taken, values["name"], remote_id):
        raise Invalid(f"name: a remote named {values['name']!r} exists already.")
    if "token" in values and not values["token"]:
        raise Invalid("token: a remote's token cannot be emptied; give the new token (publishing needs one).")
    if "url" in values or "token" in values:
        verify_remote(values.get("url", current["url"]), values.get("token", current["token"]))
    return db.write_sync(update_remote, remote_id, values)


def _remote(conn: Connection, remote_id: int) -> Row:
    row = remotes.get(conn, remote_id)
    if row is None:
        raise NotFound("Remote")
    return row


def create_remote(conn: Connection, values: dict[str, Any]) -> Row:
    if remotes.name_taken(conn, values["name"]):
        raise Invalid(f"name: a remote named {values['name']!r} exists already.")
    return remotes.get(conn, remotes.create(conn, values["name"], values["url"], values.get("token", "")))


def update_remote(conn: Connection, remote_id: int, values: dict[str, Any]) -> Row:
    _remote(conn, remote_id)
    if "name" in values and remotes.name_taken(conn, values["name"], remote_id):
        raise Invalid(f"name: a remote named {values['name']!r} exists already.")
    remotes.update(conn, remote_id, values)
    return remotes.get(conn, remote_id)


def delete_remote(conn: Connection, remote_id: int) -> None:
    _remote(conn, remote_id)
    remotes.delete(conn, remote_id)


def get_remote(conn: Connection, remote_id: int) -> Row:
    return _remote(conn, remote_id)


def find_remote(conn: Connection, ref: Any) -> Row:
    """The remote named by its id (a number, or digits) or its name; 400 when ``ref`` is neither
    kind, 404 when there is no such remote."""
    if isinstance(ref, bool) or not isinstance(ref, (int, str)) or (isinstance(ref, str) and not ref.strip()):
        raise Invalid("remote: give the remote's id or its name.")
    if isinstance(ref, int) or ref.strip().isdecimal():
        number = int(ref)
        row = remotes.get(conn, number) if 0 < number < 2**63 else None
    else:
        row = remotes.by_name(conn, ref.strip())
    if row is None:
        raise NotFound(message=f"There is no remote {ref!r}; see /api/v2/remotes/.")
    return row


def publish_request(conn: Connection, resource_id: int, ref: Any) -> dict[str, Any]:
    """The publish job's params (and the names for the request), once the resource exists, can
    be published, and the remote exists."""
    source = publications.source(conn, resource_id)
    if source is None:
        raise NotFound("ResourceBase")
    remote = find_remote(conn, ref)
    refusal = unpublishable(source)
    if refusal:
        raise Invalid(refusal)
    return {"remote_id": remote["id"], "resource_id": resource_id, "remote": remote["name"],
            "title": source["title"]}


def publications_of(conn: Connection, resource_id: int) -> list[dict[str, Any]]:
    """Where the resource was published, with the address of each copy (404 for no resource)."""
    if publications.source(conn, resource_id) is None:
        raise NotFound("ResourceBase")
    out = []
    for row in publications.of_resource(conn, resource_id):
        pk = row["remote_pk"]
        out.append({"remote_id": row["remote_id"], "remote": row["remote_name"], "remote_pk": pk,
                    "remote_uuid": row["remote_uuid"],
                    "remote_url": f"{row['remote_url']}/catalogue/#/{row['resource_type']}/{pk}" if pk else None,
                    "stage": row["stage"], "last_published": row["last_published"], "message": row["message"]})
    return out
