"""History is bounded: 1,000 edits of 10 features each on a 100,000-feature layer cost far less
than the dataset's own size on disk (the issue asks for less than twice it, history included)."""

from __future__ import annotations

import sqlite3
import uuid

import numpy as np
import pyogrio.raw
import shapely

from catalogue_app.geo import gpkg_edit
from catalogue_app.geo.gpkg_edit import Delete, Insert, Reserved, Update

N = 100_000


def _layer(path) -> None:
    rng = np.random.default_rng(7)
    xs, ys = rng.uniform(-180, 180, N), rng.uniform(-80, 80, N)
    fields = {"name": np.array([f"feature {i}" for i in range(N)], dtype=object),
              "kind": np.array([("a", "b", "c", "d")[i % 4] for i in range(N)], dtype=object),
              "n": np.arange(N, dtype=np.int64), "value": rng.uniform(0, 1000, N),
              "flag": np.arange(N) % 2 == 0}
    pyogrio.raw.write(path, shapely.to_wkb(shapely.points(xs, ys)), list(fields.values()), list(fields), layer="big",
                      driver="GPKG", geometry_type="Point", crs="EPSG:4326")


def test_a_thousand_edits_of_ten_features_cost_less_than_the_data(tmp_path):
    path = tmp_path / "big.gpkg"
    _layer(path)
    size = path.stat().st_size
    numbers = iter(range(1, 10_000))
    rng = np.random.default_rng(11)
    for i in range(1000):
        fids = [int(f) for f in rng.choice(np.arange(1, N - 1000), 10, replace=False)]
        if i % 10 == 9:     # now and then inserts and deletes too
            changes = [Insert({"name": f"new {i}", "n": i}, shapely.Point(i / 10, 1)), Delete(N - i),
                       *(Update(f, {"value": float(i)}) for f in fids[:8])]
        elif i % 3 == 0:    # moves
            changes = [Update(f, {"kind": "moved"}, shapely.Point(i / 100, f / N), True) for f in fids]
        else:               # attribute changes
            changes = [Update(f, {"value": float(i), "name": f"changed {i}"}) for f in fids]
        gpkg_edit.apply(path, changes, reserve=lambda: Reserved(next(numbers), str(uuid.uuid4()), "now"), via="api")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert gpkg_edit.applied(path)[0] == 1000
    history = path.stat().st_size - size
    assert history < 0.5 * size, (history, size)
    assert path.stat().st_size < 2 * size
