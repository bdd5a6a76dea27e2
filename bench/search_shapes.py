"""The distinct searches of `make bench --million`, timed by shape, on a catalogue kept between runs.

    .venv/bin/python -m bench.search_shapes FOLDER [--resources N]

The first run seeds FOLDER (100 users, then 100,000 and the rest up to N resources, as the bench
does) and keeps it; later runs only start a server on it, so that a change is measured in a
minute, not ten. The shape of each query follows from its place in ``distinct_queries``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import httpx

from bench.__main__ import distinct_queries, seed_resources, seed_users, start_server

SHAPES = ["word, pages 1-5"] * 3 + ["word + place"] * 3 + ["word + product"] * 2 + ["place alone", "word + two letters"]


def percentiles(times: list[float]) -> str:
    times = sorted(times)
    return f"n={len(times):3d}  p50={times[len(times) // 2]:7.1f} ms  p99={times[min(len(times) - 1, int(len(times) * 0.99))]:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.search_shapes")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--resources", type=int, default=1_000_000)
    args = parser.parse_args()
    if not (args.folder / "catalogue.sqlite3").exists():
        seed_users(args.folder, 100)
        first = min(100_000, args.resources)
        print(f"seeded {first:,} at {seed_resources(args.folder, first):,.0f}/s", flush=True)
        if args.resources > first:
            print(f"seeded {args.resources - first:,} more at {seed_resources(args.folder, args.resources - first):,.0f}/s",
                  flush=True)
    proc, url = start_server(args.folder, 2)
    try:
        searches, _ = distinct_queries(200)
        timed: list[tuple[str, float]] = []
        with httpx.Client(base_url=url, timeout=60) as client:
            for i, path in enumerate(searches):
                started = time.perf_counter()
                r = client.get(path)
                timed.append((SHAPES[i % 10], (time.perf_counter() - started) * 1000))
                if r.status_code != 200:
                    raise SystemExit(f"{path}: {r.status_code} {r.text[:200]}")
        print(f"{'all':<20} {percentiles([t for _, t in timed])}")
        for shape in dict.fromkeys(SHAPES):
            print(f"{shape:<20} {percentiles([t for s, t in timed if s == shape])}")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    main()
