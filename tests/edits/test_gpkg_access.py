"""geo/gpkg_access.py: in one process, GDAL's opens of a GeoPackage and Python SQLite's
connections to it take turns (any number of one kind, never both); a waiting kind holds back
new holders of the other, and a thread may take its own turn again."""

from __future__ import annotations

import threading
import time

import pytest

from catalogue_app.geo import gpkg_access


def test_the_two_kinds_never_overlap_and_a_waiting_edit_is_not_starved(tmp_path):
    path = tmp_path / "data.gpkg"
    inside = {"gdal": 0, "sqlite": 0}
    seen = []
    lock = threading.Lock()
    stop = time.monotonic() + 1.0

    def hold(kind: str, seconds: float) -> None:
        with gpkg_access.holding(path, kind):
            with lock:
                inside[kind] += 1
                seen.append(dict(inside))
            time.sleep(seconds)
            with lock:
                inside[kind] -= 1

    def reader() -> None:  # map reads, one after another, overlapping each other
        while time.monotonic() < stop:
            hold(gpkg_access.GDAL, 0.01)

    readers = [threading.Thread(target=reader) for _ in range(4)]
    [t.start() for t in readers]
    time.sleep(0.05)
    started = time.monotonic()
    hold(gpkg_access.SQLITE, 0.01)  # an edit gets its turn although reads never stop
    waited = time.monotonic() - started
    [t.join() for t in readers]
    assert waited < 0.5, waited
    assert all(not (s["gdal"] and s["sqlite"]) for s in seen)
    assert any(s["gdal"] > 1 for s in seen)  # reads share their turn


def test_a_thread_takes_its_turn_again_but_not_the_other_kind(tmp_path):
    path = tmp_path / "data.gpkg"
    with gpkg_access.gdal(path):
        with gpkg_access.gdal(path):
            pass
        with pytest.raises(RuntimeError):
            with gpkg_access.sqlite(path):
                pass
    with gpkg_access.sqlite(path):  # all given back
        pass
