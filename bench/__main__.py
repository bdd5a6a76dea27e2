"""Run the benchmarks against a real server process and print a table.

The load generator is wrk on 127.0.0.1 (installed by `make bench`). Figures depend on the
machine and on whatever else it runs: compare runs on the same machine.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from catalogue_app.bootstrap import prepare
from catalogue_app.config import load_settings
from catalogue_app.passwords import hash_password
from catalogue_app.store import db, groups, tokens, users

PASSWORD = "bench-password-1"


def seed_users(data_dir: Path, count: int) -> str:
    """count users (the admin included) and a token for the admin; returns the token."""
    settings = load_settings(environ={"CATALOGUE_ADMIN_PASSWORD": PASSWORD}, data_dir=data_dir)
    prepare(settings)
    hashed = hash_password(PASSWORD)
    with db.transaction(settings.database_path) as conn:
        for i in range(count - 1):
            users.create(conn, {"username": f"bench{i:05d}", "email": f"bench{i:05d}@example.org",
                                "first_name": "Bench", "last_name": f"User {i}", "password": hashed})
        return tokens.issue(conn, users.by_username(conn, "admin")["id"], 86400)


GROUPS = 10  # groups made before the seed, which shares some resources to each
MEMBER = "bench00000"  # the registered user of the logged-in rows, a member of three of them


def seed_groups(data_dir: Path, count: int = GROUPS, joined: int = 3) -> str:
    """count groups, MEMBER in the first ``joined`` of them (the seed that follows shares some
    private resources to each group); returns MEMBER's Basic credentials."""
    settings = load_settings(environ={}, data_dir=data_dir)
    with db.transaction(settings.database_path) as conn:
        member = users.by_username(conn, MEMBER)["id"]
        for i in range(count):
            profile = groups.create(conn, {"title": f"Bench group {i}", "slug": f"bench-group-{i}", "access": "public"},
                                    [], None)
            if i < joined:
                group_id = groups.get(conn, profile)["group_id"]
                groups.set_role(conn, group_id, member, "member")
    return "Basic " + base64.b64encode(f"{MEMBER}:{PASSWORD}".encode()).decode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path, workers: int, log: Path | None = None, env: dict[str, str] | None = None,
                 tries: int = 300) -> tuple[subprocess.Popen, str]:
    """A server on a free port (with ``env`` added to the environment); its output goes to ``log``
    when given."""
    port = free_port()
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - the server keeps it open
    proc = subprocess.Popen([sys.executable, "-m", "catalogue_app", "serve", "--data-dir", str(data_dir),
                             "--port", str(port), "--workers", str(workers)],
                            env={**os.environ, **(env or {})},
                            stdout=out, stderr=subprocess.STDOUT if log else subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(tries):
        try:
            if httpx.get(f"{url}/api/v2/", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the server did not start")


def to_ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(url: str, header: str, connections: int, seconds: int) -> dict[str, float]:
    base = ["wrk", "-t1", f"-c{connections}", "--latency", "-H", header]
    subprocess.run(base + ["-d2s", url], capture_output=True, check=True)  # warm-up
    out = subprocess.run(base + [f"-d{seconds}s", url], capture_output=True, text=True, check=True).stdout
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}
    for pct in ("50", "99"):
        result[f"p{pct}"] = to_ms(re.search(rf"\s{pct}(?:\.000)?%\s+(\S+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result["errors"] = float(errors.group(1)) if errors else 0.0
    return result


def seed_resources(data_dir: Path, count: int) -> float:
    """Add ``count`` made-up resources with the `catalogue seed` code; returns resources per second."""
    return seed_with_cpu(data_dir, count)[0]


def seed_with_cpu(data_dir: Path, count: int) -> tuple[float, float]:
    """Add ``count`` made-up resources with the `catalogue seed` code; returns resources per
    second and the processor seconds spent (this process and the seed's worker processes)."""
    import resource

    from catalogue_app.seeding.resources import seed

    def cpu() -> float:
        return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage,
                                                          (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))

    settings = load_settings(environ={}, data_dir=data_dir)
    spent, started = cpu(), time.perf_counter()
    seed(settings.database_path, count, scratch=settings.tmp_dir)
    return count / (time.perf_counter() - started), cpu() - spent


def seed_benchmarks(args) -> None:
    """`catalogue seed` into fresh catalogues, three times: the rate, the processor time it took
    (all processes), and the rate that time allows at most with every core busy throughout."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{'seed into a fresh catalogue':<40}{'resources/s':>12}{'CPU s':>8}{'at most on ' + str(cores) + ' cores':>22}")
    for _ in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data"
            seed_users(data, 100)
            rate, spent = seed_with_cpu(data, args.resources)
            print(f"{args.resources:>40,}{rate:>12,.0f}{spent:>8.2f}{args.resources * cores / spent:>22,.0f}", flush=True)


def latency(url: str, paths: list[str], header: str) -> dict[str, float]:
    """p50/p99 of sequential requests over distinct queries (no answer is repeated, so no cache helps)."""
    times = []
    with httpx.Client(base_url=url, headers={"Authorization": header} if header else {}, timeout=60) as c:
        for path in paths:
            started = time.perf_counter()
            r = c.get(path)
            times.append((time.perf_counter() - started) * 1000)
            if r.status_code != 200:
                raise SystemExit(f"{path}: {r.status_code} {r.text[:200]}")
    times.sort()
    return {"p50": times[len(times) // 2], "p99": times[min(len(times) - 1, int(len(times) * 0.99))]}


def permission_changes(url: str, header: str, count: int) -> dict[str, float]:
    """p50/p99 of the time from a PUT of permissions to its request read back as finished
    (the status URL polled every 2 ms), one change after another on one resource."""
    times = []
    with httpx.Client(base_url=url, headers={"Authorization": header}, timeout=60) as c:
        pk = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "Bench"}).json()["resource"]["pk"]
        users = [u["pk"] for u in c.get("/api/v2/users/", params={"page_size": 50}).json()["users"]]
        for i in range(count):
            level = ("view", "edit", "none")[i % 3]
            started = time.perf_counter()
            r = c.put(f"/api/v2/resources/{pk}/permissions",
                      json={"users": [{"id": users[i % len(users)], "permissions": level}]})
            if r.status_code != 200:
                raise SystemExit(f"permissions: {r.status_code} {r.text[:200]}")
            status_url = r.json()["status_url"]
            while (status := c.get(status_url).json()["status"]) in ("ready", "running"):
                time.sleep(0.002)
            if status != "finished":
                raise SystemExit(f"permissions: the request ended {status}")
            times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {"p50": times[len(times) // 2], "p99": times[min(len(times) - 1, int(len(times) * 0.99))]}


TERMS = ["river", "flood", "forest", "soil", "road", "railway", "wetland", "glacier", "airport", "harbour",
         "school", "bridge", "landslide", "wildfire", "cadastre", "vineyard", "hospital", "population"]
PLACES = ["zürich", "são paulo", "kraków", "nairobi", "québec", "tromsø", "kyoto", "lima", "accra", "oaxaca"]
SECOND = ["map", "survey", "inventory", "plan", "atlas", "model", "census", "monitoring"]


def distinct_queries(n: int) -> tuple[list[str], list[str]]:
    """n different searches (no two alike, so no cached answer helps) and n different extents
    the size of one country.

    The searches mix what people type: one word (pages 1 to 5), a word and a place, a word and
    a kind of product, a place alone, and one in ten with a two-letter second word (the text
    index needs three letters, so those are checked row by row).
    """
    import random
    from urllib.parse import quote

    rng = random.Random(7)
    seen: set[tuple[str, int]] = set()
    searches = []
    while len(searches) < n:
        term, page, shape = rng.choice(TERMS), 1, len(searches) % 10
        if shape in (0, 1, 2):
            page = 1 + rng.randrange(5)
        elif shape in (3, 4, 5):
            term += " " + rng.choice(PLACES)
        elif shape in (6, 7):
            term += " " + rng.choice(SECOND)
        elif shape == 8:
            term = rng.choice(PLACES)
            page = 1 + rng.randrange(3)
        else:
            term += " " + chr(97 + rng.randrange(26)) + chr(97 + rng.randrange(26))
        if (term, page) in seen:
            continue
        seen.add((term, page))
        searches.append(f"/api/v2/resources/?search={quote(term)}&search_fields=title&search_fields=abstract"
                        f"&page={page}")
    extents = []
    for _ in range(n):
        x, y = rng.uniform(-170, 160), rng.uniform(-60, 60)
        extents.append(f"/api/v2/resources/?extent={x:.3f},{y:.3f},{x + 8:.3f},{y + 6:.3f}")
    return searches, extents


def distinct_keyword_queries(n: int) -> list[str]:
    """n different ``filter{keywords.name.icontains}`` queries: a piece of one of the seeded
    keyword names (2 to 6 letters, one in ten in capitals), on pages 1 to 3."""
    import random
    from urllib.parse import quote

    from catalogue_app.seeding.resources import KEYWORDS

    rng = random.Random(11)
    seen: set[tuple[str, int]] = set()
    out = []
    while len(out) < n:
        name = rng.choice(KEYWORDS)
        size = min(len(name), 2 if len(out) % 10 == 9 else 3 + rng.randrange(4))
        start = rng.randrange(len(name) - size + 1)
        term, page = name[start:start + size], 1 + rng.randrange(3)
        if rng.random() < 0.1:
            term = term.upper()
        if (term, page) in seen:
            continue
        seen.add((term, page))
        out.append(f"/api/v2/resources/?filter%7Bkeywords.name.icontains%7D={quote(term)}&page={page}")
    return out


SMALL = 1_000  # resources of the small catalogue, where a text search must cost no more than a page


def small_search_benchmark(args) -> list[tuple[str, int, dict[str, float]]]:
    """In a catalogue of SMALL resources, ``?search=river&search_fields=title`` against the
    plain page of ten, in the same run: one row, the search, named with its share of the
    page's req/s (a cheap search should run where a cheap page does, on the event loop)."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        seed_users(data, 100)
        seed_resources(data, SMALL)
        proc, url = start_server(data, args.resource_workers)
        try:
            page = wrk(f"{url}/api/v2/resources/?page_size=10", "X-Bench: 1", args.connections, args.seconds)
            search = wrk(f"{url}/api/v2/resources/?search=river&search_fields=title", "X-Bench: 1", args.connections,
                         args.seconds)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    share = search["rps"] / page["rps"] if page["rps"] else 0.0
    return [(f"search=river, title [{SMALL:,}] ({share:.0%} of its page of 10)", args.resource_workers, search)]


def resource_benchmarks(args, basic: str) -> list[tuple[str, int, dict[str, float]]]:
    rows = small_search_benchmark(args)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        seed_users(data, 100)
        member = seed_groups(data)
        rate = seed_resources(data, args.resources)
        print(f"seeded {args.resources:,} resources at {rate:,.0f}/s", flush=True)
        proc, url = start_server(data, args.resource_workers)
        try:
            # a resource that anonymous callers may see (which ids are public depends on the seed)
            detail = httpx.get(f"{url}/api/v2/resources/", params={"page_size": 1, "page": 1000}).json()["resources"][0]["pk"]
            targets = [
                ("page of 10, anonymous", "/api/v2/resources/?page_size=10", ""),
                ("page of 10, Basic auth", "/api/v2/resources/?page_size=10", basic),
                ("page of 10, Basic, a member of 3 groups", "/api/v2/resources/?page_size=10", member),
                ("detail", f"/api/v2/resources/{detail}/", ""),
                ("search=river, title+abstract", "/api/v2/resources/?search=river&search_fields=title"
                                                 "&search_fields=abstract", ""),
                ("filter{resource_type}=document", "/api/v2/resources/?filter%7Bresource_type%7D=document", ""),
                ("extent of one country (Switzerland)", "/api/v2/resources/?extent=5.96,45.82,10.49,47.81", ""),
                ("filter{keywords.name.icontains}=olog", "/api/v2/resources/?filter%7Bkeywords.name.icontains%7D=olog", ""),
            ]
            for name, path, header in targets:
                r = wrk(url + path, f"Authorization: {header}" if header else "X-Bench: 1", args.connections, args.seconds)
                rows.append((f"{name} [{args.resources:,}]", args.resource_workers, r))
            searches, extents = distinct_queries(200)
            for name, paths in (("search, distinct terms, sequential", searches), ("extent, distinct boxes, sequential", extents),
                                ("keywords icontains, distinct terms, sequential", distinct_keyword_queries(200))):
                r = latency(url, paths, "")
                rows.append((f"{name} [{args.resources:,}]", args.resource_workers, {"rps": 0, **r, "errors": 0}))
            r = permission_changes(url, basic, 200)
            rows.append((f"PUT permissions until finished [{args.resources:,}]", args.resource_workers,
                         {"rps": 0, **r, "errors": 0}))
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        if args.million:
            rate = seed_resources(data, 1_000_000 - args.resources)
            print(f"seeded {1_000_000 - args.resources:,} more resources at {rate:,.0f}/s", flush=True)
            proc, url = start_server(data, args.resource_workers)
            try:
                searches, extents = distinct_queries(200)
                for name, paths in (("search, distinct terms, sequential", searches),
                                    ("extent, distinct boxes, sequential", extents),
                                    ("keywords icontains, distinct terms, sequential", distinct_keyword_queries(200))):
                    r = latency(url, paths, "")
                    rows.append((f"{name} [1,000,000]", args.resource_workers, {"rps": 0, **r, "errors": 0}))
            finally:
                proc.terminate()
                proc.wait(timeout=20)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--resources", type=int, default=100_000)
    parser.add_argument("--resource-workers", type=int, default=2)
    parser.add_argument("--million", action="store_true", help="also search, extent and keywords at 1,000,000 resources")
    parser.add_argument("--only", choices=["users", "resources", "uploads", "ogc", "binary", "memory", "ui", "blocking", "mixed", "seed", "harvest", "edits", "packages", "features", "records", "tiles", "facets"],
                        help="run one group")
    parser.add_argument("--binary", action="append", default=[], help="(--only binary) another executable to measure")
    parser.add_argument("--harvest-records", type=int, default=2000, help="(--only harvest) resources of the remote")
    parser.add_argument("--uploads", type=int, default=3, help="uploads of the 100 MB Shapefile per catalogue size")
    parser.add_argument("--package-datasets", type=int, default=100, help="(--only packages) datasets of 10,000 features")
    args = parser.parse_args()
    if args.only == "binary":
        from bench.binary import binary_benchmarks

        binary_benchmarks(others=[Path(p) for p in args.binary])
        return
    if args.only == "memory":
        from bench.memory import memory_benchmarks

        memory_benchmarks()
        return
    if args.only == "seed":
        seed_benchmarks(args)
        return
    if args.only == "harvest":
        from bench.harvest import harvest_benchmarks

        harvest_benchmarks(args)
        return
    if args.only == "mixed":
        from bench.mixed import mixed_benchmarks

        mixed_benchmarks(args)
        return
    if args.only == "blocking":
        from bench.blocking import blocking_benchmarks

        blocking_benchmarks(args)
        return
    if args.only == "ui":
        from bench.ui import ui_benchmarks

        ui_benchmarks(args)
        return
    if args.only == "uploads":
        from bench.uploads import upload_benchmarks

        upload_benchmarks(args)
        return
    if args.only == "edits":
        from bench.edits import edits_benchmarks

        edits_benchmarks(args)
        return
    if args.only == "features":
        from bench.features import features_benchmarks

        features_benchmarks(args)
        return
    if args.only == "records":
        from bench.records import records_benchmarks

        records_benchmarks(args)
        return
    if args.only == "facets":
        from bench.facets import facets_benchmarks

        facets_benchmarks(args)
        return
    if args.only == "tiles":
        from bench.tiles import tiles_benchmarks

        tiles_benchmarks(args)
        return
    if args.only == "packages":
        from bench.packages import packages_benchmarks

        packages_benchmarks(args)
        return
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk (make bench does it)")
    basic = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    rows = []
    if args.only in ("ogc", None):
        from bench.ogc import ogc_benchmarks

        rows += ogc_benchmarks(args)
        if args.only == "ogc":
            print_table(rows, [])
            return
    if args.only != "users":
        rows += resource_benchmarks(args, basic)
    if args.only == "resources":
        print_table(rows, [])
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        token = seed_users(data, args.users)
        for workers in args.workers:
            proc, url = start_server(data, workers)
            try:
                target = f"{url}/api/v2/users/?page_size=10"
                for name, header in (("Basic", basic), ("Bearer", f"Bearer {token}")):
                    r = wrk(target, f"Authorization: {header}", args.connections, args.seconds)
                    rows.append((f"GET /api/v2/users/ (10 of {args.users}) {name}", workers, r))
            finally:
                proc.terminate()
                proc.wait(timeout=20)
    print_table(rows, args.workers)
    if args.only is None:
        from bench.binary import binary_benchmarks
        from bench.memory import memory_benchmarks
        from bench.ui import ui_benchmarks
        from bench.uploads import upload_benchmarks

        from bench.edits import edits_benchmarks
        from bench.packages import packages_benchmarks

        upload_benchmarks(args)
        edits_benchmarks(args)
        packages_benchmarks(args)
        ui_benchmarks(args)
        memory_benchmarks()
        binary_benchmarks()


def print_table(rows, user_workers) -> None:
    print(f"\n{'benchmark':<58} {'workers':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, workers, r in rows:
        rps = f"{r['rps']:>9.0f}" if r["rps"] else f"{'-':>9}"
        print(f"{name:<58} {workers:>7} {rps} {r['p50']:>8.2f} {r['p99']:>8.2f} {r['errors']:>8.0f}")
    for workers in user_workers:
        pair = [r["rps"] for name, w, r in rows if w == workers and name.startswith("GET /api/v2/users/")]
        if len(pair) == 2:
            print(f"Basic / Bearer with {workers} worker(s): {pair[0] / pair[1]:.0%}")


if __name__ == "__main__":
    main()
