"""The harvesting runner: one per server process, a thread that looks at the harvesters every
few seconds (at once when the API asks for work) and runs what is due on a small pool.

Work is asked for by a harvester's status (set through the API, or here when its schedule says
so): checking that the remote answers, making the list of what it offers anew, harvesting the
chosen records. One process at a time runs a harvester's work: it holds the harvester's lease
(a row update, renewed while it works; a lease whose process is gone or whose time ran out is
free). Each refresh and each harvest is a session, its progress and failures stored as it goes.
A run stops between two records when its harvester is set to 'aborting-...'. A server that
stops in the middle leaves the status busy and the session open: the next runner to look takes
the lease and goes on where it stopped (a harvest redoes only the records it had not done).
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any

import msgspec

from catalogue_app import processes
from catalogue_app.harvesting import registry
from catalogue_app.harvesting.types import HarvestError, RemoteItem
from catalogue_app.jobs.folders import Folders
from catalogue_app.services import harvesting as harvesting_service
from catalogue_app.store import harvesters
from catalogue_app.store.db import Database
from catalogue_app.ticker import Ticker

log = logging.getLogger("catalogue.harvesting")
OFFER_BATCH = 200


class Aborted(Exception):
    pass


def _minutes_since(stamp: str | None) -> float:
    if not stamp:
        return float("inf")
    then = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return (datetime.now(timezone.utc) - then).total_seconds() / 60


def due(row: Any) -> str | None:
    """The work a ready harvester's schedule asks for now, if any."""
    if not row["scheduling_enabled"]:
        return None
    if _minutes_since(row["last_checked_availability"]) >= row["check_availability_frequency"]:
        return harvesting_service.CHECKING
    if _minutes_since(row["last_checked_harvestable_resources"]) >= row["refresh_harvestable_resources_update_frequency"]:
        return harvesting_service.REFRESHING
    if _minutes_since(row["last_harvested"]) >= row["harvesting_session_update_frequency"]:
        return harvesting_service.HARVESTING
    return None


def _claim(conn, harvester_id: int, pid: int) -> str | None:
    """Take the harvester's lease and the work to do: what its status asks for, or (when it is
    ready) what its schedule does, both read again here, in the writer's transaction. An abort
    left by a stopped run is finished here."""
    row = harvesters.get(conn, harvester_id)
    if row is None:
        return None
    scheduled = due(row) if row["status"] == harvesting_service.READY else None
    if row["status"] == harvesting_service.READY and scheduled is None:
        return None
    if not harvesters.take_lease(conn, harvester_id, pid, processes.alive):
        return None
    status = row["status"]
    if status in (harvesting_service.ABORT_HARVEST, harvesting_service.ABORT_REFRESH):
        _finish_abort(conn, harvester_id, status)
        harvesters.release_lease(conn, harvester_id, pid)
        return None
    if status == harvesting_service.READY:
        harvesters.set_status(conn, harvester_id, scheduled)
        return scheduled
    return status


def _finish_abort(conn, harvester_id: int, status: str) -> None:
    kind = "harvesting" if status == harvesting_service.ABORT_HARVEST else "discover-harvestable-resources"
    open_ = harvesters.open_session(conn, harvester_id, kind)
    if open_ is not None:
        harvesters.end_session(conn, open_["id"], "aborted")
    harvesters.reset_items(conn, harvester_id)
    harvesters.set_status(conn, harvester_id, harvesting_service.READY)


class HarvestRunner(Ticker):
    name = "harvest"

    def __init__(self, db: Database, folders: Folders, tick_seconds: float = 5.0, workers: int = 2):
        super().__init__(db, folders, tick_seconds, workers)
        self.running: set[int] = set()
        self._lock = threading.Lock()

    def look(self) -> None:
        """Start what is asked for or due, on harvesters no run of this process holds."""
        for row in self.db.read_sync(harvesters.all_ids):
            with self._lock:
                if row["id"] in self.running:
                    continue
            scheduled = due(row) if row["status"] == harvesting_service.READY else None
            if row["status"] == harvesting_service.READY and scheduled is None:
                continue
            if row["lease_pid"] not in (None, self.pid) and processes.alive(row["lease_pid"]) and \
                    (row["lease_until"] or 0) > time.time():
                continue  # another process runs it
            work = self.db.write_sync(_claim, row["id"], self.pid)
            if work is None:
                continue
            with self._lock:
                self.running.add(row["id"])
            self.pool.submit(self._run, row["id"], work)

    # -- one piece of work -------------------------------------------------------------------

    def _run(self, harvester_id: int, work: str) -> None:
        beating = threading.Event()
        heart = threading.Thread(target=self._heartbeat, args=(harvester_id, beating), daemon=True,
                                 name=f"harvest-lease-{harvester_id}")
        heart.start()
        try:
            if work == harvesting_service.CHECKING:
                self._check(harvester_id)
            elif work == harvesting_service.REFRESHING:
                self._refresh(harvester_id)
            elif work == harvesting_service.HARVESTING:
                self._harvest(harvester_id)
        except Exception:
            log.exception("harvester %s: %s stopped", harvester_id, work)
        finally:
            beating.set()
            heart.join()
            try:
                self.db.write_sync(self._done, harvester_id, work)
            except Exception:
                log.exception("harvester %s: could not be made ready", harvester_id)
            with self._lock:
                self.running.discard(harvester_id)

    def _heartbeat(self, harvester_id: int, stop: threading.Event) -> None:
        """Renew the lease while the work runs, so that one record that takes longer than the
        lease (a slow remote, a large download, an import) does not let another process take the
        harvester and run it too; a lease lost all the same ends the work at its next record."""
        while not stop.wait(harvesters.LEASE_SECONDS / 4):
            try:
                if not self.db.write_sync(harvesters.renew_lease, harvester_id, self.pid):
                    return
            except Exception:  # the database failed: the work's own checks will say so
                log.exception("harvester %s: could not renew its lease", harvester_id)

    def _done(self, conn, harvester_id: int, work: str) -> None:
        row = harvesters.get(conn, harvester_id)
        if row is not None and row["lease_pid"] == self.pid:
            if row["status"] in (harvesting_service.ABORT_HARVEST, harvesting_service.ABORT_REFRESH):
                _finish_abort(conn, harvester_id, row["status"])
            elif row["status"] == work:
                harvesters.set_status(conn, harvester_id, harvesting_service.READY)
            harvesters.release_lease(conn, harvester_id, self.pid)

    def _write(self, fn, *args: Any, **kwargs: Any) -> Any:
        return self.db.write_sync(lambda conn: fn(conn, *args, **kwargs))

    def _worker(self, row: Any, client) -> Any:
        return registry.worker(row["harvester_type"], row["remote_url"], harvesters.config_of(row), client)

    def _keep_going(self, harvester_id: int) -> None:
        """Renew the lease; Aborted when the harvester is to stop (or another process took it)."""
        def check(conn) -> str | None:
            if not harvesters.renew_lease(conn, harvester_id, self.pid):
                return "lost"
            row = harvesters.get(conn, harvester_id)
            return row["status"] if row else "gone"

        status = self.db.write_sync(check)
        if status in (harvesting_service.ABORT_HARVEST, harvesting_service.ABORT_REFRESH, "lost", "gone") or self.stopping:
            raise Aborted(status)

    def _check(self, harvester_id: int) -> bool:
        from catalogue_app.harvesting import http  # httpx: loaded when a run first needs it

        row = self.db.read_sync(harvesters.get, harvester_id)
        with http.client() as client:
            try:
                available = bool(self._worker(row, client).available())
            except HarvestError as exc:
                log.info("harvester %s: remote not available: %s", harvester_id, exc)
                available = False
        self.db.write_sync(harvesters.record_availability, harvester_id, available)
        return available

    def _refresh(self, harvester_id: int) -> tuple[str, str]:
        """A session that makes the list of what the remote offers anew; records it no longer
        offers are withdrawn (and their resources removed when the harvester says so)."""
        from catalogue_app.harvesting import http, storing

        row = self.db.read_sync(harvesters.get, harvester_id)
        session = self._session(harvester_id, "discover-harvestable-resources")
        self._write(harvesters.session_progress, session, status="on-going")
        status, message = "finished-all-ok", ""
        try:
            with http.client() as client:
                seen = self._offer_all(row, client, session)
            gone = self.db.write_sync(harvesters.withdraw, harvester_id, seen)
            removed = 0
            if row["delete_orphan_resources_automatically"]:
                for item in gone:
                    if item["resource_id"] is not None:
                        storing.remove(self.db, self.folders, item["resource_id"])
                        removed += 1
            message = f"{len(seen)} offered, {len(gone)} no longer offered" + (f", {removed} removed" if removed else "")
            self.db.write_sync(harvesters.record_availability, harvester_id, True)
        except Aborted:
            status, message = "aborted", "Aborted."
        except HarvestError as exc:
            status, message = "finished-all-failed", str(exc)
            self.db.write_sync(harvesters.record_availability, harvester_id, False)
            self._write(harvesters.session_progress, session, detail=message)
        except Exception as exc:
            status, message = "finished-all-failed", f"The refresh failed: {exc}"
            self._write(harvesters.session_progress, session, detail=message)
            raise
        finally:
            self.db.write_sync(harvesters.record_refresh, harvester_id, message)
            self.db.write_sync(harvesters.end_session, session, status)
        return status, message

    def _offer_all(self, row: Any, client, session: int) -> set[str]:
        worker = self._worker(row, client)
        seen: set[str] = set()
        batch: list[dict[str, Any]] = []

        def flush() -> None:
            if batch:
                self.db.write_sync(harvesters.offer, row["id"], list(batch), bool(row["harvest_new_resources_by_default"]))
                self._write(harvesters.session_progress, session, total=len(seen), done=len(batch))
                batch.clear()
                self._keep_going(row["id"])

        for item in worker.offered():
            if not isinstance(item, RemoteItem) or item.unique_identifier in seen:
                continue
            seen.add(item.unique_identifier)
            batch.append(msgspec.to_builtins(item))
            if len(batch) >= OFFER_BATCH:
                flush()
        flush()
        return seen

    def _session(self, harvester_id: int, kind: str) -> int:
        def open_or_start(conn) -> int:
            found = harvesters.open_session(conn, harvester_id, kind)
            return found["id"] if found is not None else harvesters.start_session(conn, harvester_id, kind)
        return self.db.write_sync(open_or_start)

    def _harvest(self, harvester_id: int) -> None:
        """A session that harvests the chosen records (after a refresh of what the remote
        offers, which finds changed and withdrawn records); a record whose remote date has not
        changed since it was harvested is left as it is."""
        from catalogue_app.harvesting import http

        row = self.db.read_sync(harvesters.get, harvester_id)
        resumed = self.db.read_sync(harvesters.open_session, harvester_id, "harvesting")
        self.db.write_sync(harvesters.record_harvest, harvester_id)  # first: a failed run is not due again at once
        refreshed, message = self._refresh(harvester_id) if resumed is None else ("finished-all-ok", "")
        session = self._session(harvester_id, "harvesting")
        if refreshed != "finished-all-ok":
            self._write(harvesters.session_progress, session, detail=message)
            self.db.write_sync(harvesters.end_session, session,
                               "aborted" if refreshed == "aborted" else "finished-all-failed")
            return
        started = self.db.read_sync(harvesters.session, session)["started"]
        todo = self.db.read_sync(harvesters.to_harvest, harvester_id, started)
        done_before = self.db.read_sync(harvesters.session, session)["records_done"]
        self._write(harvesters.session_progress, session, status="on-going", total=done_before + len(todo))
        status = "finished-all-ok"
        try:
            with http.client() as client:
                worker = self._worker(row, client)
                for item in todo:
                    self._keep_going(harvester_id)
                    self._harvest_one(worker, client, row, item, session)
        except Aborted:
            status = "aborted"
        else:
            counts = self.db.read_sync(harvesters.session, session)
            if counts["records_failed"]:
                status = "finished-some-failed" if counts["records_done"] else "finished-all-failed"
        self.db.write_sync(harvesters.end_session, session, status)

    def _harvest_one(self, worker, client, harvester: Any, item: Any, session: int) -> bool:
        from catalogue_app.harvesting import storing

        self.db.write_sync(harvesters.set_item_status, item["id"], "harvesting-resource")
        unchanged = (item["resource_id"] is not None and item["last_harvesting_succeeded"]
                     and item["remote_last_updated"] and item["remote_last_updated"] == item["harvested_remote_date"]
                     and self.db.read_sync(_exists, item["resource_id"]))
        try:
            if unchanged:
                rid = item["resource_id"]
            else:
                remote_item = RemoteItem(unique_identifier=item["unique_identifier"], title=item["title"],
                                         resource_type=item["remote_resource_type"] or "dataset",
                                         last_updated=item["remote_last_updated"], url=item["remote_url"])
                rid = storing.store(self.db, self.folders, client, harvester, item, worker.harvest(remote_item))
        except Exception as exc:  # the record's failure: kept with its message, the session goes on
            message = str(exc) if isinstance(exc, HarvestError) else f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, HarvestError):
                log.exception("harvester %s: %s failed", harvester["id"], item["unique_identifier"])
            self.db.write_sync(harvesters.harvested, item["id"], None, False, message[:2000])
            self._write(harvesters.session_progress, session, failed=1,
                               detail=f"{item['unique_identifier']}: {message[:500]}")
            return False
        self.db.write_sync(harvesters.harvested, item["id"], rid, True, "")
        self._write(harvesters.session_progress, session, done=1)
        return True


def _exists(conn, rid: int) -> bool:
    from catalogue_app.store import resources

    return resources.exists(conn, rid)

