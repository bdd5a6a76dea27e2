"""Does one slow read stall the other requests of its worker? Detail requests, one after another,
timed while another client runs slow searches in a loop on the same single-worker server.

The searches use a two-letter second word, which the trigram index cannot serve, so each one
reads rows one by one (tens to hundreds of milliseconds on a large catalogue). When reads run on
the event loop, every detail request waits behind the search under way; when they run on reader
threads, the loop keeps answering."""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import httpx

SECONDS = 10


def blocking_benchmarks(args) -> list[tuple[str, int, dict[str, float]]]:
    from bench.__main__ import seed_resources, seed_users, start_server

    count = 1_000_000 if args.million else args.resources
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        seed_users(data, 10)
        rate = seed_resources(data, count)
        print(f"seeded {count:,} resources at {rate:,.0f}/s", flush=True)
        proc, url = start_server(data, 1)
        try:
            quiet = _details(url, SECONDS // 2)
            stop = threading.Event()
            searches: list[float] = []
            loop = threading.Thread(target=_search_loop, args=(url, stop, searches), daemon=True)
            loop.start()
            time.sleep(0.5)
            busy = _details(url, SECONDS)
            stop.set()
            loop.join(timeout=30)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    name = f"detail, alone [{count:,}]"
    rows.append((name, 1, {"rps": 0, "p50": _pct(quiet, 50), "p99": _pct(quiet, 99), "errors": 0}))
    rows.append((f"detail, while searches loop [{count:,}]", 1,
                 {"rps": 0, "p50": _pct(busy, 50), "p99": _pct(busy, 99), "errors": 0}))
    rows.append((f"  the searches themselves [{count:,}]", 1,
                 {"rps": 0, "p50": _pct(searches, 50), "p99": _pct(searches, 99), "errors": 0}))
    print(f"\n{'benchmark':<58} {'p50 ms':>8} {'p99 ms':>8}")
    for row_name, _, r in rows:
        print(f"{row_name:<58} {r['p50']:>8.2f} {r['p99']:>8.2f}")
    return rows


def _pct(values: list[float], pct: int) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


def _details(url: str, seconds: float) -> list[float]:
    """Sequential details of resources anybody may see, for ``seconds``; their latencies."""
    times = []
    with httpx.Client(base_url=url, timeout=60) as c:
        ids = [r["pk"] for r in c.get("/api/v2/resources/", params={"page_size": 500, "exclude[]": "*",
                                                                     "include[]": "pk"}).json()["resources"]]
        deadline = time.monotonic() + seconds
        n = 0
        while time.monotonic() < deadline:
            n += 1
            pk = ids[n % len(ids)]
            started = time.perf_counter()
            r = c.get(f"/api/v2/resources/{pk}")
            times.append((time.perf_counter() - started) * 1000)
            if r.status_code != 200:
                raise SystemExit(f"detail {pk}: {r.status_code}")
    return times


def _search_loop(url: str, stop: threading.Event, times: list[float]) -> None:
    words = ["river", "flood", "forest", "road", "school", "bridge", "harbour", "wetland"]
    with httpx.Client(base_url=url, timeout=120) as c:
        n = 0
        while not stop.is_set():
            n += 1
            term = f"{words[n % len(words)]} {chr(97 + n % 26)}{chr(97 + (n // 26) % 26)}"
            started = time.perf_counter()
            c.get("/api/v2/resources/", params={"search": term, "search_fields": ["title", "abstract"],
                                                 "page": 1 + n % 3})
            times.append((time.perf_counter() - started) * 1000)
