"""The upload benchmark: a 100 MB Shapefile from POST /api/v2/uploads/upload to a finished dataset.

One Shapefile of made-up parcels (polygons of 15 to 40 vertices over France, an integer, a
float, a text and a date column) is written once per run. Its baseline is pyogrio reading it and
writing a GeoPackage with a spatial index (what the import makes), both through numpy arrays
(pyogrio.raw.read + write) and through Arrow (open_arrow + write_arrow); the faster is the
baseline. Then a real server, once with 10 datasets in the catalogue and once with 100,000,
takes ``--uploads`` uploads one after another (HTTP Basic as admin, the files streamed from
disk), each timed until its execution request says ``finished``, and split into the time until
the 201 answer (transfer and checks) and the import job after it. The server's peak resident
memory during each upload is read from /proc (VmHWM, reset before each upload). Each run
starts after os.sync(): the catalogue fsyncs what it stores (pyogrio alone does not), and the
previous run's pending writes would otherwise slow those fsyncs down.

Targets: at most 1.5 times pyogrio, and no growth with the size of the catalogue.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from bench.__main__ import PASSWORD, seed_users, start_server
from catalogue_app.config import load_settings
from catalogue_app.store import db

FEATURES = 160_000  # about 100 MB of .shp + .dbf + .shx
PARTS = {"base_file": ".shp", "dbf_file": ".dbf", "shx_file": ".shx", "prj_file": ".prj", "cpg_file": ".cpg"}
WORDS = ["parcel", "north", "meadow", "vineyard", "forest", "river", "orchard", "pasture", "hill", "marsh",
         "commune", "lot", "east", "field", "sainte", "grange"]


def make_shapefile(folder: Path, count: int = FEATURES, seed: int = 7) -> Path:
    """Write ``count`` star-shaped (hence valid) parcels, 1 to 30 km wide, over France."""
    import pyogrio.raw
    import shapely

    rng = np.random.default_rng(seed)
    vertices = rng.integers(15, 41, count)
    total = int(vertices.sum())
    owner = np.repeat(np.arange(count), vertices)
    nth = np.arange(total) - np.repeat(np.cumsum(vertices) - vertices, vertices)
    angle = (nth + rng.uniform(0, 0.8, total)) / vertices[owner] * 2 * np.pi
    cx, cy, size = rng.uniform(-4.5, 7.5, count), rng.uniform(43, 50.5, count), rng.uniform(0.005, 0.15, count)
    radius = size[owner] * rng.uniform(0.6, 1.0, total)
    x = cx[owner] + radius * np.cos(angle) / np.cos(np.radians(cy[owner]))
    y = cy[owner] + radius * np.sin(angle)
    polygons = shapely.polygons(shapely.linearrings(x, y, indices=owner))
    words = np.array(WORDS)[rng.integers(0, len(WORDS), (count, 8))]
    labels = np.array([" ".join(w)[:n] for w, n in zip(words.tolist(), rng.integers(20, 41, count).tolist())],
                      dtype=object)
    fields = [np.arange(1, count + 1, dtype=np.int64), rng.uniform(50, 5e6, count), labels,
              np.datetime64("1990-01-01") + rng.integers(0, 12_000, count).astype("timedelta64[D]")]
    path = folder / "parcels.shp"
    pyogrio.raw.write(path, shapely.to_wkb(polygons), fields, ["parcel_id", "area_m2", "label", "surveyed"],
                      driver="ESRI Shapefile", geometry_type="Polygon", crs="EPSG:4326", encoding="UTF-8")
    return path


def pyogrio_numpy(shp: Path, target: Path) -> None:
    import pyogrio.raw

    meta, _fids, geometry, fields = pyogrio.raw.read(shp)
    pyogrio.raw.write(target, geometry, fields, meta["fields"], driver="GPKG", geometry_type=meta["geometry_type"],
                      crs=meta["crs"], layer_options={"SPATIAL_INDEX": "YES"})


def pyogrio_arrow(shp: Path, target: Path) -> None:
    import pyogrio.raw

    with pyogrio.raw.open_arrow(shp, use_pyarrow=False) as (meta, stream):
        pyogrio.raw.write_arrow(stream, target, driver="GPKG", geometry_name=meta["geometry_name"] or "geom",
                                geometry_type=meta["geometry_type"], crs=meta["crs"], layer_options={"SPATIAL_INDEX": "YES"})


def timed(work, shp: Path, folder: Path, repeat: int) -> list[float]:
    times = []
    for i in range(repeat):
        target = folder / f"{work.__name__}-{i}.gpkg"
        os.sync()  # each run starts with the previous run's writes on disk, as each upload does
        started = time.perf_counter()
        work(shp, target)
        times.append(time.perf_counter() - started)
        target.unlink()
    return times


def server_pids(pid: int) -> list[int]:
    """The server process and its descendants (granian runs the app in a child process)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return found


def reset_peak(pids: list[int]) -> None:
    for p in pids:
        try:
            Path(f"/proc/{p}/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        except OSError:
            pass


def status_mb(pids: list[int], field: str) -> float:
    """The largest value of a /proc status field (VmHWM, VmRSS) among ``pids``, in MB (0 when
    /proc does not tell)."""
    largest = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    largest = max(largest, int(line.split()[1]))
        except OSError:
            pass
    return largest / 1024


def peak_mb(pids: list[int]) -> float:
    return status_mb(pids, "VmHWM")


def upload(client: httpx.Client, shp: Path) -> tuple[float, float, int]:
    """One upload of ``shp`` and its side files; (seconds to 201, seconds to finished, dataset id)."""
    handles = {field: open(shp.with_suffix(suffix), "rb") for field, suffix in PARTS.items()}
    try:
        started = time.perf_counter()
        r = client.post("/api/v2/uploads/upload", data={"dataset_title": "Bench parcels"},
                        files={field: (Path(f.name).name, f, "application/octet-stream") for field, f in handles.items()})
        submitted = time.perf_counter()
    finally:
        for f in handles.values():
            f.close()
    if r.status_code != 201:
        raise SystemExit(f"upload: {r.status_code} {r.text[:500]}")
    status_url = f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}"
    while (status := client.get(status_url).raise_for_status().json())["status"] in ("ready", "running"):
        time.sleep(0.02)
    finished = time.perf_counter()
    if status["status"] != "finished":
        raise SystemExit(f"upload: the import ended {status['status']}: {status['log']}")
    rid = status["output_params"]["resources"][0]["id"]
    detail = client.get(f"/api/v2/datasets/{rid}/")
    if detail.status_code != 200 or not detail.json()["dataset"].get("title"):
        raise SystemExit(f"dataset {rid}: {detail.status_code} {detail.text[:300]}")
    return submitted - started, finished - started, rid


def upload_case(tmp: Path, shp: Path, datasets: int, uploads: int) -> list[tuple[float, float, float]]:
    """``uploads`` uploads into a fresh catalogue of ``datasets`` datasets: (to 201, total, peak MB) each."""
    from catalogue_app.seeding.resources import seed_resources

    data = tmp / f"data-{datasets}"
    seed_users(data, 1)
    started = time.perf_counter()
    with db.transaction(load_settings(environ={}, data_dir=data).database_path) as conn:
        seed_resources(conn, datasets, types=("dataset",))
    print(f"seeded {datasets:,} datasets in {time.perf_counter() - started:.1f} s", flush=True)
    proc, url = start_server(data, 1)
    results = []
    try:
        with httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=600) as client:
            r = client.patch("/api/v2/upload-size-limits/dataset_upload_size", json={"max_size": 1024**3})
            if r.status_code != 200:
                raise SystemExit(f"size limit: {r.status_code} {r.text[:300]}")
            for _ in range(uploads):
                pids = server_pids(proc.pid)
                reset_peak(pids)
                before = peak_mb(pids)
                os.sync()  # not the previous upload's pending writes slowing this one's fsyncs
                to_201, total, rid = upload(client, shp)
                results.append((to_201, total, peak_mb(pids)))
                print(f"  [{datasets:,}] dataset {rid}: {total:.2f} s = {to_201:.2f} s to 201 + "
                      f"{total - to_201:.2f} s import; server peak RSS {results[-1][2]:,.0f} MB "
                      f"({before:,.0f} MB before)", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return results


def upload_benchmarks(args) -> None:
    """Run the whole group and print its table."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        shp = make_shapefile(tmp)
        size = sum(p.stat().st_size for p in tmp.glob("parcels.*"))
        print(f"Shapefile: {FEATURES:,} polygons, {size / 1e6:.1f} MB ({size / 2**20:.1f} MiB) in "
              f"{', '.join(p.suffix for p in sorted(tmp.glob('parcels.*')))}; "
              f"written in {time.perf_counter() - started:.1f} s", flush=True)
        numpy_times = timed(pyogrio_numpy, shp, tmp, args.uploads)
        arrow_times = timed(pyogrio_arrow, shp, tmp, args.uploads)
        baselines = {"pyogrio raw.read + raw.write (numpy)": numpy_times,
                     "pyogrio open_arrow + write_arrow": arrow_times}
        fastest = min(baselines, key=lambda k: statistics.median(baselines[k]))
        base = statistics.median(baselines[fastest])
        print(f"baseline: {fastest} (the faster), {base:.2f} s", flush=True)
        rows += [(f"{name} -> GPKG", times) for name, times in baselines.items()]
        for datasets in (10, 100_000):
            results = upload_case(tmp, shp, datasets, args.uploads)
            label = f"[{datasets:,} datasets]"
            rows += [(f"upload until finished {label}", [t for _, t, _ in results]),
                     (f"  until the 201 answer {label}", [s for s, _, _ in results]),
                     (f"  201 to finished (import job) {label}", [t - s for s, t, _ in results])]
            print(f"server peak RSS during an upload {label}: {max(m for _, _, m in results):,.0f} MB", flush=True)
    numpy_base, arrow_base = (statistics.median(t) for t in baselines.values())
    print(f"\n{'upload case (' + str(args.uploads) + ' runs each)':<58} {'s p50':>8} {'s min':>8} {'/ numpy':>8} "
          f"{'/ arrow':>8}")
    for name, times in rows:
        p50 = statistics.median(times)
        print(f"{name:<58} {p50:>8.2f} {min(times):>8.2f} {p50 / numpy_base:>8.2f} {p50 / arrow_base:>8.2f}")
    print("ratios: p50 over the p50 of pyogrio's read and write through numpy arrays, and through Arrow (the faster); "
          "targets: upload until finished <= 1.50, the same at 10 and 100,000")
