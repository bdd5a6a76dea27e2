"""A thread that looks for work every few seconds, or at once when woken, and hands what it
finds to a small pool: the shape of the harvesting and management-job runners."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger("catalogue")


class Ticker:
    """Subclasses define ``look()``, which submits work to ``self.pool``."""

    name = "ticker"

    def __init__(self, tick_seconds: float, workers: int):
        self.tick = tick_seconds
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=self.name)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

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
