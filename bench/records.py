"""The OGC API - Records benchmark (issue 32) and the facet engine's (issues 32 and 33).

A catalogue of ``--resources`` made-up resources (`catalogue seed`, 100,000 by default), the
users and groups the resource benchmarks use. Measured in one run, side by side:

(a) A Records items page of 10 (``/ogcapi/collections/metadata:main/items?limit=10``) against
    ``/api/v2/resources/?page_size=10``, with wrk, anonymous and as a member of three groups,
    in turns (ROUNDS runs of each; the best of each is shown).
    Target: the Records page at 80% or more of the resource page's req/s.
(b) Distinct text searches and extents (no answer repeated, so nothing kept helps), one request
    after another, on both: p50 and p99.
(c) The facet engine (store/facets.py) alone, in this process, on the same database: every
    count worked out afresh (nothing kept), with no search and with ``search=river``, as an
    anonymous caller and as the member. Target: < 50 ms p50. Then ``facets=true`` over HTTP with
    distinct searches.

The machine is shared: compare the figures of one run with each other.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import httpx

from bench.__main__ import (MEMBER, distinct_queries, latency, print_table, seed_groups, seed_resources, seed_users,
                            start_server, wrk)

ITEMS = "/ogcapi/collections/metadata:main/items"
ROUNDS = 3  # runs of each page in turn


def facet_engine(data: Path, rounds: int = 15) -> list[tuple[str, int, dict[str, float]]]:
    """p50/p99 of store/facets.py working out every count afresh (its kept values emptied)."""
    from catalogue_app.config import load_settings
    from catalogue_app.store import db, facets, resources
    from catalogue_app.store.filters import ListSpec
    from catalogue_app.store.resources import ResourceQuery

    settings = load_settings(environ={}, data_dir=data)
    owner = db.Database(settings.database_path)
    rows = []
    try:
        member = owner.read_sync(lambda conn: resources.viewer_of(
            conn, conn.execute("SELECT id FROM users WHERE username = ?", (MEMBER,)).fetchone()[0]))
        cases = [("no search", ResourceQuery()),
                 ("search=river", ResourceQuery(spec=ListSpec(search_terms=["river"], search_fields=["title", "abstract"])))]
        for who, viewer in (("anonymous", resources.ANONYMOUS), ("member of 3 groups", member)):
            for name, query in cases:
                times = []
                for _ in range(rounds):
                    started = time.perf_counter()
                    owner.read_sync(lambda conn: (db.kept(conn).clear(), facets._count(conn, viewer, query, facets.FACETS)))
                    times.append((time.perf_counter() - started) * 1000)
                times.sort()
                rows.append((f"facet engine, {name}, {who} (afresh)", 0,
                             {"rps": 0, "p50": statistics.median(times), "p99": times[-1], "errors": 0}))
    finally:
        owner.close()
    return rows


def records_benchmarks(args) -> None:
    rows: list[tuple[str, int, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        seed_users(data, 100)
        member = seed_groups(data)
        rate = seed_resources(data, args.resources)
        print(f"seeded {args.resources:,} resources at {rate:,.0f}/s", flush=True)
        n = f"[{args.resources:,}]"
        proc, url = start_server(data, args.resource_workers)
        try:
            pairs = []
            for who, header in (("anonymous", "X-Bench: 1"), ("member of 3 groups", f"Authorization: {member}")):
                # in turns, the best of each kept: the machine is shared, and a run can meet a busy spell
                runs: dict[str, list[dict[str, float]]] = {"page": [], "records": []}
                for _ in range(ROUNDS):
                    runs["page"].append(wrk(f"{url}/api/v2/resources/?page_size=10", header, args.connections,
                                            args.seconds))
                    runs["records"].append(wrk(f"{url}{ITEMS}?limit=10", header, args.connections, args.seconds))
                page, records = (max(runs[k], key=lambda r: r["rps"]) for k in ("page", "records"))
                rows.append((f"/api/v2/resources/?page_size=10, {who} {n}", args.resource_workers, page))
                share = records["rps"] / page["rps"] if page["rps"] else 0.0
                rows.append((f"Records items limit=10, {who} ({share:.0%}) {n}", args.resource_workers, records))
                pairs.append((who, share))
            facets = wrk(f"{url}{ITEMS}?limit=10&facets=true", "X-Bench: 1", args.connections, args.seconds)
            rows.append((f"Records items limit=10&facets=true, anonymous {n}", args.resource_workers, facets))
            searches, extents = distinct_queries(100)
            as_records = [s.replace("/api/v2/resources/?search=", f"{ITEMS}?q=").replace(
                "&search_fields=title&search_fields=abstract", "").replace("&page=", "&limit=10&page=") for s in searches]
            as_records = [_page_to_offset(s) for s in as_records]
            boxes = [e.replace("/api/v2/resources/?extent=", f"{ITEMS}?bbox=") for e in extents]
            for name, paths in (("resources: search, distinct terms", searches),
                                ("records: q, distinct terms", as_records),
                                ("resources: extent, distinct boxes", extents),
                                ("records: bbox, distinct boxes", boxes),
                                ("records: q + facets=true, distinct terms",
                                 [p + "&facets=true" for p in as_records])):
                r = latency(url, paths, "")
                rows.append((f"{name}, sequential {n}", args.resource_workers, {"rps": 0, **r, "errors": 0}))
            r = latency(url, [f"{ITEMS}?q={quote(t)}&facets=true" for t in ("river", "forest", "soil")], member)
            rows.append((f"records: q + facets=true, member {n}", args.resource_workers, {"rps": 0, **r, "errors": 0}))
            check = httpx.get(f"{url}{ITEMS}", params={"limit": 1, "facets": "true"}).json()
            print(f"numberMatched {check['numberMatched']:,}; facets: "
                  + ", ".join(f"{k} {len(v['buckets'])}" for k, v in check["facets"].items()), flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        rows += facet_engine(data)
    print_table(rows, [])
    for who, share in pairs:
        print(f"Records items page of 10 / resources page of 10, {who}: {share:.0%} (target >= 80%)")


def _page_to_offset(path: str) -> str:
    """``page=N`` (of 10) as ``offset``."""
    head, _, page = path.rpartition("&page=")
    return f"{head}&offset={(int(page) - 1) * 10}" if head else path
