"""The shape of every runner of background work (execution requests, harvesting, management
jobs): one per server process, with the database and the folders; at start it resolves what a
stopped process left (``recover``), then a thread looks for work (``look``) at once, every few
seconds, and whenever it is woken, and hands what it finds to a small pool of threads."""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from catalogue_app.jobs.folders import Folders
from catalogue_app.store.db import Database

log = logging.getLogger("catalogue")


class Ticker:
    """Subclasses define ``look()``, which submits work to ``self.pool``, and may define
    ``recover()``. A tick of 0 seconds: the runner is not started (``runs`` is false)."""

    name = "ticker"

    def __init__(self, db: Database, folders: Folders, tick_seconds: float, workers: int):
        self.db = db
        self.folders = folders
        self.pid = os.getpid()
        self.tick = tick_seconds
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=self.name)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def runs(self) -> bool:
        """Whether this process runs this kind of work (a tick of 0: tests, a read replica)."""
        return self.tick > 0

    def start(self) -> None:
        self.recover()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def recover(self) -> None:
        """What processes that are gone left half done, resolved before the first look."""

    def wake(self) -> None:
        """Look at once (work was asked for through the API)."""
        self._wake.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def close(self) -> None:
        """Stop looking; let the work under way end (it sees ``stopping``)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.pool.shutdown(wait=True, cancel_futures=True)

    def look(self) -> None:
        raise NotImplementedError

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.look()
            except Exception:  # the database failed: look again at the next tick
                log.exception("%s: could not look for work", self.name)
            self._wake.wait(self.tick)
            self._wake.clear()
