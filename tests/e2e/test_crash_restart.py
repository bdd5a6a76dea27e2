"""A server killed with SIGKILL (a crash, a power cut) starts again at once on the same port and
finds everything it had committed, and nothing half done: no request left running, no staged
file, no stray folder."""

import signal
import sqlite3
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.api.test_uploads import shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, make_user, poll

DATA = Path(__file__).parent.parent / "data"


def kill(srv: Server) -> None:
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=10)


# What "at once" means here: well before a socket in TIME_WAIT would free the port (60 s) and with no
# long recovery, on a loaded CI machine. The start time itself is measured by `make bench` (binary).
AT_ONCE = 15


def restart(srv: Server) -> tuple[Server, float]:
    """The same data folder and port, right after the kill; how long until it answered."""
    started = time.monotonic()
    again = Server(srv.data_dir, port=srv.port)
    return again, time.monotonic() - started


def check_consistent(srv: Server, admin: httpx.Client, committed: dict[int, str]) -> None:
    """Integrity, every committed resource with its files, nothing running, nothing stray."""
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("SELECT count(*) FROM execution_requests WHERE status = 'running'").fetchone()[0] == 0
        folders = {r[0] for r in conn.execute("SELECT uuid FROM resources")} | \
                  {r[0] for r in conn.execute("SELECT folder FROM datasets")}
    finally:
        conn.close()
    for pk, uuid in committed.items():
        r = admin.get(f"/api/v2/resources/{pk}")
        assert r.status_code == 200, (pk, r.text)
        assert r.json()["resource"]["uuid"] == uuid
    for folder in (srv.data_dir / "files").iterdir():
        assert folder.name in folders, f"stray folder {folder.name}"
    staged = [p.name for p in (srv.data_dir / "tmp").iterdir()]
    assert staged == [], staged


def test_a_killed_server_starts_again_at_once_on_its_port(tmp_path):
    srv = Server(tmp_path / "data")
    clients = [srv.client() for _ in range(8)]  # kept-alive connections the kill leaves in TIME_WAIT
    for c in clients:
        assert c.get("/api/v2/resources").status_code == 200
    kill(srv)
    again, took = restart(srv)
    try:
        assert took < AT_ONCE, f"took {took:.1f} s"
        assert httpx.get(f"{again.url}/api/v2/").status_code == 200
        # a port a live process listens on is still refused, at once
        taken = subprocess.run([*again.proc.args[:3], "serve", "--data-dir", str(tmp_path / "other"), "--port",
                                str(again.port)], capture_output=True, text=True, timeout=30)
        assert taken.returncode != 0 and f"Port {again.port}" in (taken.stderr + taken.stdout)
    finally:
        again.stop()
        for c in clients:
            c.close()


def _slow_upload(url: str, auth: tuple[str, str], parts: dict, stop: threading.Event) -> None:
    """A multipart upload whose body arrives slowly and never ends (until the server dies)."""
    boundary = "crashboundary"
    head = b""
    for field, (name, content, mime) in parts.items():
        head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{name}\"\r\n"
                 f"Content-Type: {mime}\r\n\r\n").encode() + content + b"\r\n"
    head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"extra_file\"; filename=\"big.bin\"\r\n"
             f"Content-Type: application/octet-stream\r\n\r\n").encode()

    def body():
        yield head
        while not stop.is_set():
            yield b"\0" * 65536
            time.sleep(0.05)

    try:
        httpx.post(f"{url}/api/v2/uploads/upload", content=body(), auth=auth, timeout=30,
                   headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    except httpx.HTTPError:
        pass


def test_kill_during_an_upload_and_permission_changes(tmp_path):
    srv = Server(tmp_path / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    # committed before the kill: a dataset with its files, and documents
    r = admin.post("/api/v2/uploads/upload", files=shapefile_parts(DATA / "naturalearth_cities"))
    status = poll(admin, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")
    assert status["status"] == "finished", status
    dataset = status["output_params"]["resources"][0]["id"]
    docs = []
    for i in range(30):
        r = admin.post("/api/v2/documents", files={"doc_file": (f"n{i}.txt", b"notes\n", "text/plain")},
                       data={"title": f"Doc {i}"})
        docs.append(r.json()["document"])
    committed = {int(d["pk"]): d["uuid"] for d in docs}
    committed[int(dataset)] = admin.get(f"/api/v2/resources/{dataset}").json()["resource"]["uuid"]
    dataset_files = sorted(p.name for p in (srv.data_dir / "files").rglob("*") if p.is_file())
    # an upload still arriving, and permission changes queued and running, when the server dies
    stop = threading.Event()
    uploader = threading.Thread(target=_slow_upload, args=(srv.url, ("admin", ADMIN_PASSWORD),
                                                           shapefile_parts(DATA / "naturalearth_lowres"), stop))
    uploader.start()
    deadline = time.monotonic() + 10
    while not any(p.stat().st_size > 1_000_000 for p in (srv.data_dir / "tmp").glob("*/upload/*")):
        assert time.monotonic() < deadline, "the upload never reached the server"
        time.sleep(0.02)
    body = {"users": [{"id": user["pk"], "permissions": "edit"}], "groups": [{"id": 1, "permissions": "view"}]}

    def change(doc):
        try:
            return admin.put(f"/api/v2/resources/{doc['pk']}/permissions", json=body).status_code
        except httpx.HTTPError:
            return None

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(change, d) for d in docs]
        time.sleep(0.05)
        kill(srv)
        [f.result() for f in futures]
    stop.set()
    uploader.join(timeout=30)
    assert list((srv.data_dir / "tmp").glob("*/.owner"))  # the upload's staged files, left by the crash
    again, took = restart(srv)
    try:
        assert took < AT_ONCE, f"took {took:.1f} s"
        admin = again.client(auth=("admin", ADMIN_PASSWORD))
        # requests that were waiting run now; wait for them before looking
        deadline = time.monotonic() + 30
        while admin.get("/api/v2/executionrequest", params={"filter{status}": "ready"}).json()["total"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        check_consistent(again, admin, committed)
        assert sorted(p.name for p in (again.data_dir / "files").rglob("*") if p.is_file()) == dataset_files
        failed = admin.get("/api/v2/executionrequest", params={"filter{status}": "failed", "page_size": 100}).json()
        for request in failed["requests"]:
            assert request["log"], request  # a request the crash stopped says so
        # every change either applied whole or not at all
        for doc in docs:
            levels = admin.get(f"/api/v2/resources/{doc['pk']}/permissions").json()
            users = {u["id"]: u["permissions"] for u in levels["users"]}
            assert users.get(user["pk"]) in (None, "edit")
        # and the catalogue works as before
        r = admin.post("/api/v2/uploads/upload", files=shapefile_parts(DATA / "naturalearth_lowres"))
        assert poll(admin, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")["status"] == "finished"
    finally:
        again.stop()


def test_start_up_removes_what_stopped_processes_staged_and_keeps_what_live_ones_do(tmp_path):
    srv = Server(tmp_path / "data")
    srv.stop()
    tmp = srv.data_dir / "tmp"
    live = subprocess.Popen(["sleep", "60"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        start = Path(f"/proc/{live.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        for name, owner in (("document-live", f"{live.pid} {start}"), ("document-dead", f"{dead.pid} -"),
                            ("document-reused", f"{live.pid} 1"), ("thumbnail-unmarked", None)):
            (tmp / name / "incoming").mkdir(parents=True)
            (tmp / name / "incoming" / "part.bin").write_bytes(b"x" * 1000)
            if owner:
                (tmp / name / ".owner").write_text(owner)
        again = Server(srv.data_dir)
        try:
            left = sorted(p.name for p in tmp.iterdir())
            # a live worker's upload stays; a stopped process's goes at once, as does one whose
            # process id now belongs to another process; an unclaimed one waits ten minutes
            assert left == ["document-live", "thumbnail-unmarked"], left
        finally:
            again.stop()
    finally:
        live.kill()
        live.wait()
