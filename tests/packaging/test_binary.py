"""The single executable (dist/catalogue, made by `make build`; `make test-binary` builds it and
runs this). Skipped when there is no executable, as in `make test`.

The file runs on fresh data folders with a cache folder of the test's own (CATALOGUE_CACHE_DIR,
where it unpacks itself once) and a temporary folder of its own (where nothing may be left):
every format uploads, WMS draws, the web UI's home page opens in Chromium, a stop and a kill
leave nothing behind, a second start with no arguments points to the running one, and copies
of older builds are removed unless a running catalogue uses them.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.api.test_uploads import RASTERS, source_of
from tests.conftest import USER_PASSWORD, free_port

BINARY = Path(__file__).resolve().parents[2] / "dist" / ("catalogue.exe" if sys.platform == "win32" else "catalogue")
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "binary"

pytestmark = pytest.mark.skipif(not BINARY.is_file(), reason="no dist/catalogue: run `make build` first")
posix_only = pytest.mark.skipif(os.name != "posix", reason="signals and flock: POSIX")


class Binary:
    """The executable running with its own temporary and cache folders under ``tmp``."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None, wait: bool = True):
        self.tmp = tmp / "unpack"
        self.tmp.mkdir(exist_ok=True)
        self.cache = tmp / "cache"
        self.log = tmp / f"out-{time.monotonic_ns()}.txt"
        environ = {**os.environ, "TMPDIR": str(self.tmp), "TMP": str(self.tmp), "TEMP": str(self.tmp),
                   "CI": "1", "CATALOGUE_CACHE_DIR": str(self.cache), **(env or {})}
        environ.pop("CATALOGUE_ADMIN_PASSWORD", None)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([str(BINARY), *args], stdout=out, stderr=subprocess.STDOUT, env=environ)
        self.url = self._wait_for_url() if wait else ""

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            match = re.search(r"Catalogue (http://\S+?)/ ", self.output())
            if match:
                try:
                    if httpx.get(f"{match.group(1)}/api/v2/", timeout=2).status_code == 200:
                        return match.group(1)
                except httpx.HTTPError:
                    pass
            if self.proc.poll() is not None:
                raise AssertionError(f"the executable stopped: {self.output()}")
            time.sleep(0.05)
        self.proc.kill()
        raise AssertionError(f"the executable did not answer: {self.output()}")

    def stop(self) -> int:
        """SIGTERM to the executable's own process, which ends the catalogue and cleans up."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)

    def left_in_tmp(self) -> list[str]:
        return [p.name for p in self.tmp.iterdir()]


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v2/", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """One executable for the module, with a user signed up."""
    tmp = tmp_path_factory.mktemp("binary")
    started = Binary(tmp, "serve", "--data-dir", str(tmp / "data"), "--port", str(free_port()))
    match = re.search(r"Admin account created: admin / (\S+)", started.output())
    assert match, started.output()
    with httpx.Client(base_url=started.url, auth=("admin", match.group(1)), timeout=30) as admin:
        r = admin.post("/api/v2/users/", json={"username": "surveyor", "email": "s@example.org",
                                               "password": USER_PASSWORD})
        assert r.status_code == 200, r.text
    yield started
    code = started.stop()
    if os.name == "posix":  # (Windows ends the process without a signal to handle)
        assert code in (0, -signal.SIGTERM, 128 + signal.SIGTERM), started.output()
        assert started.left_in_tmp() == []
    # The output a person reads: the first use prepared once, then the address and the login.
    out = started.output()
    assert out.index("Preparing the catalogue for first use") < out.index("Ready in") < out.index("Catalogue http")


@pytest.fixture(scope="module")
def user(running):
    with httpx.Client(base_url=running.url, auth=("surveyor", USER_PASSWORD), timeout=120) as c:
        yield c


def imported(user: httpx.Client, files: dict) -> dict:
    r = user.post("/api/v2/uploads/upload", files=files)
    assert r.status_code == 201, r.text
    status_url = f"/api/v2/executionrequest/{r.json()['execution_id']}"
    deadline = time.monotonic() + 120
    while (status := user.get(status_url).json()["request"])["status"] not in ("finished", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    return user.get(f"/api/v2/datasets/{pk}").json()["dataset"]


def test_size():
    """Under 120 MB, with the libraries of the OGC APIs and linked data (bench --only binary
    prints the size, and what each library adds)."""
    assert BINARY.stat().st_size < 120 * 1000 * 1000


def test_selfcheck_finds_every_library_working(tmp_path):
    """The libraries loaded only when a request needs them (the tile grid's, linked data's)
    work in the executable: their data files and plugins were collected."""
    env = {**os.environ, "CATALOGUE_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp_path), "TMP": str(tmp_path),
           "TEMP": str(tmp_path)}
    out = subprocess.run([str(BINARY), "selfcheck"], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    said = {line.split("(")[0].split(":")[0].removeprefix("ok").strip() for line in out.stdout.splitlines()
            if line.startswith("ok ")}
    assert said == {"tile grid", "linked data", "document thumbnails"}, out.stdout


def test_version(tmp_path):
    env = {**os.environ, "CATALOGUE_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp_path), "TMP": str(tmp_path),
           "TEMP": str(tmp_path)}
    out = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0 and re.fullmatch(r"catalogue \d+\.\d+\.\d+\s*", out.stdout)


@pytest.mark.parametrize("source", ["countries", "countries.zip", "cities.zip", "csv", "gpkg", "geojson", "kml",
                                    *RASTERS, "RGB.byte.zip"])
def test_every_format_uploads(user, tmp_path, source):
    files, path = source_of(source, tmp_path)
    dataset = imported(user, files)
    assert dataset["subtype"] == ("raster" if path.suffix == ".tif" else "vector")
    assert len(dataset["bbox_polygon"]["coordinates"][0]) == 5
    assert user.get(f"/datasets/{dataset['alternate']}/dataset_download").status_code == 200


def test_wms_draws_an_uploaded_layer(user):
    from PIL import Image

    files, _ = source_of("countries", Path("."))
    dataset = imported(user, files)
    r = user.get("/geoserver/ows", params={
        "service": "WMS", "version": "1.3.0", "request": "GetMap", "layers": dataset["alternate"],
        "styles": "", "crs": "EPSG:4326", "bbox": "-90,-180,90,180", "width": 256, "height": 128,
        "format": "image/png"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:300]
    image = Image.open(io.BytesIO(r.content)).convert("RGB")
    assert image.size == (256, 128)
    assert len(set(image.get_flattened_data())) > 1  # the countries are drawn on the background
    download = user.get(f"/datasets/{dataset['alternate']}/dataset_download")
    assert download.status_code == 200 and download.content[:2] == b"PK"


def test_the_home_page_opens_in_chromium(running):
    from playwright.sync_api import sync_playwright

    from tests.ui.conftest import ARGS, CHROMIUM

    OUTPUT.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("request", lambda r: errors.append(f"another host: {r.url}")
                    if not r.url.startswith((running.url, "data:", "blob:")) else None)
            assert page.goto(f"{running.url}/").status == 200
            page.wait_for_selector("[data-loaded]", timeout=15_000)
            page.wait_for_load_state("networkidle")
            assert page.locator(".card").count() >= 1  # the datasets uploaded above
            page.screenshot(path=str(OUTPUT / "home.png"))
        finally:
            browser.close()
    assert errors == []


@posix_only
def test_a_second_bare_start_points_to_the_running_one_and_a_kill_leaves_nothing(tmp_path):
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "APPDATA": str(home / "data"),
           "LOCALAPPDATA": str(home / "data")}
    first = Binary(tmp_path, env=env)  # a double-click: no arguments
    assert re.search(r"Admin account created: admin / \S+", first.output())
    assert re.search(r"Data folder: .*catalogue", first.output())
    second = Binary(tmp_path, env=env, wait=False)
    assert second.proc.wait(timeout=60) == 0, second.output()
    assert f"The catalogue already runs at {first.url}/" in second.output()
    assert answers(first.url)
    # killed: the catalogue ends with the executable and nothing stays in the temporary folder
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(timeout=10)
    deadline = time.monotonic() + 15
    while (answers(first.url) or first.left_in_tmp()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not answers(first.url)
    assert first.left_in_tmp() == [] and second.left_in_tmp() == []


@posix_only
def test_a_running_catalogue_holds_its_copy(running):
    import fcntl

    (copy,) = [p for p in running.cache.iterdir() if p.is_dir() and not p.name.startswith(".")]
    fd = os.open(copy / ".in-use", os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


@posix_only
def test_copies_of_older_builds_go_unless_in_use(tmp_path):
    import fcntl

    cache = tmp_path / "cache"
    env = {**os.environ, "CATALOGUE_CACHE_DIR": str(cache), "TMPDIR": str(tmp_path)}
    subprocess.run([str(BINARY), "--version"], check=True, capture_output=True, timeout=60, env=env)
    (current,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    old, used = cache / "0123456789abcdef", cache / "fedcba9876543210"
    for copy in (old, used):
        (copy / "catalogue").mkdir(parents=True)
        (copy / ".complete").write_text(copy.name)
    held = os.open(used / ".in-use", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_SH)  # as a catalogue of that build running now
    try:
        out = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True, timeout=60, env=env)
        assert out.returncode == 0, out.stderr
        assert "Preparing" not in out.stderr  # this build's copy was there
        assert sorted(p.name for p in cache.iterdir()) == sorted([current.name, used.name])
    finally:
        os.close(held)
    # once nobody holds it, the next start removes it
    subprocess.run([str(BINARY), "--version"], check=True, capture_output=True, timeout=60, env=env)
    assert [p.name for p in cache.iterdir()] == [current.name]


@posix_only
def test_a_kill_during_the_start_stops_the_catalogue_too(tmp_path):
    """Killed before the catalogue answers (the catalogue has not looked at its parent yet):
    it stops as soon as it does, and the temporary folder is left empty."""
    subprocess.run([str(BINARY), "--version"], check=True, capture_output=True, timeout=60,
                   env={**os.environ, "CATALOGUE_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp_path)})
    port = free_port()
    started = Binary(tmp_path, "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port), wait=False)
    time.sleep(0.1)
    started.proc.send_signal(signal.SIGKILL)
    started.proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while started.left_in_tmp() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(3)  # (time enough to start answering, were it still running)
    assert not answers(f"http://127.0.0.1:{port}")
    assert started.left_in_tmp() == []


def double_click_with_a_desktop(tmp_path: Path) -> tuple[Binary, Path]:
    """A first start with no arguments where there is a desktop (here a made-up display, and a
    browser command that notes what it is asked to open)."""
    opened = tmp_path / "opened.txt"
    recorder = tmp_path / "browser.py"
    recorder.write_text(f"import sys\nwith open({str(opened)!r}, 'a') as f:\n    print(sys.argv[1], file=f)\n")
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "APPDATA": str(home / "data"),
           "LOCALAPPDATA": str(home / "data"), "CI": "", "DISPLAY": ":0",
           "BROWSER": f"{Path(sys.executable).as_posix()} {recorder.as_posix()} %s"}
    return Binary(tmp_path, env=env), opened


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Windows and macOS show a page while unpacking")
def test_a_first_double_click_on_linux_opens_the_catalogue_once_it_answers(tmp_path):
    started, opened = double_click_with_a_desktop(tmp_path)
    try:
        assert "Preparing the catalogue for first use" in started.output()
        deadline = time.monotonic() + 15
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)  # (time for a second tab, were one opened)
        assert opened.read_text().split() == [f"{started.url}/"]
    finally:
        started.stop()


@pytest.mark.skipif(sys.platform not in ("win32", "darwin"), reason="Linux opens the catalogue once it answers")
def test_a_first_double_click_shows_the_preparation_in_the_browser_then_the_catalogue(tmp_path):
    """The first start opens a page saying what happens, which opens the catalogue once it
    answers; the catalogue opens no second tab."""
    from playwright.sync_api import sync_playwright

    from tests.ui.conftest import ARGS, CHROMIUM

    started, opened = double_click_with_a_desktop(tmp_path)
    try:
        assert "Preparing the catalogue for first use" in started.output()
        time.sleep(1)  # (time for a second tab, were one opened)
        (page_url,) = opened.read_text().split()
        assert page_url.startswith("file://") and page_url.endswith("/starting.html")
        OUTPUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            try:
                page = browser.new_page()
                page.goto(page_url)
                page.wait_for_url(f"{started.url}/", timeout=15_000)
                page.wait_for_selector("[data-loaded]", timeout=15_000)
                page.screenshot(path=str(OUTPUT / "after-first-start.png"))
            finally:
                browser.close()
    finally:
        started.stop()
