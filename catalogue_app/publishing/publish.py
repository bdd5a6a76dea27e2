"""Publishing one local dataset or document to a remote GeoNode API v2, step by step, each step
remembered in its ``publications`` row so that a run that stopped (the network dropped, the
remote refused, the server stopped) is resumed by the next one and never sends the data twice.

Stages (``publications.stage``), in order:
- ``new``: nothing is on the remote.
- ``sending``: the data is being sent; ``upload_exec_id`` holds ``name:<marker>``, the unique
  file name of the zip (a dataset) or the title (a document) it is sent with. Had the remote
  received it but its answer was lost, the next run finds it by that marker (the remote's
  execution requests by name, or its documents by title) rather than sending it again.
- ``uploading``: the remote accepted a dataset upload; ``upload_exec_id`` is its execution id,
  stored before it is polled, so that the next run polls it again.
- ``created``: the remote's copy exists (``remote_pk``, ``remote_uuid``); ``data_checksum`` is
  the SHA-256 of the files sent.
- ``metadata``, ``permissions``: those were sent.
- ``done``: the thumbnail too; ``last_published`` and ``message`` say when and what.

A run on a publication that is ``done`` (or stopped after ``created``) updates the remote copy
in place: the metadata, permissions and thumbnail again, the data only when the local files no
longer match ``data_checksum`` (a dataset's new data go through the upload API with
``overwrite_existing_layer`` and ``resource_pk``). A copy deleted on the remote (404) is
published anew. Permissions are mapped by name: users by user name, groups by slug, the
anonymous and registered-members groups to the remote's own; those the remote does not have are
skipped and named in the outcome. Superusers are left out (every remote gives its own all rights)
and the local owner gets ``manage`` (the remote copy belongs to the token's user).

Maps and apps are not published (they point at datasets by local ids); neither are datasets
without data files of their own. A document's file is sent once: its later changes are not.
"""

from __future__ import annotations

import hashlib
import secrets
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from catalogue_app import files
from catalogue_app.geo import gpkg_edit
from catalogue_app.publishing.client import Remote, RemoteError
from catalogue_app.store import permissions, publications, remotes

PUBLISHABLE = ("dataset", "document")
UPLOAD_WAIT = 30 * 60.0   # seconds a run waits for the remote's import before it leaves it to the next run
JOB_WAIT = 120.0          # seconds to wait for a permission change on the remote
THUMB_WAIT = 10.0         # seconds to wait for the thumbnail a remote draws after an import
THUMB_PREFIX = "/uploaded/thumbs/"
# Resource fields sent as they are (None clears them on the remote, except those it needs).
FIELDS = ("title", "abstract", "attribution", "doi", "edition", "purpose", "maintenance_frequency",
          "constraints_other", "supplemental_information", "data_quality_statement", "language", "date",
          "date_type", "temporal_extent_start", "temporal_extent_end")
REQUIRED = ("title", "abstract", "language", "date_type", "date")


class Db(Protocol):
    """What publishing needs of the database owner (store/db.py Database)."""

    def read(self, fn: Callable[..., Any], *args: Any) -> Any: ...
    def write_sync(self, fn: Callable[..., Any], *args: Any) -> Any: ...


class PublishError(Exception):
    """Publishing failed; the message says which step, which remote and what it said.
    ``output`` is what the execution request's output_params get."""

    def __init__(self, message: str, output: dict[str, Any] | None = None):
        super().__init__(message)
        self.output = output or {}


@dataclass
class Outcome:
    resource_id: int
    resource_type: str
    remote: str
    remote_pk: int
    remote_url: str
    data: str                                    # sent | replaced | unchanged
    skipped_users: list[str] = field(default_factory=list)
    skipped_groups: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        text = (f"{self.resource_type} {self.resource_id} -> {self.remote}: published as {self.remote_pk} "
                f"({self.remote_url}); data {self.data}")
        if self.skipped_users:
            text += "; users not on the remote, skipped: " + ", ".join(self.skipped_users)
        if self.skipped_groups:
            text += "; groups not on the remote, skipped: " + ", ".join(self.skipped_groups)
        return text + "".join(f"; {n}" for n in self.notes)

    def output(self) -> dict[str, Any]:
        return {"remote": self.remote, "resources": [{"id": self.resource_id, "remote_pk": self.remote_pk,
                                                      "remote_url": self.remote_url}],
                "data": self.data, "skipped_users": self.skipped_users, "skipped_groups": self.skipped_groups,
                "notes": self.notes, "message": self.line()}


@dataclass
class Run:
    """One publishing run: the remote, the local resource, its row, and where files go."""

    db: Db
    remote_id: int
    remote_name: str
    resource_id: int
    source: dict[str, Any]
    client: Remote
    files_dir: Path
    thumbs_dir: Path
    workspace: Path
    progress: Callable[[int], None]
    upload_wait: float
    site_url: str | None = None  # this catalogue's address: the copy is told where its original is
    row: Any = None
    step: str = "start"
    drawn_before: str | None = None  # the remote copy's thumbnail address before new data were sent

    @property
    def kind(self) -> str:
        return self.source["resource_type"]

    def save(self, **values: Any) -> None:
        row = self.db.write_sync(publications.update, self.remote_id, self.resource_id, values)
        if row is None:  # the remote (or the resource) was removed here meanwhile, its records with it
            raise PublishError(f"The remote {self.remote_name} or resource {self.resource_id} was removed here "
                               f"while it was being published (at step '{self.step}').")
        self.row = row


def publish(db: Db, remote_id: int, resource_id: int, *, files_dir: Path, thumbs_dir: Path, workspace: Path,
            progress: Callable[[int], None] = lambda pct: None, upload_wait: float = UPLOAD_WAIT,
            poll_every: float = 0.2, site_url: str | None = None) -> Outcome:
    """Publish the resource to the remote (or update what was published there); PublishError
    when it cannot, with the publication left where it got to. ``site_url``, this catalogue's
    address, lets the copy say where its original is."""
    remote = db.read_sync(remotes.credentials, remote_id)
    if remote is None:
        raise PublishError(f"There is no remote with id {remote_id} (it was removed).")
    source = db.read_sync(publications.source, resource_id)
    if source is None:
        raise PublishError(f"There is no resource {resource_id} here (it was deleted).")
    refusal = unpublishable(source)
    if refusal:
        raise PublishError(refusal)
    workspace.mkdir(parents=True, exist_ok=True)
    with Remote(remote["url"], remote["token"], poll_every=poll_every) as client:
        run = Run(db, remote_id, remote["name"], resource_id, source, client, files_dir, thumbs_dir, workspace,
                  progress, upload_wait, site_url)
        run.row = db.write_sync(publications.ensure, remote_id, resource_id)
        what = f"{run.kind} {resource_id} ({source['title']!r})"
        extra: dict[str, Any] = {}
        try:
            return _steps(run)
        except RemoteError as exc:
            message = f"Publishing {what} to {remote['name']} failed at step '{run.step}': {exc}"
            if exc.status in (401, 403):  # said plainly, with what to do; the details stay at hand
                extra = {"fix": "token", "detail": message}
                message = refused(what, remote["name"], exc.status)
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            message = f"Publishing {what} to {remote['name']} failed at step '{run.step}' here: {exc}"
        db.write_sync(publications.update, remote_id, resource_id, {"message": message})
        raise PublishError(message, {"remote": remote["name"], "step": run.step,
                                     "stage": run.row["stage"] if run.row else None, **extra})


def refused(what: str, remote: str, status: int) -> str:
    """What to do when the remote refused the token this catalogue sends (401, or 403: GeoNode 4
    answers 403 to a token it does not know, as to a user who may not do something)."""
    cause = ("it was revoked or has expired there" if status == 401
             else "it was revoked or has expired there, or its user may not do this")
    return (f"{remote} refused the token this catalogue sends ({cause}), so publishing {what} stopped. "
            f"Make a new token on {remote} and save it in Administration › Remote catalogues ({remote}: "
            "Change token), then publish again.")


def unpublishable(source: dict[str, Any]) -> str | None:
    """Why this resource cannot be published (None: it can)."""
    kind = source["resource_type"]
    if kind not in PUBLISHABLE:
        return f"Only datasets and documents are published; resource {source['id']} is a {kind}."
    if kind == "dataset" and (not source["dataset"] or not _originals(source)):
        return f"Dataset {source['id']} has no data files of its own here (metadata only, or harvested); it is not published."
    if kind == "document" and not (source["document"] and (source["document"]["file_name"] or source["document"]["doc_url"])):
        return f"Document {source['id']} has neither a file nor an address; it is not published."
    return None


def _steps(run: Run) -> Outcome:
    notes: list[str] = []
    run.step = "finding the remote copy"
    if run.row["remote_pk"] is not None and run.row["stage"] != "uploading":
        found = run.client.resource(run.row["remote_pk"])
        run.drawn_before = (found or {}).get("thumbnail_url")
        if found is None:
            notes.append(f"the copy {run.row['remote_pk']} was deleted on the remote: published anew")
            run.save(remote_pk=None, remote_uuid=None, stage="new", data_checksum=None, upload_exec_id=None)
    run.progress(5)
    run.step = "data"
    data = _dataset_data(run) if run.kind == "dataset" else _document_file(run, notes)
    run.progress(60)
    pk = run.row["remote_pk"]
    run.step = "metadata"
    _metadata(run, pk, notes)
    run.save(stage="metadata")
    run.progress(75)
    run.step = "permissions"
    skipped_users, skipped_groups = _permissions(run, pk)
    run.save(stage="permissions")
    run.progress(90)
    run.step = "thumbnail"
    _thumbnail(run, pk, data)
    outcome = Outcome(run.resource_id, run.kind, run.remote_name, pk, run.client.resource_page(run.kind, pk), data,
                      skipped_users, skipped_groups, notes)
    run.row = run.db.write_sync(publications.finished, run.remote_id, run.resource_id, outcome.line())
    return outcome


# -- data ----------------------------------------------------------------------------------------
def _originals(source: dict[str, Any]) -> list[str]:
    """The dataset's original files (not its working copy, old layout or new)."""
    return [n for n in source["files"] if "/" not in n and not n.startswith("working.")]


def _checksum(folder: Path, names: list[str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(name.encode() + b"\0")
        with open(folder / name, "rb") as handle:
            while chunk := handle.read(files.CHUNK):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def _dataset_files(run: Run) -> tuple[Path, list[str]]:
    """The folder and the files that make the dataset: its originals, or for a GeoPackage
    (which may hold other layers) the working copy, one layer of the dataset's name, as
    committed now (edits included; copied into the workspace, without the catalogue's history)."""
    folder = run.files_dir / run.source["dataset"]["folder"]
    names = _originals(run.source)
    if any(n.lower().endswith(".gpkg") for n in names):
        working = files.working_copy(folder)
        if working is not None:
            copy = run.workspace / "data" / "data.gpkg"
            files.remove(copy.parent)
            gpkg_edit.copy_database(working, copy, history=False)
            return copy.parent, [copy.name]
    return folder, names


def _dataset_data(run: Run) -> str:
    folder, names = _dataset_files(run)
    checksum = _checksum(folder, names)
    row = run.row
    if row["stage"] == "sending":
        _find_sent_upload(run)
        row = run.row
    if row["stage"] == "uploading":
        _await_upload(run)
        row = run.row
        if row["data_checksum"] == checksum:
            return "sent"
    if row["remote_pk"] is not None and row["data_checksum"] == checksum:
        return "unchanged"
    replacing = row["remote_pk"] is not None
    stem = run.source["dataset"]["source_name"] or run.source["dataset"]["name"]
    marker = f"{stem}-{secrets.token_hex(6)}.zip"
    archive = run.workspace / marker
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for name in names:
            arcname = f"{stem}.gpkg" if name == "data.gpkg" else name
            z.write(folder / name, arcname)
    fields = {"dataset_title": run.source["title"], "non_interactive": "True", "time": "false", "mosaic": "false",
              "skip_existing_layers": "false", "overwrite_existing_layer": "true" if replacing else "false",
              "permissions": '{"users": {}, "groups": {}}'}
    if replacing:
        fields["resource_pk"] = str(row["remote_pk"])
    run.step = "data (sending the files)"
    before = {"stage": row["stage"], "data_checksum": None}
    run.save(stage="sending", upload_exec_id=f"name:{marker}", data_checksum=checksum)
    try:
        exec_id = run.client.upload(archive, marker, fields)
    except RemoteError as exc:
        if exc.status is not None:  # the remote answered: it refused, nothing was made there
            run.save(upload_exec_id=None, **before)
        raise  # (no answer: the next run looks for the upload by its name)
    finally:
        archive.unlink(missing_ok=True)
    run.save(stage="uploading", upload_exec_id=exec_id)
    run.progress(30)
    _await_upload(run)
    return "replaced" if replacing else "sent"


def _find_sent_upload(run: Run) -> None:
    """After a run that stopped while sending: the remote's execution request for that upload,
    if it got it (then 'uploading'); else back to where it was, to send it again."""
    run.step = "data (looking for the upload sent before)"
    marker = (run.row["upload_exec_id"] or "").removeprefix("name:")
    found = run.client.executions_named(marker) if marker else []
    if found:
        run.save(stage="uploading", upload_exec_id=found[-1]["exec_id"])
    else:
        run.save(stage="created" if run.row["remote_pk"] is not None else "new", upload_exec_id=None,
                 data_checksum=None)


def _await_upload(run: Run) -> None:
    """Poll the remote's import until it ends; then the copy's pk and uuid are recorded."""
    exec_id = run.row["upload_exec_id"]
    run.step = f"data (the remote's import {exec_id})"
    request = run.client.wait(exec_id, run.upload_wait)
    fallback = "created" if run.row["remote_pk"] is not None else "new"
    if request is None:
        run.save(stage=fallback, upload_exec_id=None, data_checksum=None)
        raise RemoteError(f"the remote no longer knows its import {exec_id}; publish again to send the data anew")
    status = request.get("status")
    if status in ("ready", "running"):
        raise RemoteError(f"the remote's import {exec_id} is still {status} after {run.upload_wait:.0f} s; "
                          "publish again later to pick it up")
    output = request.get("output_params") or {}
    made = output.get("resources") or []
    if status != "finished" or not made:
        run.save(stage=fallback, upload_exec_id=None, data_checksum=None)
        said = (output.get("errors") or [None])[0] or request.get("log") or output.get("exception") or status
        raise RemoteError(f"the remote's import {exec_id} ended {status}: {said}")
    pk = int(made[0]["id"])
    found = run.client.resource(pk)
    if found is None:
        run.save(stage=fallback, upload_exec_id=None, data_checksum=None)
        raise RemoteError(f"the remote's import {exec_id} made resource {pk}, which it no longer has")
    run.save(stage="created", upload_exec_id=None, remote_pk=pk, remote_uuid=found.get("uuid"))


def _document_file(run: Run, notes: list[str]) -> str:
    doc = run.source["document"]
    path = run.files_dir / run.source["uuid"] / doc["file_name"] if doc["file_name"] else None
    checksum = _checksum(path.parent, [path.name]) if path is not None else hashlib.sha256(
        (doc["doc_url"] or "").encode()).hexdigest()
    row = run.row
    if row["stage"] == "sending":
        run.step = "data (looking for the document sent before)"
        marker = (row["upload_exec_id"] or "").removeprefix("name:")
        found = run.client.resources_titled("document", marker) if marker else []
        if found:
            run.save(stage="created", upload_exec_id=None, remote_pk=int(found[-1]["pk"]),
                     remote_uuid=found[-1].get("uuid"))
            return "sent"
        run.save(stage="new", upload_exec_id=None, data_checksum=None)
        row = run.row
    if row["remote_pk"] is not None:
        if row["data_checksum"] != checksum:
            notes.append("the document's file changed here; the remote keeps the file first sent")
        return "unchanged"
    marker = f"publishing {run.source['uuid']} {secrets.token_hex(6)}"
    run.step = "data (sending the document)"
    run.save(stage="sending", upload_exec_id=f"name:{marker}", data_checksum=checksum)
    try:
        made = run.client.create_document(marker, path, doc["file_name"], None if path else doc["doc_url"])
    except RemoteError as exc:
        if exc.status is not None:
            run.save(stage="new", upload_exec_id=None, data_checksum=None)
        raise
    run.save(stage="created", upload_exec_id=None, remote_pk=int(made["pk"]), remote_uuid=made.get("uuid"))
    return "sent"


# -- metadata, permissions, thumbnail -------------------------------------------------------------
def metadata_body(source: dict[str, Any], site_url: str | None = None) -> dict[str, Any]:
    """The fields sent to the remote copy; with ``site_url``, the address and title of the
    original here (``origin_url``, ``origin_title``: a catalogue like this one records them,
    GeoNode ignores them)."""
    body: dict[str, Any] = {}
    for name in FIELDS:
        value = source.get(name)
        if value is None and name in REQUIRED:
            continue
        body[name] = value
    body["keywords"] = list(source["keywords"])
    if source["category"]:
        body["category"] = {"identifier": source["category"]}
    if source["license"]:
        body["license"] = {"identifier": source["license"]}
    if site_url:
        body["origin_url"] = f"{site_url.rstrip('/')}/catalogue/#/{source['resource_type']}/{source['id']}"
        body["origin_title"] = (source.get("title") or "")[:255]
    return body


def _metadata(run: Run, pk: int, notes: list[str]) -> None:
    body = metadata_body(run.source, run.site_url)
    try:
        run.client.patch(pk, body)
    except RemoteError as exc:
        text = str(exc).lower()
        dropped = [k for k in ("category", "license", "keywords", "origin_url") if k in body and k in text]
        if exc.status != 400 or not dropped:
            raise
        for key in dropped:  # a category, licence, keyword or origin the remote refuses: the rest still goes
            if key == "origin_url":
                body.pop("origin_title", None)
            value = body.pop(key)
            notes.append(f"the remote refused the {key} {value.get('identifier') if isinstance(value, dict) else value!r};"
                         " left as it was there")
        run.client.patch(pk, body)


def _permissions(run: Run, pk: int) -> tuple[list[str], list[str]]:
    local = run.db.read_sync(permissions.overview, run.resource_id)
    current = run.client.permissions(pk)
    remote_owner = {u.get("username") for u in current.get("users", []) if u.get("permissions") == "owner"}
    users, skipped_users, mapped = [], [], set()
    for u in local["users"]:
        if u["is_superuser"]:
            continue
        if u["username"] in remote_owner:
            mapped.add(u["username"])
            continue
        remote_id = run.client.user_id(u["username"])
        if remote_id is None:
            skipped_users.append(u["username"])
            continue
        mapped.add(u["username"])
        users.append({"id": remote_id, "permissions": "manage" if u["permissions"] == "owner" else u["permissions"]})
    for u in current.get("users", []):  # what is no longer granted here is taken back there
        if (u.get("username") not in mapped and u.get("permissions") not in ("owner", None)
                and not u.get("is_superuser")):
            users.append({"id": u["id"], "permissions": "none"})
    special = {g.get("name"): g.get("id") for g in current.get("groups", [])}
    groups = [{"id": special[g["name"]], "permissions": g["permissions"]} for g in local["groups"]
              if special.get(g["name"]) is not None]
    organizations, skipped_groups, kept = [], [], set()
    for g in local["organizations"]:
        remote_id = run.client.group_id(g["name"])
        if remote_id is None:
            skipped_groups.append(g["name"])
            continue
        kept.add(remote_id)
        organizations.append({"id": remote_id, "permissions": g["permissions"]})
    for g in current.get("organizations", []):
        if g.get("id") not in kept:
            organizations.append({"id": g["id"], "permissions": "none"})
    run.client.set_permissions(pk, {"users": users, "groups": groups, "organizations": organizations}, JOB_WAIT)
    return skipped_users, skipped_groups


def _thumbnail(run: Run, pk: int, data: str) -> None:
    url = run.source["thumbnail_url"]
    if not url:
        return
    if run.kind == "dataset" and data in ("sent", "replaced"):
        _remote_thumbnail_drawn(run, pk, run.drawn_before if data == "replaced" else None)
    if url.startswith(THUMB_PREFIX):
        image = run.thumbs_dir / url[len(THUMB_PREFIX):]
        if image.is_file():
            run.client.set_thumbnail(pk, image=image)
    elif url.startswith(("http://", "https://")):
        run.client.set_thumbnail(pk, address=url)


def _remote_thumbnail_drawn(run: Run, pk: int, before: str | None) -> None:
    """Wait a little for the thumbnail a remote draws once its import has ended (this
    catalogue, and GeoNode, draw it after the execution request is finished), so that it does
    not replace the one sent from here a moment later (new data: a new address, ``before``
    being the one it had)."""
    deadline = time.monotonic() + THUMB_WAIT
    while time.monotonic() < deadline:
        found = run.client.resource(pk) or {}
        if found.get("thumbnail_url") and found.get("thumbnail_url") != before:
            return
        time.sleep(0.2)
