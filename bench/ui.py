"""The web UI in Chromium over a catalogue of 100,000 resources: how long after the page is
opened the first page of results is on screen.

Each run opens a new browser context (nothing cached), goes to the address and reads the
`results-shown` performance mark that the search page sets once its cards are in the page,
counted from the start of the navigation. The same for a text search, an area, and the detail
page of a dataset (its title shown)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from tests.ui.conftest import ARGS, CHROMIUM

RUNS = 7


def ui_benchmarks(args) -> list[tuple[str, int, dict[str, float]]]:
    from playwright.sync_api import sync_playwright

    from bench.__main__ import seed_resources, seed_users, start_server

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        seed_users(data, 10)
        rate = seed_resources(data, args.resources)
        print(f"seeded {args.resources:,} resources at {rate:,.0f}/s", flush=True)
        proc, url = start_server(data, 1)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                import httpx

                # a resource anyone may see (the seed makes some private)
                first = httpx.get(f"{url}/api/v2/resources", params={"page_size": 1, "page": 50}).json()["resources"][0]
                kind_of, pk = first["resource_type"], first["pk"]
                cases = [("first page of results", "/#/", "results"),
                         ("search=river, first page", "/#/?q=river", "results"),
                         ("extent of one country, first page", "/#/?extent=5.96,45.82,10.49,47.81", "results"),
                         ("detail page of a resource", f"/#/{kind_of}/{pk}", "detail")]
                for name, path, kind in cases:
                    marks, walls = [], []
                    for _ in range(RUNS):
                        context = browser.new_context(viewport={"width": 1280, "height": 800})
                        page = context.new_page()
                        started = time.perf_counter()
                        page.goto(url + path)
                        if kind == "results":
                            page.wait_for_selector("[data-loaded]")
                            walls.append((time.perf_counter() - started) * 1000)
                            marks.append(page.evaluate("performance.getEntriesByName('results-shown')[0].startTime"))
                        else:
                            page.wait_for_selector("article.detail h1")
                            walls.append((time.perf_counter() - started) * 1000)
                            marks.append(page.evaluate("performance.now()"))
                        context.close()
                    rows.append((f"UI: {name} [{args.resources:,}]", 1,
                                 {"rps": 0, "p50": statistics.median(marks), "p99": max(marks), "errors": 0,
                                  "wall": statistics.median(walls)}))
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    print(f"\n{'browser benchmark (ms from navigation start)':<58} {'median':>8} {'worst':>8} {'wall p50':>9}")
    for name, _, r in rows:
        print(f"{name:<58} {r['p50']:>8.0f} {r['p99']:>8.0f} {r['wall']:>9.0f}")
    return rows
