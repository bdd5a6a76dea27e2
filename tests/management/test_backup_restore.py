"""A backup taken while a client writes continuously, restored into a new folder: every resource,
permission and file as it was at the snapshot (checksums), and the restored catalogue serves."""

from __future__ import annotations

import json
import sqlite3
import tarfile
import threading
import time

import pytest

from tests.conftest import ADMIN_PASSWORD, Server, make_group, make_user, poll
from tests.management.backup_helpers import cli, sha256, tree, upload_document, upload_geotiff, upload_shapefile, wait_thumbnail


def set_permissions(client, pk: int, body: dict) -> None:
    r = client.put(f"/api/v2/resources/{pk}/permissions", json=body)
    assert r.status_code == 200, r.text
    assert poll(client, r.json()["status_url"])["status"] == "finished"


def rows(data_dir, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{data_dir / 'catalogue.sqlite3'}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


class Writer(threading.Thread):
    """A client that keeps changing a title and adding documents until stopped."""

    def __init__(self, srv: Server, target: int):
        super().__init__(daemon=True)
        self.srv, self.target = srv, target
        self.stop = threading.Event()
        self.done: list[float] = []  # when each write was answered
        self.titles: list[str] = []
        self.documents: list[int] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
                i = 0
                while not self.stop.is_set():
                    i += 1
                    title = f"Edited {i}"
                    r = c.patch(f"/api/v2/resources/{self.target}", json={"title": title})
                    assert r.status_code == 200, r.text
                    self.titles.append(title)
                    if i % 2 == 0:
                        doc = upload_document(c, f"w{i}.txt", f"written while backing up {i}\n".encode(), f"Written {i}")
                        self.documents.append(int(doc["pk"]))
                    self.done.append(time.monotonic())
        except BaseException as exc:  # seen by the test
            self.error = exc


@pytest.fixture(scope="module")
def backed_up(tmp_path_factory):
    base = tmp_path_factory.mktemp("backup")
    srv = Server(base / "live")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    viewer, team = make_user(admin), make_group(admin)
    vector = upload_shapefile(admin)
    raster = upload_geotiff(admin)
    doc = upload_document(admin, "notes.txt", b"field notes\n", "Field notes")
    scratch = upload_document(admin, "scratch.txt", b"scratch\n", "Scratch")
    set_permissions(admin, vector["pk"], {"users": [{"id": viewer["pk"], "permissions": "download"}],
                                          "groups": [{"id": team["group"]["pk"],
                                                      "permissions": "view"}]})
    set_permissions(admin, raster["pk"], {"groups": [{"id": 1, "permissions": "none"}, {"id": 2, "permissions": "view"}]})
    set_permissions(admin, doc["pk"], {"users": [{"id": viewer["pk"], "permissions": "edit"}]})
    for pk in (vector["pk"], raster["pk"]):
        wait_thumbnail(admin, pk)
    untouched = [int(vector["pk"]), int(raster["pk"]), int(doc["pk"])]

    writer = Writer(srv, scratch["pk"])
    writer.start()
    time.sleep(0.5)
    archive = base / "catalogue.tar"
    started = time.monotonic()
    backup = cli("backup", "--output", str(archive), data_dir=srv.data_dir)
    ended = time.monotonic()
    time.sleep(0.3)
    writer.stop.set()
    writer.join(timeout=30)
    assert writer.error is None, writer.error
    assert backup.returncode == 0, backup.stdout + backup.stderr
    print(f"\nbackup: {ended - started:.2f} s for {archive.stat().st_size / 1e6:.1f} MB;"
          f" {backup.stdout.strip()}")
    during = [t for t in writer.done if started < t < ended]
    live = {pk: {"resource": admin.get(f"/api/v2/resources/{pk}").json()["resource"],
                 "perms": admin.get(f"/api/v2/resources/{pk}/permissions").json()} for pk in untouched}
    restore = cli("restore", str(archive), data_dir=base / "restored")
    assert restore.returncode == 0, restore.stdout + restore.stderr
    yield {"srv": srv, "admin": admin, "base": base, "archive": archive, "writer": writer, "during": during,
           "live": live, "untouched": untouched, "vector": vector, "raster": raster, "doc": doc,
           "scratch": scratch, "restore": restore, "viewer": viewer}
    admin.close()
    srv.stop()


def test_the_backup_ran_while_the_client_wrote(backed_up):
    assert len(backed_up["during"]) >= 1, "no write was answered while the backup ran"
    assert "Restored" in backed_up["restore"].stdout


def test_the_archive_holds_what_its_manifest_lists(backed_up):
    with tarfile.open(backed_up["archive"]) as tar:
        names = tar.getnames()
        assert names[-1] == "manifest.json" and names[0] == "catalogue.sqlite3"
        manifest = json.load(tar.extractfile("manifest.json"))
        assert not any(n.endswith(("-wal", "-shm", ".lock")) or n.startswith(("tmp/", "import/")) for n in names)
    assert manifest["format"] == "catalogue-backup" and manifest["format_version"] == 1
    assert manifest["user_version"] == rows(backed_up["base"] / "restored", "PRAGMA user_version")[0][0]
    assert manifest["missing"] == []
    restored = backed_up["base"] / "restored"
    assert sorted(m["name"] for m in manifest["members"]) == sorted(names[:-1])
    for member in manifest["members"]:
        path = restored / member["name"]
        if member["name"] != "catalogue.sqlite3":  # (a restore may migrate the database)
            assert path.stat().st_size == member["size"] and sha256(path) == member["sha256"], member
    assert manifest["counts"]["resources"] == rows(restored, "SELECT count(*) FROM resources")[0][0]
    assert manifest["counts"]["users"] == rows(restored, "SELECT count(*) FROM users")[0][0]


def test_the_restored_files_are_the_originals(backed_up):
    live_tree, restored_tree = tree(backed_up["srv"].data_dir), tree(backed_up["base"] / "restored")
    assert restored_tree, "nothing restored"
    for name, digest in restored_tree.items():
        assert live_tree.get(name) == digest, name
    restored = backed_up["base"] / "restored"
    # every file the restored rows name is there (the snapshot is consistent), and nothing else
    r = cli("check", "--min-age", "0", data_dir=restored)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no problems" in r.stdout
    # the untouched resources have all their files, as in the live catalogue
    for pk in backed_up["untouched"]:
        for (name,) in rows(restored, f"SELECT coalesce(d.folder, r.uuid) || '/' || f.name FROM resource_files f"
                                      f" JOIN resources r ON r.id = f.resource_id LEFT JOIN datasets d"
                                      f" ON d.resource_id = r.id WHERE r.id = {pk}"):
            assert restored_tree[f"files/{name}"] == live_tree[f"files/{name}"]


def test_the_restored_resources_are_a_snapshot(backed_up):
    restored = backed_up["base"] / "restored"
    writer = backed_up["writer"]
    ids = {r[0] for r in rows(restored, "SELECT id FROM resources")}
    assert set(backed_up["untouched"]) | {int(backed_up["scratch"]["pk"])} <= ids
    written = [pk for pk in writer.documents if pk in ids]
    assert written == writer.documents[:len(written)], "the documents restored are not those written first"
    assert len(written) < len(writer.documents), "the writes after the backup should not be in it"
    title = rows(restored, f"SELECT title FROM resources WHERE id = {backed_up['scratch']['pk']}")[0][0]
    assert title == "Scratch" or title in writer.titles
    assert title != writer.titles[-1]


def test_the_restored_catalogue_serves(backed_up):
    restored = backed_up["base"] / "restored"
    srv = Server(restored)
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as c, backed_up["srv"].client(auth=("admin", ADMIN_PASSWORD)) as live:
            def here(value):  # links name the server that answers
                return json.dumps(value, sort_keys=True).replace(srv.url, "")

            def there(value):
                return json.dumps(value, sort_keys=True).replace(backed_up["srv"].url, "")

            listing = c.get("/api/v2/resources/", params={"page_size": 1000}).json()
            assert listing["total"] == rows(restored, "SELECT count(*) FROM resources")[0][0]
            users = {u["username"] for u in c.get("/api/v2/users/", params={"page_size": 100}).json()["users"]}
            assert backed_up["viewer"]["username"] in users
            for pk in backed_up["untouched"]:
                was, now = backed_up["live"][pk], c.get(f"/api/v2/resources/{pk}").json()["resource"]
                for key in ("uuid", "title", "abstract", "resource_type", "alternate", "owner", "extent", "state"):
                    assert here(now.get(key)) == there(was["resource"].get(key)), (pk, key)
                assert here(c.get(f"/api/v2/resources/{pk}/permissions").json()) == there(was["perms"]), pk
            vector, raster, doc = backed_up["vector"], backed_up["raster"], backed_up["doc"]
            assert c.get(f"/api/v2/datasets/{vector['pk']}").json()["dataset"]["alternate"] == vector["alternate"]
            r = c.get(f"/datasets/{raster['alternate']}/dataset_download")
            assert r.status_code == 200 and r.content == live.get(f"/datasets/{raster['alternate']}/dataset_download").content
            r = c.get(f"/datasets/{vector['alternate']}/dataset_download")
            assert r.status_code == 200 and r.content[:2] == b"PK"
            r = c.get(f"/documents/{doc['pk']}/download")
            assert r.status_code == 200 and r.content == b"field notes\n"
            getmap = {"service": "WMS", "version": "1.3.0", "request": "GetMap", "layers": vector["alternate"],
                      "styles": "", "crs": "EPSG:4326", "bbox": "-90,-180,90,180", "width": 256, "height": 128,
                      "format": "image/png"}
            r = c.get("/geoserver/ows", params=getmap)
            assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:300]
            assert r.content == live.get("/geoserver/ows", params=getmap).content
            # and it is a catalogue one can write to
            r = c.patch(f"/api/v2/resources/{doc['pk']}", json={"title": "Restored notes"})
            assert r.status_code == 200, r.text
            assert c.get("/api/v2/resources/", params={"search": "Restored", "search_fields": ["title"]}).json()["total"] == 1
    finally:
        srv.stop()
