"""The web UI in Chromium over a catalogue of 100,000 resources: how long after the page is
opened the first page of results is on screen, and how many bytes it took.

Each run opens a new browser context (nothing cached), goes to the address and reads the
`results-shown` performance mark that the search page sets once its cards are in the page,
counted from the start of the navigation. The same for a text search, an area, and the detail
page of a dataset (its title shown). The first page of results is measured in each language of
BENCH_UI_LANGUAGES (default "en ar"): the time, and the bytes Chromium received (encoded, as sent
with gzip: the page, its code, styles, catalogues, API answers, images and basemap tiles) until
the results were shown, and until the page settled (no request for half a second).

The server serves this checkout's ui/. BENCH_UI_BEFORE names another version to measure beside it
in the same run, turn about, each with its own server, code and catalogue of the same size: a git
reference such as `main` (its catalogue_app/ and ui/ are taken out with git archive) or a folder
holding both. A before/after on a machine whose load changes."""

from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import httpx

from bench.__main__ import free_port
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


SEED = """
import sys
from pathlib import Path
from catalogue_app.bootstrap import prepare
from catalogue_app.config import load_settings
from catalogue_app.passwords import hash_password
from catalogue_app.seeding.resources import seed
from catalogue_app.store import db, users
data, count = Path(sys.argv[1]), int(sys.argv[2])
settings = load_settings(environ={"CATALOGUE_ADMIN_PASSWORD": "bench-password-1"}, data_dir=data)
prepare(settings)
with db.transaction(settings.database_path) as conn:
    for i in range(9):
        users.create(conn, {"username": f"bench{i:05d}", "email": f"bench{i:05d}@example.org", "first_name": "Bench",
                            "last_name": f"User {i}", "password": hash_password("bench-password-1")})
seed(settings.database_path, count, scratch=settings.tmp_dir)
"""


def _checkout(ref: str, tmp: Path) -> Path:
    """A folder holding the catalogue_app/ and ui/ of BENCH_UI_BEFORE: a folder, or a git reference
    of this checkout."""
    if Path(ref).is_dir():
        return Path(ref).resolve()
    out = tmp / "before"
    archive = subprocess.run(["git", "-C", str(CHECKOUT), "archive", "--format=tar", ref, "catalogue_app", "ui"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(out, filter="data")
    return out


def _serve(code: Path, data: Path, resources: int, tmp: Path) -> tuple[subprocess.Popen, str]:
    """A catalogue of ``resources`` made-up resources seeded and served by the code in ``code``
    (its catalogue_app, and its ui/ as the catalogue_ui package: a link put first on PYTHONPATH
    wins over the editable install's mapping)."""
    shim = tmp / f"ui-package-{data.name}"
    shim.mkdir()
    (shim / "catalogue_ui").symlink_to(code / "ui", target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", SEED, str(data), str(resources)], cwd=code, env=env, check=True)
    print(f"seeded {resources:,} resources for {code} in {time.perf_counter() - started:.0f} s", flush=True)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "catalogue_app", "serve", "--data-dir", str(data), "--port", str(port),
                             "--workers", "1"], cwd=code, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/api/v2/", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the server of {code} did not start")


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

    languages = os.environ.get("BENCH_UI_LANGUAGES", "en ar").split()
    rows = []
    sizes = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        codes = [("", CHECKOUT)]
        if os.environ.get("BENCH_UI_BEFORE"):
            codes.insert(0, (f"before ({os.environ['BENCH_UI_BEFORE']}) ", _checkout(os.environ["BENCH_UI_BEFORE"], tmp)))
        servers = []
        try:
            for n, (label, code) in enumerate(codes):
                servers.append((label, *_serve(code, tmp / f"data-{n}", args.resources, tmp)))
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                # a resource anyone may see (the seed makes some private), in each catalogue
                detail = {}
                for _, _, url in servers:
                    first = httpx.get(f"{url}/api/v2/resources", params={"page_size": 1, "page": 50}).json()["resources"][0]
                    detail[url] = f"/#/{first['resource_type']}/{first['pk']}"
                cases = [(f"first page of results, {lang}", "/#/", lang, "results") for lang in languages]
                cases += [("search=river, first page", "/#/?q=river", "en", "results"),
                          ("extent of one country, first page", "/#/?extent=5.96,45.82,10.49,47.81", "en", "results"),
                          ("detail page of a resource", None, "en", "detail")]
                for name, path, lang, kind in cases:
                    found = {label: {"marks": [], "walls": [], "bytes": [], "settled": [], "kinds": None} for label, _, _ in servers}
                    for _ in range(RUNS):
                        for label, _, url in servers:  # turn about, so that both see the same load
                            got = found[label]
                            wait = "[data-loaded]" if kind == "results" else "article.detail h1"
                            context, page, wall = _open(browser, url, path or detail[url], lang, wait)
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
