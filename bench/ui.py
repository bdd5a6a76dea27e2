"""The web UI in Chromium over a catalogue of 100,000 resources: how long after the page is
opened the first page of results is on screen, and how many bytes it took.

Each run opens a new browser context (nothing cached), goes to the address and reads the
`results-shown` performance mark that the search page sets once its cards are in the page,
counted from the start of the navigation. The same for a text search, an area, and the detail
page of a dataset (its title shown). The first page of results is measured in each language of
BENCH_UI_LANGUAGES (default "en ar"): the time, and the bytes Chromium received (encoded, as sent
with gzip: the page, its code, styles, catalogues, API answers, images and basemap tiles) until
the results were shown, and until the page settled (no request for half a second).

The server serves this checkout's ui/. BENCH_UI_BEFORE names another UI to measure beside it in
the same run, turn about (a git reference such as `main`, whose ui/ is taken out with git
archive, or a folder holding a ui/): a before/after on a machine whose load changes."""

from __future__ import annotations

import io
import os
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from tests.ui.conftest import ARGS, CHECKOUT, CHROMIUM

RUNS = int(os.environ.get("BENCH_UI_RUNS", "7"))

# The bytes of every response the page received, and when its last byte came (ms after the
# navigation started): what the document and the resource timing entries say. transferSize is
# what came over the wire (headers and encoded body).
RECEIVED = """(until) => {
  const nav = performance.getEntriesByType('navigation')[0];
  const all = [nav, ...performance.getEntriesByType('resource')];
  const upTo = all.filter((e) => until === null || e.responseEnd <= until);
  return { bytes: upTo.reduce((n, e) => n + e.transferSize, 0), requests: upTo.length,
           kinds: upTo.reduce((k, e) => { const name = kindOf(e.name); k[name] = (k[name] || 0) + e.transferSize; return k; }, {}) };
  function kindOf(url) {
    const path = new URL(url).pathname;
    if (path.startsWith('/api/')) return 'api';
    if (path.startsWith('/ogcapi/')) return 'tiles';
    if (path.startsWith('/ui/i18n/')) return 'i18n';
    if (path.startsWith('/ui/vendor/')) return 'leaflet';
    if (path.endsWith('.js')) return 'js';
    return 'other';
  }
}"""


def _ui_package(folder: Path, tmp: Path, name: str) -> dict[str, str]:
    """The environment that makes a server serve ``folder`` as the catalogue_ui package (a link to
    it, put first on PYTHONPATH, wins over the editable install's mapping)."""
    shim = tmp / f"ui-package-{name}"
    shim.mkdir()
    (shim / "catalogue_ui").symlink_to(folder, target_is_directory=True)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))}


def _before_ui(ref: str, tmp: Path) -> Path:
    """The ui/ folder of BENCH_UI_BEFORE: a folder (holding ui/, or the ui folder itself), or a git
    reference of this checkout."""
    path = Path(ref)
    if path.is_dir():
        return path / "ui" if (path / "ui" / "index.html").is_file() else path
    out = tmp / "before"
    archive = subprocess.run(["git", "-C", str(CHECKOUT), "archive", "--format=tar", ref, "ui"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(out, filter="data")
    return out / "ui"


def _open(browser, url: str, path: str, lang: str, wait: str):
    """A fresh context in ``lang`` opened at ``path``, once ``wait`` is in the page."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale=lang)
    page = context.new_page()
    started = time.perf_counter()
    page.goto(url + path)
    page.wait_for_selector(wait)
    return context, page, (time.perf_counter() - started) * 1000


def _settled(page) -> None:
    """Waits until no request has started or ended for half a second (tiles, lazy code)."""
    last, since = -1, time.perf_counter()
    deadline = since + 10
    while time.perf_counter() < deadline:
        n = page.evaluate("performance.getEntriesByType('resource').filter((e) => e.responseEnd > 0).length"
                          " + '/' + performance.getEntriesByType('resource').length")
        if n != last:
            last, since = n, time.perf_counter()
        elif time.perf_counter() - since > 0.5:
            return
        page.wait_for_timeout(100)


def ui_benchmarks(args) -> list[tuple[str, int, dict[str, float]]]:
    from playwright.sync_api import sync_playwright

    from bench.__main__ import seed_resources, seed_users, start_server

    languages = os.environ.get("BENCH_UI_LANGUAGES", "en ar").split()
    rows = []
    sizes = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        data = tmp / "data"
        seed_users(data, 10)
        rate = seed_resources(data, args.resources)
        print(f"seeded {args.resources:,} resources at {rate:,.0f}/s", flush=True)
        uis = [("", CHECKOUT / "ui")]
        if os.environ.get("BENCH_UI_BEFORE"):
            uis.insert(0, (f"before ({os.environ['BENCH_UI_BEFORE']}) ", _before_ui(os.environ["BENCH_UI_BEFORE"], tmp)))
        servers = []
        try:
            for n, (label, folder) in enumerate(uis):
                copy = data if n == len(uis) - 1 else tmp / f"data-{n}"  # a server locks its data folder
                if copy != data:
                    shutil.copytree(data, copy)
                servers.append((label, *start_server(copy, 1, env=_ui_package(folder, tmp, str(n)))))
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                import httpx

                # a resource anyone may see (the seed makes some private)
                first = httpx.get(f"{servers[0][2]}/api/v2/resources", params={"page_size": 1, "page": 50}).json()["resources"][0]
                kind_of, pk = first["resource_type"], first["pk"]
                cases = [(f"first page of results, {lang}", "/#/", lang, "results") for lang in languages]
                cases += [("search=river, first page", "/#/?q=river", "en", "results"),
                          ("extent of one country, first page", "/#/?extent=5.96,45.82,10.49,47.81", "en", "results"),
                          ("detail page of a resource", f"/#/{kind_of}/{pk}", "en", "detail")]
                for name, path, lang, kind in cases:
                    found = {label: {"marks": [], "walls": [], "bytes": [], "settled": [], "kinds": None} for label, _, _ in servers}
                    for _ in range(RUNS):
                        for label, _, url in servers:  # turn about, so that both see the same load
                            got = found[label]
                            wait = "[data-loaded]" if kind == "results" else "article.detail h1"
                            context, page, wall = _open(browser, url, path, lang, wait)
                            got["walls"].append(wall)
                            if kind == "results":
                                mark = page.evaluate("performance.getEntriesByName('results-shown')[0].startTime")
                                got["marks"].append(mark)
                                if name.startswith("first page"):
                                    shown = page.evaluate(RECEIVED, mark)
                                    got["bytes"].append(shown["bytes"])
                                    _settled(page)
                                    settled = page.evaluate(RECEIVED, None)
                                    got["settled"].append(settled["bytes"])
                                    got["kinds"] = (shown, settled)
                            else:
                                got["marks"].append(page.evaluate("performance.now()"))
                            context.close()
                    for label, _, _ in servers:
                        got = found[label]
                        rows.append((f"UI: {label}{name} [{args.resources:,}]", 1,
                                     {"rps": 0, "p50": statistics.median(got["marks"]), "p99": max(got["marks"]), "errors": 0,
                                      "wall": statistics.median(got["walls"])}))
                        if got["bytes"]:
                            sizes.append((f"{label}{name}", statistics.median(got["bytes"]), statistics.median(got["settled"]),
                                          got["kinds"]))
                browser.close()
        finally:
            for _, proc, _ in servers:
                proc.terminate()
                proc.wait(timeout=20)
    print(f"\n{'browser benchmark (ms from navigation start)':<66} {'median':>8} {'worst':>8} {'wall p50':>9}")
    for name, _, r in rows:
        print(f"{name:<66} {r['p50']:>8.0f} {r['p99']:>8.0f} {r['wall']:>9.0f}")
    print(f"\n{'bytes received (encoded, KB = 1000 bytes)':<52} {'to results':>11} {'settled':>9}   by kind, to results | settled")
    for name, shown, settled, (kinds_shown, kinds_settled) in sizes:
        by_kind = lambda k: " ".join(f"{kind} {n / 1000:.1f}" for kind, n in sorted(k["kinds"].items()))  # noqa: E731
        print(f"{name:<52} {shown / 1000:>9.1f}KB {settled / 1000:>7.1f}KB   {by_kind(kinds_shown)} | {by_kind(kinds_settled)}")
    return rows
