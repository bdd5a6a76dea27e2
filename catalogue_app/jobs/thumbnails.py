"""Thumbnail files: drawn for a dataset once its import has committed (when a user asks for a
view of it, and again a short quiet time after edits of its data), or made from an image a user
sends; written into <data folder>/thumbs/ and recorded as the resource's thumbnail_url
("/uploaded/thumbs/<file>").

A file is named <resource uuid>-<12 hex digits>.png (or .jpg); the digits are new for every
image, so a new thumbnail never has the address of an old one (browsers' caches never show a
stale image) and removing an old file cannot hit a newer one. A file is written under a
temporary name, fsynced and renamed into place, then recorded; the file it replaces is removed
once no resource names it any more (a copy of a resource shares its original's file). What a
crash leaves (a temporary file, a file never recorded) is removed at start-up by sweep().

Called from the import job's thread and, through a worker thread, from the API: every function
here blocks.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import threading
import time
from pathlib import Path

from catalogue_app import files
from catalogue_app.geo import thumbnail
from catalogue_app.jobs.folders import THUMBS
from catalogue_app.rules import Viewer
from catalogue_app.services import resources as resources_service
from catalogue_app.store import thumbnails as store
from catalogue_app.store.db import Database

log = logging.getLogger("catalogue.thumbnails")
SEA = (0xDC, 0xE7, 0xEE)  # the background of maps drawn over the basemap, as the web UI shows them
MERCATOR_WORLD = thumbnail.MERCATOR_HALF

URL_PREFIX = "/uploaded/thumbs/"  # GeoNode's address of its thumbnail files
TEMPORARY = ".part-"
NAME = re.compile(r"(?P<uuid>[A-Za-z0-9][A-Za-z0-9-]{0,63})-[0-9a-f]{12}\.(?P<ext>png|jpg)")
SAFE_UUID = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")
MEDIA_TYPES = {"png": "image/png", "jpg": "image/jpeg"}


class NothingToDraw(Exception):
    """The resource is no dataset, or its data is missing."""


def folder(data_dir: Path) -> Path:
    return data_dir / THUMBS


def file_of(url: str | None) -> str | None:
    """The file name of a thumbnail address of ours; None for an outside address (or none)."""
    if not url or not url.startswith(URL_PREFIX):
        return None
    name = url[len(URL_PREFIX):]
    return name if NAME.fullmatch(name) else None


# -- writing and recording ------------------------------------------------------------------------
def write_file(thumbs: Path, uuid: str, data: bytes, ext: str) -> str:
    """Write the image under a new name (temporary name, fsync, rename); returns the name."""
    stem = uuid if SAFE_UUID.fullmatch(uuid) else "resource"
    digest = hashlib.blake2b(data + secrets.token_bytes(16), digest_size=6).hexdigest()
    name = f"{stem}-{digest}.{ext}"
    thumbs.mkdir(parents=True, exist_ok=True)
    temporary = thumbs / f"{TEMPORARY}{secrets.token_hex(8)}"
    try:
        with open(temporary, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, thumbs / name)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    files.sync_folder(thumbs)
    return name


def _recording(viewer: Viewer | None) -> tuple:
    """The write that records an address: for a person, the service that asks the rule book
    again inside the write (they may have lost the right meanwhile); for the catalogue's own
    jobs, the store."""
    return (store.set_url,) if viewer is None else (resources_service.set_thumbnail, viewer)


def save(db: Database, thumbs: Path, resource_id: int, uuid: str, data: bytes, ext: str,
         viewer: Viewer | None = None) -> str:
    """Write the image as the resource's thumbnail and record it; returns its address.
    LookupError when the resource is gone (the file is removed again); with a ``viewer``,
    NotFound or Forbidden when they may no longer change it."""
    name = write_file(thumbs, uuid, data, ext)
    url = URL_PREFIX + name
    try:
        found, old = db.write_sync(*_recording(viewer), resource_id, url)
    except BaseException:
        (thumbs / name).unlink(missing_ok=True)
        raise
    if not found:
        (thumbs / name).unlink(missing_ok=True)
        raise LookupError(f"resource {resource_id} no longer exists")
    drop(db, thumbs, old)
    return url


def record_address(db: Database, thumbs: Path, resource_id: int, url: str | None,
                   viewer: Viewer | None = None) -> str | None:
    """Record an outside image address as the thumbnail (None: no thumbnail); the file it
    replaces goes. Returns the address it had; LookupError when the resource is gone (with a
    ``viewer``, as save())."""
    found, old = db.write_sync(*_recording(viewer), resource_id, url)
    if not found:
        raise LookupError(f"resource {resource_id} no longer exists")
    if old != url:
        drop(db, thumbs, old)
    return old


def drop(db: Database, thumbs: Path, url: str | None) -> None:
    """Remove the file of a thumbnail address of ours once no resource names it. The check and
    the removal happen inside a write transaction, so no resource can take the address up between them."""
    name = file_of(url)
    if name is None:
        return

    def unlink_if_unused(conn) -> None:
        if not store.is_used(conn, url):
            (thumbs / name).unlink(missing_ok=True)

    try:
        db.write_sync(unlink_if_unused)
    except Exception:  # left for the start-up sweep
        log.warning("old thumbnail %s could not be removed", name, exc_info=True)


class ChangedMeanwhile(Exception):
    """Someone gave the resource a thumbnail while one was being drawn for it: theirs stays."""


def save_unless_changed(db: Database, thumbs: Path, resource_id: int, uuid: str, data: bytes, ext: str,
                        expected: str | None) -> str:
    """As save(), but only while the resource's thumbnail is still ``expected``: a thumbnail
    chosen by a person after an import committed is not replaced by the one drawn for it.
    ChangedMeanwhile otherwise (the new file is removed again)."""
    name = write_file(thumbs, uuid, data, ext)
    url = URL_PREFIX + name
    try:
        found, done = db.write_sync(store.replace_url, resource_id, url, expected)
    except BaseException:
        (thumbs / name).unlink(missing_ok=True)
        raise
    if not (found and done):
        (thumbs / name).unlink(missing_ok=True)
        if not found:
            raise LookupError(f"resource {resource_id} no longer exists")
        raise ChangedMeanwhile(f"resource {resource_id} was given a thumbnail meanwhile")
    drop(db, thumbs, expected)
    return url


# -- drawing a dataset --------------------------------------------------------------------------
def draw_dataset(db: Database, files_dir: Path, thumbs: Path, resource_id: int,
                 view: tuple[thumbnail.Box, str] | None = None, unless_changed: bool = False,
                 expected: str | None = None, viewer: Viewer | None = None) -> str:
    """Draw the dataset with its default style over ``view`` (a box and its CRS; None: its own
    box, see geo.thumbnail.dataset_view), save the PNG as its thumbnail; returns the address.
    With ``unless_changed``, the image is recorded only while the thumbnail is still
    ``expected`` (an address, or None; ChangedMeanwhile otherwise). NothingToDraw when it is no dataset or has no data;
    with a ``viewer``, recorded only if they may still change it (as save())."""
    source = db.read_sync(store.drawing_source, resource_id)
    if source is None:
        raise NothingToDraw("Thumbnails are drawn for datasets only.")
    data = files.working_copy(files_dir / source["folder"]) if source["folder"] else None
    if data is None:
        raise NothingToDraw("This dataset has no data to draw.")
    crs = source["crs_wkt"] or source["srid"]
    box, box_crs = view or thumbnail.dataset_view(source["ll_bbox"], source["bbox"], crs)
    png = thumbnail.draw(str(data), "raster" if source["subtype"] == "raster" else "vector", crs, source["sld"],
                         box, box_crs, version=source["data_version"])
    if not png:
        raise ValueError("the renderer gave no image")
    if unless_changed:
        return save_unless_changed(db, thumbs, resource_id, source["uuid"], png, "png", expected)
    return save(db, thumbs, resource_id, source["uuid"], png, "png", viewer)


# -- drawing a document --------------------------------------------------------------------------
def draw_document(db: Database, files_dir: Path, resource_id: int) -> str | None:
    """Draw an image document's picture or a PDF's first page as its thumbnail, unless it was
    given one meanwhile; returns the address, or None when there is nothing to draw (another
    kind of file, an unreadable one, a remote document). Never raises for the file's content:
    the document stands without a thumbnail."""
    from catalogue_app.geo import document_thumbnail

    source = db.read_sync(store.document_drawing_source, resource_id)
    if source is None or not document_thumbnail.drawable(source["extension"]):
        return None
    png = document_thumbnail.draw(files_dir / source["uuid"] / source["file_name"], source["extension"])
    if png is None:
        log.info("thumbnail of document %s not drawn: its file is not a readable image or PDF", resource_id)
        return None
    try:
        return save_unless_changed(db, folder(files_dir.parent), resource_id, source["uuid"], png, "png",
                                   source["thumbnail_url"])
    except (ChangedMeanwhile, LookupError):
        return None


def draw_map(db: Database, files_dir: Path, map_id: int) -> str:
    """Draw the map (its layers that everyone may see, over the built-in basemap, on its own box)
    and save the PNG as its thumbnail; returns the address. NothingToDraw when it is no map."""
    from catalogue_app.geo import basemap
    from catalogue_app.geo.render import MapLayer, render_map

    source = db.read_sync(store.map_drawing_source, map_id)
    if source is None:
        raise NothingToDraw("This is no map.")
    layers = [MapLayer(str(basemap.PATH), "vector", basemap.CRS, basemap.SLD)]
    for layer in source["layers"]:
        data = files.working_copy(files_dir / layer["folder"])
        if data is not None:
            layers.append(MapLayer(str(data), "raster" if layer["subtype"] == "raster" else "vector", layer["crs"],
                                   layer["sld"], min(1.0, float(layer["opacity"])), layer["data_version"]))
    box, box_crs = thumbnail.dataset_view(source["ll_bbox"], None, None) if None not in source["ll_bbox"] \
        else ((-MERCATOR_WORLD, -MERCATOR_WORLD / 2, MERCATOR_WORLD, MERCATOR_WORLD * 0.75), "EPSG:3857")
    png = render_map(layers, box, box_crs, thumbnail.WIDTH, thumbnail.HEIGHT, "image/png", False, SEA)
    return save(db, folder(files_dir.parent), map_id, source["uuid"], png, "png")


def after_map_change(db: Database, files_dir: Path, map_ids: list[int]) -> None:
    """Draw the thumbnail of each map whose layers were written; a failure is logged and leaves
    the thumbnail as it was: the change stands."""
    for map_id in map_ids:
        try:
            draw_map(db, files_dir, map_id)
        except Exception as exc:
            log.warning("thumbnail of map %s not drawn: %s", map_id, exc, exc_info=not isinstance(exc, NothingToDraw))


def after_import(db: Database, files_dir: Path, resource_ids: list[int],
                 at_commit: dict[int, str | None] | None = None) -> None:
    """Draw the thumbnail of each dataset an import created or gave new data. A failure is
    logged and leaves that dataset's thumbnail as it was: the import stands. ``at_commit``: the
    thumbnail each had when the import committed; one changed since (a client that saw the
    import finished and chose a thumbnail) is kept."""
    thumbs = folder(files_dir.parent)
    for rid in resource_ids:
        started = time.process_time()
        try:
            if at_commit is None:
                draw_dataset(db, files_dir, thumbs, rid)
            else:
                draw_dataset(db, files_dir, thumbs, rid, unless_changed=True, expected=at_commit.get(rid))
        except ChangedMeanwhile:
            log.info("thumbnail of dataset %s not drawn: one was chosen meanwhile", rid)
        except Exception as exc:
            log.warning("thumbnail of dataset %s not drawn: %s", rid, exc,
                        exc_info=not isinstance(exc, (NothingToDraw, ImportError, LookupError)))
        else:
            log.info("thumbnail of dataset %s drawn in %.0f ms of CPU", rid, (time.process_time() - started) * 1000)


# -- after an edit of a dataset's data ---------------------------------------------------------------
# Seconds without an edit of a dataset after which its thumbnail is drawn again (the app sets it
# from its settings: CATALOGUE_THUMBNAIL_QUIET).
quiet_seconds = 10.0


class QuietRedraws:
    """Thumbnails to draw again once their dataset's data have been quiet for a while: each
    edit of a dataset moves its time on, so several edits in a row draw it once. One thread per
    process draws them when due; what is due when the server stops is drawn then (``flush``)."""

    def __init__(self) -> None:
        self._due: dict[tuple[int, int], tuple[float, Database, Path, int]] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def ask(self, db: Database, files_dir: Path, resource_id: int, quiet: float) -> None:
        with self._wake:
            self._due[(id(db), resource_id)] = (time.monotonic() + max(0.0, quiet), db, files_dir, resource_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="thumbnail-redraws", daemon=True)
                self._thread.start()
            self._wake.notify()

    def flush(self, db: Database) -> None:
        """Draw now what is waiting for ``db`` (the server is stopping)."""
        with self._wake:
            now = [self._due.pop(k) for k in [k for k in self._due if k[0] == id(db)]]
        for _, db_, files_dir, rid in now:
            _redraw(db_, files_dir, rid)

    def _run(self) -> None:
        while True:
            with self._wake:
                while True:
                    if not self._due:
                        if not self._wake.wait(timeout=60) and not self._due:
                            self._thread = None  # idle a minute: the next edit starts another
                            return
                        continue
                    now = time.monotonic()
                    nearest = min(v[0] for v in self._due.values())
                    if nearest <= now:
                        break
                    self._wake.wait(timeout=nearest - now)
                drawn = [self._due.pop(k) for k in [k for k, v in self._due.items() if v[0] <= now]]
            for _, db, files_dir, rid in drawn:
                _redraw(db, files_dir, rid)


def _redraw(db: Database, files_dir: Path, resource_id: int) -> None:
    """Draw the dataset's thumbnail again on its own view; a thumbnail given to it while it is
    drawn stays; a failure is logged (the edit stands)."""
    try:
        at_start = db.read_sync(store.urls_of, [resource_id])
    except Exception as exc:  # the database closed meanwhile
        log.warning("thumbnail of dataset %s not drawn again after its edits: %s", resource_id, exc)
        return
    if resource_id in at_start:
        after_import(db, files_dir, [resource_id], at_start)


REDRAWS = QuietRedraws()


def redraw_after_quiet(db: Database, files_dir: Path, resource_id: int, quiet: float | None = None) -> None:
    """Draw the dataset's thumbnail again once its features have not been edited for ``quiet``
    seconds (by default ``quiet_seconds``; edits come in bursts: one drawing for a burst),
    unless someone gives it a thumbnail meanwhile. Returns at once; the edit service calls it
    after each commit."""
    REDRAWS.ask(db, files_dir, resource_id, quiet_seconds if quiet is None else quiet)


# -- removing -----------------------------------------------------------------------------------
def remove_unused(db: Database, data_dir: Path, uuid: str) -> None:
    """After a resource is deleted: the thumbnail files made for it that no resource names."""
    thumbs = folder(data_dir)
    if not SAFE_UUID.fullmatch(uuid) or not thumbs.is_dir():
        return
    for path in thumbs.glob(f"{uuid}-*"):
        if NAME.fullmatch(path.name) and path.name[:-17] == uuid:  # not those of a longer uuid
            drop(db, thumbs, URL_PREFIX + path.name)


def sweep(db: Database, data_dir: Path, min_age_seconds: float = 600) -> list[Path]:
    """Remove, once older than ``min_age_seconds`` (a file being written and recorded right now
    is younger), temporary files and thumbnail files no resource names."""
    thumbs = folder(data_dir)
    if not thumbs.is_dir():
        return []
    used = {file_of(u) for u in db.read_sync(store.urls_under, URL_PREFIX)}
    removed, now = [], time.time()
    for path in thumbs.iterdir():
        try:
            old = now - path.lstat().st_mtime > min_age_seconds
        except OSError:
            continue
        if old and path.is_file() and (path.name.startswith(TEMPORARY) or path.name not in used):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


# -- a remote dataset ---------------------------------------------------------------------------
def remote_thumbnail(db: Database, thumbs: Path, resource_id: int, uuid: str, service_url: str, layer_name: str,
                     ll_bbox: list[float] | None, http_client) -> str:
    """Ask the remote WMS for an image of its layer (the view a local dataset's thumbnail has,
    in Web Mercator where the remote draws it, else in EPSG:4326), save it as the resource's
    thumbnail and return the address. HarvestError when the remote gives no image;
    NothingToDraw without a box."""
    from catalogue_app.harvesting import http
    from catalogue_app.harvesting.types import HarvestError

    if not ll_bbox or len(ll_bbox) != 4 or None in ll_bbox:
        raise NothingToDraw("The remote layer has no extent to show.")
    ll = tuple(float(v) for v in ll_bbox)
    views = [thumbnail.dataset_view(ll, None, None)]
    if views[0][1] != "EPSG:4326":
        views.append((thumbnail.fit(ll, margin=thumbnail.MARGIN, least=0.01), "EPSG:4326"))
    said = "no image"
    for box, crs in views:
        params = {"SERVICE": "WMS", "VERSION": "1.1.1", "REQUEST": "GetMap", "LAYERS": layer_name, "STYLES": "",
                  "SRS": crs, "BBOX": ",".join(repr(float(v)) for v in box), "WIDTH": str(thumbnail.WIDTH),
                  "HEIGHT": str(thumbnail.HEIGHT), "FORMAT": "image/png", "TRANSPARENT": "TRUE"}
        body = http.get_bytes(http_client, service_url, params, limit=16 * 1024 * 1024)
        if body.startswith(b"\x89PNG\r\n\x1a\n"):
            return save(db, thumbs, resource_id, uuid, body, "png")
        said = " ".join(body[:300].decode("utf-8", "replace").split())
    raise HarvestError(f"{service_url} gave no image of {layer_name}: {said}")
