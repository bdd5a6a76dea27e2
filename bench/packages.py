"""The field packages benchmark (issue 31): export and import against pyogrio, memory, and a clip.

A catalogue of RESOURCES resources: DATASETS vector datasets of FEATURES polygons each (real
datasets: GeoPackages written with pyogrio and imported with ``catalogue importlayers``, as an
upload would), the rest made up by ``catalogue seed`` (documents, maps, geostories). Measured in
one run, on the same files:

(a) ``catalogue package export -o FILE`` of everything, against the time pyogrio needs to copy
    the same layers (the datasets' working GeoPackages) into one GeoPackage. Target: < 2 x.
(b) ``catalogue package import FILE`` into a fresh catalogue, against the same pyogrio time.
    Target: < 2 x.
(c) The peak resident memory of the export process (and of the import's, for comparison).
    Target: < 300 MB.
(d) A server worker's resident memory before and after an export of everything over HTTP
    (``POST /api/v2/packages/exports``, then the download), and its peak. Target: grows < 300 MB.
(e) An export of a country-sized area (France's box), clipped and not: the resources it selects,
    its time and the features it wrote; and the clip alone (geo/package_data.clip_vector on the
    same layers) against pyogrio reading them with that bounding box (the floor of a
    bounding-box read) and whole. At 10,000 features a layer a clip's fixed cost (a new
    GeoPackage, its extent) weighs as much as the read, so the same is measured on one layer of
    LARGE polygons. Targets: no more features than the box holds; the large layer's clip in less
    than a third of the time of reading it whole (a clip that read every feature could not be).

The machine is shared: compare figures of one run with each other.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

import httpx
import numpy as np

from bench.__main__ import PASSWORD, seed_users, start_server
from bench.probe import run_catalogue
from bench.uploads import peak_mb, reset_peak, server_pids, status_mb
from catalogue_app.config import load_settings

RESOURCES = 1_000
DATASETS = 100
FEATURES = 10_000
LARGE = 200_000  # polygons of the one large layer whose clip shows that its cost follows what is inside
COUNTRY = (-5.2, 42.3, 8.3, 51.1)  # France's bounding box (metropolitan), about 13 x 9 degrees


def make_layer(path: Path, count: int, seed: int) -> Path:
    """``count`` hexagons of 0.02 to 0.2 degrees at random places between 70 S and 70 N, with
    three attributes."""
    import pyogrio.raw
    import shapely

    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-179.0, 179.0, count), rng.uniform(-70.0, 70.0, count)
    r = rng.uniform(0.01, 0.1, count)
    angles = np.linspace(0, 2 * np.pi, 7)
    rings = np.stack([x[:, None] + r[:, None] * np.cos(angles), y[:, None] + r[:, None] * np.sin(angles)], axis=-1)
    fields = [np.arange(count, dtype=np.int64), np.round(r * 1000, 1),
              np.array([f"parcel {seed}-{i}" for i in range(count)], dtype=object)]
    pyogrio.raw.write(path, shapely.to_wkb(shapely.polygons(rings)), fields, ["code", "size", "label"],
                      driver="GPKG", crs="EPSG:4326", geometry_type="Polygon", layer=path.stem)
    return path


def cli(data: Path, *args: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """``catalogue ARGS`` on a data folder: (seconds, peak resident MB of the process, result)."""
    started = time.perf_counter()
    done, peak = run_catalogue([*args, "--data-dir", str(data)], {**os.environ, "CATALOGUE_ADMIN_PASSWORD": PASSWORD})
    return time.perf_counter() - started, peak / 2**20, done


def working_copies(data: Path) -> list[Path]:
    """The datasets' working GeoPackages, as the catalogue keeps them."""
    import sqlite3

    settings = load_settings(environ={}, data_dir=data)
    conn = sqlite3.connect(settings.database_path)
    try:
        folders = [row[0] for row in conn.execute("SELECT folder FROM datasets WHERE folder IS NOT NULL")]
    finally:
        conn.close()
    found = []
    for folder in folders:
        path = Path(folder) if Path(folder).is_absolute() else data / "files" / folder
        found += sorted(p for p in path.glob("*.gpkg"))[:1]
    return found


def pyogrio_copy(layers: list[Path], target: Path) -> float:
    """Seconds pyogrio takes to copy every layer into one GeoPackage (a layer each, with its
    spatial index, as the catalogue's working copies have), through numpy arrays."""
    import pyogrio.raw

    target.unlink(missing_ok=True)
    started = time.perf_counter()
    for i, source in enumerate(layers):
        meta, _, geometry, fields = pyogrio.raw.read(source)
        pyogrio.raw.write(target, geometry, fields, list(meta["fields"]), layer=f"layer_{i:03d}", driver="GPKG",
                          append=target.exists(), crs=meta["crs"], geometry_type=meta["geometry_type"],
                          encoding="UTF-8")
    return time.perf_counter() - started


def pyogrio_reads(layers: list[Path], bbox: tuple | None) -> tuple[float, int]:
    """Seconds and features of reading every layer (within ``bbox``: GDAL's spatial index)."""
    import pyogrio.raw

    started, count = time.perf_counter(), 0
    for source in layers:
        count += len(pyogrio.raw.read(source, bbox=bbox, return_fids=True)[1])
    return time.perf_counter() - started, count


def clip_layers(layers: list[Path], work: Path) -> float:
    """Seconds the export's clip takes for every layer, to France's box, in this process."""
    from catalogue_app.geo import package_data

    started = time.perf_counter()
    for i, source in enumerate(layers):
        target = work / f"clip-{i}.gpkg"
        package_data.clip_vector(source, target, COUNTRY)
        target.unlink()
    return time.perf_counter() - started


def features_in(package: Path, work: Path) -> tuple[int, int]:
    """(GeoPackages, features) in a package file."""
    import pyogrio

    gpkgs = features = 0
    with zipfile.ZipFile(package) as z:
        for name in z.namelist():
            if name.endswith(".gpkg") and "/data/" in name:
                target = work / "probe.gpkg"
                with z.open(name) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
                gpkgs += 1
                features += sum(int(pyogrio.read_info(target, layer=layer)["features"])
                                for layer, _ in pyogrio.list_layers(target))
                target.unlink()
    return gpkgs, features


def http_export(url: str, pids: list[int], target: Path) -> dict:
    """An export of everything over HTTP, as the web UI starts it, downloaded to ``target``:
    the worker's memory before and after, its peak, and the seconds."""
    with httpx.Client(base_url=url, auth=("admin", PASSWORD), timeout=600) as client:
        def run(body: dict) -> tuple[float, dict]:
            started = time.perf_counter()
            r = client.post("/api/v2/packages/exports", json=body)
            if r.status_code != 201:
                raise SystemExit(f"export: {r.status_code} {r.text[:300]}")
            status_url = r.json()["status_url"]
            while (status := client.get(status_url).json())["status"] in ("ready", "running"):
                time.sleep(0.2)
            if status["status"] != "finished":
                raise SystemExit(f"export: {status}")
            with client.stream("GET", status["output_params"]["download_url"]) as r, open(target, "wb") as out:
                for chunk in r.iter_bytes(1 << 20):
                    out.write(chunk)
            return time.perf_counter() - started, status

        run({"q": "", "ids": [], "clip": False, "types": ["document"]})  # the libraries loaded, as in use
        time.sleep(1)
        before = status_mb(pids, "VmRSS")
        reset_peak(pids)
        took, _ = run({"clip": False})
        time.sleep(1)
        return {"before": before, "after": status_mb(pids, "VmRSS"), "peak": peak_mb(pids), "seconds": took,
                "size": target.stat().st_size}


def build(tmp: Path, resources: int, datasets: int, features: int) -> Path:
    """The office catalogue: made-up resources, then the real datasets."""
    from catalogue_app.seeding.resources import seed

    sources = tmp / "layers"
    sources.mkdir()
    started = time.perf_counter()
    first = make_layer(sources / "parcels_000.gpkg", features, 0)
    for i in range(1, datasets):  # the same features under other names: a dataset each
        shutil.copyfile(first, sources / f"parcels_{i:03d}.gpkg")
    print(f"wrote {datasets} GeoPackages of {features:,} polygons in {time.perf_counter() - started:.1f} s", flush=True)
    data = tmp / "office"
    seed_users(data, 1)
    settings = load_settings(environ={}, data_dir=data)
    seed(settings.database_path, resources - datasets, scratch=settings.tmp_dir, types=("document", "map", "geostory"))
    started = time.perf_counter()
    took, _, done = cli(data, "importlayers", "--user", "admin", str(sources))
    if done.returncode != 0:
        raise SystemExit(f"importlayers: {(done.stdout + done.stderr)[-2000:]}")
    print(f"seeded {resources - datasets:,} resources; imported {datasets} datasets in {took:.1f} s", flush=True)
    return data


def packages_benchmarks(args) -> list[tuple[str, str, str, str]]:
    resources = getattr(args, "package_resources", RESOURCES)
    datasets = getattr(args, "package_datasets", DATASETS)
    features = getattr(args, "package_features", FEATURES)
    os.environ["CATALOGUE_THUMBNAIL_QUIET"] = "3600"
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        data = build(tmp, resources, datasets, features)
        layers = working_copies(data)
        copy = pyogrio_copy(layers, tmp / "copy.gpkg")
        print(f"pyogrio copies the {len(layers)} layers into one GeoPackage in {copy:.1f} s", flush=True)

        exported, export_peak, done = cli(data, "package", "export", "--user", "admin", "-o", str(tmp / "all.zip"))
        if done.returncode != 0:
            rows.append(("(a) export: FAILED", (done.stdout + done.stderr).strip()[-300:], "", "NO"))
        else:
            size = (tmp / "all.zip").stat().st_size
            with zipfile.ZipFile(tmp / "all.zip") as z:
                manifest = json.loads(z.read("manifest.json"))
            carried = sum(1 for r in manifest["resources"] if r["data"] in ("whole", "clipped"))
            print(f"the package holds {len(manifest['resources']):,} resources ({carried} with their data),"
                  f" {len(manifest['left_out'])} left out", flush=True)
            rows.append((f"(a) export {resources:,} resources, {datasets} x {features:,} polygons ({size / 1e6:.0f} MB)",
                         f"{exported:.1f} s = {exported / copy:.2f} x pyogrio's {copy:.1f} s", "< 2 x",
                         "yes" if exported < 2 * copy else "NO"))
            rows.append(("(c) peak resident memory of `catalogue package export`", f"{export_peak:.0f} MB", "< 300 MB",
                         "yes" if export_peak < 300 else "NO"))
            fresh = tmp / "field"
            seed_users(fresh, 1)
            imported, import_peak, done = cli(fresh, "package", "import", str(tmp / "all.zip"), "--user", "admin",
                                              "--json")
            try:
                report = json.loads(done.stdout[done.stdout.index("{"):])
                print("the import: " + ", ".join(f"{len(v)} {k}" for k, v in report.items()
                                                 if isinstance(v, list) and v and k != "notes"), flush=True)
            except ValueError:
                pass
            if done.returncode != 0:
                rows.append(("(b) import: FAILED", (done.stdout + done.stderr).strip()[-300:], "", "NO"))
            else:
                rows.append(("(b) import it into a fresh catalogue",
                             f"{imported:.1f} s = {imported / copy:.2f} x pyogrio's {copy:.1f} s", "< 2 x",
                             "yes" if imported < 2 * copy else "NO"))
                rows.append(("    peak resident memory of `catalogue package import`", f"{import_peak:.0f} MB", "", ""))

        bbox = ",".join(map(str, COUNTRY))
        clipped, _, done = cli(data, "package", "export", "--user", "admin", f"--bbox={bbox}", "--clip",
                               "-o", str(tmp / "country.zip"))
        unclipped, _, same = cli(data, "package", "export", "--user", "admin", f"--bbox={bbox}",
                                 "-o", str(tmp / "country-whole.zip"))
        floor, inside = pyogrio_reads(layers, COUNTRY)
        whole_read, total = pyogrio_reads(layers, None)
        clip_alone = clip_layers(layers, tmp)
        if done.returncode != 0:
            rows.append(("(e) clipped export: FAILED", (done.stdout + done.stderr).strip()[-300:], "", "NO"))
        else:
            gpkgs, written = features_in(tmp / "country.zip", tmp)
            with zipfile.ZipFile(tmp / "country.zip") as z:
                selected = len(json.loads(z.read("manifest.json"))["resources"])
            rows.append((f"(e) export of France's box, clipped: {selected} resources, {written:,} of {total:,} features",
                         f"{clipped:.1f} s (unclipped {unclipped:.1f} s{'' if same.returncode == 0 else ' FAILED'})",
                         "", ""))
            rows.append((f"    the clip alone (geo/package_data.clip_vector) of the {len(layers)} layers",
                         f"{clip_alone:.2f} s (pyogrio: box {floor:.2f} s, whole {whole_read:.2f} s)",
                         "no more features", "yes" if written <= inside else "NO"))
        large = make_layer(tmp / "large.gpkg", LARGE, 9)
        from catalogue_app.geo import package_data

        started = time.perf_counter()
        kept = package_data.clip_vector(large, tmp / "large-clip.gpkg", COUNTRY)
        clip_large = time.perf_counter() - started
        box_large, _ = pyogrio_reads([large], COUNTRY)
        whole_large, _ = pyogrio_reads([large], None)
        rows.append((f"    the clip of one layer of {LARGE:,} polygons ({kept:,} inside)",
                     f"{clip_large:.2f} s (pyogrio: box {box_large:.2f} s, whole {whole_large:.2f} s)",
                     "< 1/3 whole read", "yes" if clip_large < whole_large / 3 else "NO"))

        proc, url = start_server(data, 1)
        try:
            memory = http_export(url, server_pids(proc.pid), tmp / "http.zip")
            growth = memory["after"] - memory["before"]
            rows.append(("(d) server worker during an HTTP export of everything",
                         f"{memory['before']:.0f} -> {memory['after']:.0f} MB (peak {memory['peak']:.0f}),"
                         f" {memory['seconds']:.1f} s", "grows < 300 MB",
                         "yes" if growth < 300 and memory["peak"] - memory["before"] < 300 else "NO"))
        except SystemExit as exc:
            rows.append(("(d) HTTP export: FAILED", str(exc)[:300], "", "NO"))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"\n{'packages benchmark (one run, shared machine)':<78} {'measured':<48} {'target':<18} {'met'}")
    for name, measured, target, met in rows:
        print(f"{name:<78} {measured:<48} {target:<18} {met}")
    return rows
