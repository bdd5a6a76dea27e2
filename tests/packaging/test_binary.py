"""A smoke test of the single executable (dist/catalogue, made by `make build`; `make test-binary`
runs this). Skipped when there is no executable, as in `make test`.

It starts the file on a fresh data folder, creates a user, uploads the Natural Earth countries,
draws them with WMS, stops the executable with SIGTERM and checks that nothing is left in the
temporary folder, then starts it again and finds everything still there. The catalogue's
unpacked copy lives in a cache folder of the test's own (CATALOGUE_CACHE_DIR).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.api.test_uploads import COUNTRIES, shapefile_parts
from tests.conftest import USER_PASSWORD, free_port

BINARY = Path(__file__).resolve().parents[2] / "dist" / ("catalogue.exe" if sys.platform == "win32" else "catalogue")

pytestmark = pytest.mark.skipif(not BINARY.is_file(), reason="no dist/catalogue: run `make build` first")


class Binary:
    """The executable running with its own temporary folder (where it unpacks itself)."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None):
        self.tmp = tmp / "unpack"
        self.tmp.mkdir(exist_ok=True)
        self.log = tmp / f"out-{time.monotonic_ns()}.txt"
        environ = {**os.environ, "TMPDIR": str(self.tmp), "TMP": str(self.tmp), "TEMP": str(self.tmp),
                   "CI": "1", "CATALOGUE_CACHE_DIR": str(tmp / "cache"), **(env or {})}
        environ.pop("CATALOGUE_ADMIN_PASSWORD", None)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([str(BINARY), *args], stdout=out, stderr=subprocess.STDOUT, env=environ)
        self.url = self._wait_for_url()

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
        """SIGTERM to the executable's own process (the bootloader), which cleans up after itself."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)


def test_version():
    out = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and re.fullmatch(r"catalogue \d+\.\d+\.\d+\s*", out.stdout)


def test_serve_upload_draw_stop_and_start_again(tmp_path):
    data = tmp_path / "data"
    port = free_port()
    first = Binary(tmp_path, "serve", "--data-dir", str(data), "--port", str(port))
    try:
        assert first.url == f"http://127.0.0.1:{port}"
        match = re.search(r"Admin account created: admin / (\S+)", first.output())
        assert match, first.output()
        admin_password = match.group(1)
        with httpx.Client(base_url=first.url, auth=("admin", admin_password), timeout=30) as admin:
            r = admin.post("/api/v2/users/", json={"username": "surveyor", "email": "s@example.org",
                                                   "password": USER_PASSWORD})
            assert r.status_code == 200, r.text
        with httpx.Client(base_url=first.url, auth=("surveyor", USER_PASSWORD), timeout=60) as user:
            r = user.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES))
            assert r.status_code == 201, r.text
            status_url = f"/api/v2/executionrequest/{r.json()['execution_id']}"
            deadline = time.monotonic() + 120
            while (status := user.get(status_url).json()["request"])["status"] not in ("finished", "failed"):
                assert time.monotonic() < deadline, status
                time.sleep(0.2)
            assert status["status"] == "finished", status
            pk = status["output_params"]["resources"][0]["id"]
            dataset = user.get(f"/api/v2/datasets/{pk}").json()["dataset"]
            r = user.get("/geoserver/ows", params={
                "service": "WMS", "version": "1.3.0", "request": "GetMap", "layers": dataset["alternate"],
                "styles": "", "crs": "EPSG:4326", "bbox": "-90,-180,90,180", "width": 256, "height": 128,
                "format": "image/png"})
            assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:300]
            import io

            from PIL import Image

            image = Image.open(io.BytesIO(r.content)).convert("RGB")
            assert image.size == (256, 128)
            assert len(set(image.get_flattened_data())) > 1  # the countries are drawn on the background
    finally:
        code = first.stop()
    assert code in (0, -signal.SIGTERM, 128 + signal.SIGTERM), first.output()
    assert not [p.name for p in first.tmp.iterdir() if p.name.startswith("_MEI")]

    again = Binary(tmp_path, "serve", "--data-dir", str(data), "--port", str(port))
    try:
        assert "Admin account created" not in again.output()
        with httpx.Client(base_url=again.url, auth=("surveyor", USER_PASSWORD), timeout=30) as user:
            r = user.get(f"/api/v2/datasets/{pk}")
            assert r.status_code == 200 and r.json()["dataset"]["alternate"] == dataset["alternate"]
            download = user.get(f"/datasets/{dataset['alternate']}/dataset_download")
            assert download.status_code == 200 and download.content[:2] == b"PK"
    finally:
        again.stop()
    assert not [p.name for p in again.tmp.iterdir() if p.name.startswith("_MEI")]
    # one unpacked copy of the build, complete
    copies = list((tmp_path / "cache").iterdir())
    assert len(copies) == 1 and (copies[0] / ".complete").is_file()


def test_no_arguments_serves_from_the_user_data_folder(tmp_path):
    """A double-click: the data folder is made in the user's data folder (here under a made-up
    home), the address and the admin login are printed, and no browser is opened under CI."""
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "APPDATA": str(home / "data"),
           "LOCALAPPDATA": str(home / "data")}
    started = Binary(tmp_path, env=env)
    try:
        assert re.search(r"Admin account created: admin / \S+", started.output())
        assert re.search(r"Data folder: .*catalogue", started.output())
        assert any(home.rglob("catalogue.sqlite3"))
    finally:
        started.stop()
