"""Ingest: files from the server's import folder become documents, through a job that stages
the file and moves it into place; a crash in the middle leaves nothing behind."""

import os
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import ADMIN_PASSWORD, Server, assert_envelope, in_process, login, make_user, poll


@pytest.fixture(scope="module")
def ing(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("ingest") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    yield {"srv": srv, "admin": admin, "user": user, "imports": srv.data_dir / "import"}
    admin.close()
    srv.stop()


def test_a_file_of_the_import_folder_becomes_a_document(ing):
    srv, admin = ing["srv"], ing["admin"]
    content = b"%PDF-1.4 a small report\n" * 1000
    (ing["imports"] / "reports").mkdir(exist_ok=True)
    (ing["imports"] / "reports" / "annual report.pdf").write_bytes(content)
    r = admin.post("/api/v2/resources/ingest/document", json={"path": "reports/annual report.pdf"})
    assert r.status_code == 200, r.text
    status = poll(admin, r.json()["status_url"])
    assert status["status"] == "finished" and status["progress"] == 100, status
    out = status["output_params"]["output"]
    doc = admin.get(f"/api/v2/resources/{out['pk']}/").json()["resource"]
    assert doc["resource_type"] == "document" and doc["title"] == "annual report" and doc["uuid"] == out["uuid"]
    stored = srv.data_dir / "files" / out["uuid"] / "annual report.pdf"
    assert stored.read_bytes() == content
    assert (ing["imports"] / "reports" / "annual report.pdf").exists()  # the original stays where it was
    assert not any((srv.data_dir / "tmp").iterdir())
    row = admin.get(f"/api/v2/executionrequest/{r.json()['execution_id']}").json()["request"]
    assert row["name"] == "annual report.pdf" and row["action"] == "ingest" and row["source"] == "ingest"
    # with a title of its own, and deleted with its file
    r = admin.post("/api/v2/resources/ingest/document", data={"path": "reports/annual report.pdf",
                                                              "defaults": '{"title": "Report 2026"}'})
    out = poll(admin, r.json()["status_url"])["output_params"]["output"]
    assert admin.get(f"/api/v2/resources/{out['pk']}/").json()["resource"]["title"] == "Report 2026"
    r = admin.delete(f"/api/v2/resources/{out['pk']}/delete")
    assert poll(admin, r.json()["status_url"])["status"] == "finished"
    assert gone(srv.data_dir / "files" / out["uuid"])


def test_only_files_inside_the_import_folder_and_only_for_administrators(ing, tmp_path):
    srv, admin = ing["srv"], ing["admin"]
    (ing["imports"] / "ok.txt").write_text("fine")
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours")
    (ing["imports"] / "link.txt").symlink_to(outside)
    for path in ("../catalogue.sqlite3", str(outside), "link.txt", "nosuch.pdf", "", ".", "reports",
                 "ok.txt\x00.pdf", "..\\catalogue.sqlite3"):
        assert_envelope(admin.post("/api/v2/resources/ingest/document", json={"path": path}), 400, "invalid")
    for body in ({}, {"path": 3}, [1]):
        assert_envelope(admin.post("/api/v2/resources/ingest/document", json=body), 400, "invalid")
    assert_envelope(admin.post("/api/v2/resources/ingest/dataset", json={"path": "ok.txt"}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/resources/ingest/map", json={"path": "ok.txt"}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/resources/ingest/document",
                               json={"path": "ok.txt", "defaults": {"category": "nosuch"}}), 400, "invalid")
    with login(srv, ing["user"]) as c:
        assert_envelope(c.post("/api/v2/resources/ingest/document", json={"path": "ok.txt"}), 403, "permission_denied")
    with srv.client() as anon:
        assert_envelope(anon.post("/api/v2/resources/ingest/document", json={"path": "ok.txt"}), 401,
                        "not_authenticated")


def gone(folder: Path, seconds: float = 5) -> bool:
    """The files of a deleted resource are removed just after its record (the request is
    finished with the record); wait for that."""
    deadline = time.monotonic() + seconds
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return not folder.exists()


def kill_hard(srv: Server) -> None:
    """SIGKILL the server and its worker processes, as a power cut would stop them."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == srv.pid:
            children.append(int(stat.parent.name))
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    srv.proc.kill()
    srv.proc.wait()


def test_a_crash_during_ingest_leaves_nothing_half_done(tmp_path):
    srv = Server(tmp_path / "data")
    big = srv.data_dir / "import" / "big.bin"
    with open(big, "wb") as f:  # large enough to be caught while it is copied
        f.truncate(1024 * 1024 * 1024)
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        before = admin.get("/api/v2/resources/").json()["total"]
        receipt = admin.post("/api/v2/resources/ingest/document", json={"path": "big.bin"}).json()
        running = poll(admin, receipt["status_url"], until=("running", "finished", "failed"))
    assert running["status"] == "running", "the copy ended before the crash could interrupt it"
    kill_hard(srv)
    srv = Server(srv.data_dir)
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            status = admin.get(f"/api/v2/resource-service/execution-status/{receipt['execution_id']}").json()
            assert status["status"] == "failed" and "stopped while this was running" in status["log"]
            assert admin.get("/api/v2/resources/").json()["total"] == before
            assert admin.get("/api/v2/resources/", params={"filter{title}": "big"}).json()["total"] == 0
        assert not any((srv.data_dir / "tmp").iterdir())
        assert not any((srv.data_dir / "files").iterdir())
    finally:
        srv.stop()


def test_a_copy_has_its_own_copy_of_the_files(ing):
    srv, admin = ing["srv"], ing["admin"]
    (ing["imports"] / "map.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really" * 100)
    r = admin.post("/api/v2/resources/ingest/document", json={"path": "map.png"})
    original = poll(admin, r.json()["status_url"])["output_params"]["output"]
    r = admin.put(f"/api/v2/resources/{original['pk']}/copy")
    copy = poll(admin, r.json()["status_url"])["output_params"]["output"]
    files = srv.data_dir / "files"
    assert (files / copy["uuid"] / "map.png").read_bytes() == (files / original["uuid"] / "map.png").read_bytes()
    r = admin.delete(f"/api/v2/resources/{original['pk']}/delete")
    assert poll(admin, r.json()["status_url"])["status"] == "finished"
    assert gone(files / original["uuid"]) and (files / copy["uuid"] / "map.png").exists()


def test_a_shapefile_in_the_import_folder_becomes_a_dataset(ing):
    import shutil

    srv, admin = ing["srv"], ing["admin"]
    data = Path(__file__).parent.parent / "data" / "naturalearth_cities"
    target = ing["imports"] / "cities"
    shutil.copytree(data, target)
    r = admin.post("/api/v2/resources/ingest/dataset", json={"path": "cities/naturalearth_cities.shp"})
    assert r.status_code == 200, r.text
    status = poll(admin, r.json()["status_url"], timeout=60)
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    dataset = admin.get(f"/api/v2/datasets/{pk}/").json()["dataset"]
    assert dataset["subtype"] == "vector" and dataset["title"] == "naturalearth_cities"
    assert (srv.data_dir / "files" / dataset["uuid"] / "naturalearth_cities.dbf").exists()
    (target / "naturalearth_cities.dbf").unlink()
    assert_envelope(admin.post("/api/v2/resources/ingest/dataset", json={"path": "cities/naturalearth_cities.shp"}),
                    400, "invalid")
    assert not any((srv.data_dir / "tmp").iterdir())
