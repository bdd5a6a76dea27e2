"""What the tests of backup, restore, check, repair and vacuum share: the CLI as a subprocess,
hashes of a data folder's files, and a catalogue with real geodata in it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.api.test_uploads import COUNTRIES, DATA, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, data_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``catalogue <args> --data-dir D``, run as an operator runs it."""
    env = {**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD}
    return subprocess.run([sys.executable, "-m", "catalogue_app", *args, "--data-dir", str(data_dir)], cwd=REPO,
                          capture_output=True, text=True, env=env, timeout=timeout)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def content_sha256(path: Path) -> str:
    """The SHA-256 of an SQLite file's content (its SQL dump, its log included): a backup copies
    a working GeoPackage with SQLite's backup API, which writes its own header."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        digest = hashlib.sha256()
        for line in conn.iterdump():
            digest.update(line.encode() + b"\n")
        return digest.hexdigest()
    finally:
        conn.close()


def tree(data_dir: Path) -> dict[str, str]:
    """Every file of files/ and thumbs/, as "files/<folder>/<name>": its SHA-256 (a working
    GeoPackage's: of its content; its -wal/-shm are part of it)."""
    out = {}
    for top in ("files", "thumbs"):
        base = data_dir / top
        for path in sorted(base.rglob("*")) if base.is_dir() else ():
            name = path.relative_to(data_dir).as_posix()
            if not path.is_file() or name.endswith(("/working/data.gpkg-wal", "/working/data.gpkg-shm")):
                continue
            out[name] = content_sha256(path) if name.endswith("/working/data.gpkg") else sha256(path)
    return out


def upload_shapefile(client, folder: Path = COUNTRIES, title: str = "Countries") -> dict:
    return imported(client, client.post("/api/v2/uploads/upload", files=shapefile_parts(folder),
                                        data={"dataset_title": title}))


def upload_geotiff(client, name: str = "RGB.byte.tif") -> dict:
    return imported(client, client.post("/api/v2/uploads/upload", files={
        "base_file": (name, (DATA / name).read_bytes(), "image/tiff")}))


def upload_document(client, name: str, content: bytes, title: str) -> dict:
    r = client.post("/api/v2/documents", files={"doc_file": (name, content, "text/plain")}, data={"title": title})
    assert r.status_code == 201, r.text
    return r.json()["document"]


def wait_thumbnail(client, pk: int, timeout: float = 30) -> str:
    """A dataset's thumbnail is drawn just after its import: its address once it is."""
    deadline = time.monotonic() + timeout
    while True:
        url = client.get(f"/api/v2/resources/{pk}").json()["resource"]["thumbnail_url"]
        if url or time.monotonic() > deadline:
            assert url, f"resource {pk} got no thumbnail"
            return url
        time.sleep(0.05)


def job(admin, command: str, timeout: float = 60, **kwargs) -> dict:
    """Run a management command as a job over HTTP and wait for its end: the job, with its
    task's outcome (SUCCESS or FAILURE) in ``outcome``."""
    base = "/api/v2/management"
    r = admin.post(f"{base}/commands/{command}/", json={"kwargs": kwargs})
    assert r.status_code == 201, r.text
    job_id = r.json()["data"]["id"]
    deadline = time.monotonic() + timeout
    while True:
        body = admin.get(f"{base}/jobs/{job_id}/").json()
        if body["status"] == "FINISHED":
            status = admin.get(f"{base}/jobs/{job_id}/status/").json()["celery_task_meta"]["status"]
            return {**body, "outcome": status}
        assert time.monotonic() < deadline, body
        time.sleep(0.05)
