"""``check`` finds an orphan folder and file, a deleted file of a dataset, a stale text index and a
stale extent index made by hand on a running catalogue; ``repair`` fixes them (orphans moved to
lost+found/, the dataset marked INVALID), and ``check`` is clean again."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from catalogue_app.store.migrations import WORD_COLUMNS, WORD_VALUES
from tests.api.test_uploads import CITIES
from tests.conftest import ADMIN_PASSWORD, Server
from tests.management.backup_helpers import cli, upload_document, upload_shapefile, wait_thumbnail


def sql(data_dir, statement: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            return conn.execute(statement, params).fetchall()
    finally:
        conn.close()


def on_disk(data_dir) -> int:
    return sum(p.stat().st_size for p in (data_dir / "catalogue.sqlite3", data_dir / "catalogue.sqlite3-wal")
               if p.exists())


def found_by_search(client, words: str) -> set[int]:
    r = client.get("/api/v2/resources/", params={"search": words, "search_fields": ["title"], "page_size": 100})
    return {int(x["pk"]) for x in r.json()["resources"]}


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("check") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    dataset = upload_shapefile(admin, CITIES, "Cities")
    wait_thumbnail(admin, dataset["pk"])
    doc = upload_document(admin, "report.txt", b"a report\n", "Quarterly zebra report")
    yield {"srv": srv, "admin": admin, "dataset": dataset, "doc": doc}
    admin.close()
    srv.stop()


def test_a_new_catalogue_is_clean(cat):
    r = cli("check", "--min-age", "0", data_dir=cat["srv"].data_dir)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no problems" in r.stdout


def test_check_finds_and_repair_fixes(cat):
    data, admin = cat["srv"].data_dir, cat["admin"]
    pk, doc = int(cat["dataset"]["pk"]), int(cat["doc"]["pk"])
    # an orphan folder in files/ and an orphan thumbnail
    (data / "files" / "orphan-folder").mkdir()
    (data / "files" / "orphan-folder" / "left.txt").write_bytes(b"left behind\n")
    (data / "thumbs" / "nobody-0123456789ab.png").write_bytes(b"\x89PNG not really")
    # a dataset's file deleted
    folder = sql(data, "SELECT folder FROM datasets WHERE resource_id = ?", (pk,))[0][0]
    dbf = next((data / "files" / folder).glob("*.dbf"))
    kept = dbf.read_bytes()
    dbf.unlink()
    # the trigram index loses a row (FTS5's own 'delete', no trigger involved), the R*Tree a box
    sql(data, "INSERT INTO resource_text (resource_text, rowid, title, abstract)"
              " SELECT 'delete', id, title, abstract FROM resources WHERE id = ?", (doc,))
    sql(data, "DELETE FROM resource_extents WHERE id = ?", (2 * pk,))

    r = cli("check", "--min-age", "0", data_dir=data)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "ORPHAN_FOLDER files/orphan-folder" in lines
    assert "ORPHAN_FILE thumbs/nobody-0123456789ab.png" in lines
    assert f"MISSING_FILE resource {pk} files/{folder}/{dbf.name}" in lines
    assert any(line.startswith("STALE_INDEX resource_text:") for line in lines), lines
    assert any(line.startswith("STALE_EXTENTS resource_extents:") for line in lines), lines
    assert "problem(s) found" in r.stderr
    # --quick never holds the writers: the counts still show the stale indexes
    quick = cli("check", "--quick", "--min-age", "0", data_dir=data)
    assert quick.returncode == 1 and "STALE_INDEX resource_text:" in quick.stdout and "quick_check" in quick.stdout
    # the default age leaves young orphans alone (a job may be moving them into place)
    young = cli("check", data_dir=data)
    assert "ORPHAN_FOLDER" not in young.stdout and young.returncode == 1

    dry = cli("repair", "--dry-run", "--min-age", "0", data_dir=data)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "would move files/orphan-folder to lost+found/" in dry.stdout
    assert (data / "files" / "orphan-folder").is_dir()
    assert cli("check", "--min-age", "0", data_dir=data).returncode == 1

    fixed = cli("repair", "--min-age", "0", data_dir=data)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "fixed: rebuild the text index resource_text" in fixed.stdout
    assert f"fixed: mark resource {pk} INVALID" in fixed.stdout
    assert not (data / "files" / "orphan-folder").exists()
    moved = list((data / "lost+found").glob("*/files/orphan-folder/left.txt"))
    assert len(moved) == 1 and moved[0].read_bytes() == b"left behind\n"
    assert list((data / "lost+found").glob("*/thumbs/nobody-0123456789ab.png"))
    detail = admin.get(f"/api/v2/resources/{pk}").json()["resource"]
    assert detail["state"] == "INVALID" and detail["processed"] is False
    assert detail["title"] == "Cities"  # the record is kept

    again = cli("check", "--min-age", "0", data_dir=data)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"NOTE resource {pk} is marked INVALID" in again.stdout

    # the file comes back: repair undoes its mark
    dbf.write_bytes(kept)
    r = cli("check", "--min-age", "0", data_dir=data)
    assert r.returncode == 1 and f"INVALID_MARK resource {pk}" in r.stdout
    assert cli("repair", "--min-age", "0", data_dir=data).returncode == 0
    assert admin.get(f"/api/v2/resources/{pk}").json()["resource"]["state"] == "PROCESSED"
    assert cli("check", "--min-age", "0", data_dir=data).returncode == 0


def test_the_word_index_and_a_missing_thumbnail(cat):
    data, admin = cat["srv"].data_dir, cat["admin"]
    pk, doc = int(cat["dataset"]["pk"]), int(cat["doc"]["pk"])
    # the contentless word index loses a row: its row count tells
    sql(data, f"INSERT INTO resource_words (resource_words, rowid, {WORD_COLUMNS})"
              f" SELECT 'delete', id, {WORD_VALUES.format('resources')} FROM resources WHERE id = ?", (doc,))
    assert doc not in found_by_search(admin, "zebra")  # a search of a word reads this index
    url = sql(data, "SELECT thumbnail_url FROM resources WHERE id = ?", (pk,))[0][0]
    thumb = data / "thumbs" / url.rsplit("/", 1)[1]
    shutil.move(thumb, data.parent / thumb.name)
    r = cli("check", "--min-age", "0", data_dir=data)
    assert r.returncode == 1
    assert any(line.startswith("STALE_INDEX resource_words:") for line in r.stdout.splitlines()), r.stdout
    assert f"MISSING_THUMBNAIL resource {pk} thumbs/{thumb.name}" in r.stdout
    r = cli("repair", "--min-age", "0", data_dir=data)
    assert r.returncode == 0, r.stdout + r.stderr
    assert admin.get(f"/api/v2/resources/{pk}").json()["resource"]["thumbnail_url"] in (None, "")
    assert cli("check", "--min-age", "0", data_dir=data).returncode == 0
    assert doc in found_by_search(admin, "zebra")


def test_vacuum_gives_space_back_while_the_server_serves(cat):
    data, admin = cat["srv"].data_dir, cat["admin"]
    # make free pages: many resources' worth of rows written, then deleted
    sql(data, "CREATE TABLE IF NOT EXISTS scratch (x BLOB)")
    sql(data, "INSERT INTO scratch SELECT zeroblob(4096) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
              " SELECT i + 1 FROM n WHERE i < 5000) SELECT i FROM n)")
    sql(data, "DROP TABLE scratch")
    before = on_disk(data)
    r = cli("vacuum", data_dir=data)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Before:" in r.stdout and "After:" in r.stdout and "given back" in r.stdout
    free_after = sql(data, "PRAGMA freelist_count")[0][0]
    assert free_after == 0, r.stdout
    assert on_disk(data) < before - 15_000_000, (before, on_disk(data), r.stdout)
    assert admin.get("/api/v2/resources/").status_code == 200
    assert cli("check", "--min-age", "0", data_dir=data).returncode == 0
