"""Ids are never given twice: after the newest resource, user, group, execution or extra metadata
item is deleted, the next one gets a new id. Data folders from before keep every row and id."""

import sqlite3
import uuid

from catalogue_app.store import db, migrations
from tests.conftest import ADMIN_PASSWORD, in_process, make_group, make_user, poll


def _document(client, title: str) -> int:
    r = client.post("/api/v2/documents", files={"doc_file": ("a.txt", b"a\n", "text/plain")}, data={"title": title})
    assert r.status_code == 201, r.text
    return int(r.json()["document"]["pk"])


def test_a_deleted_newest_resource_id_is_not_given_again(admin):
    first, newest = _document(admin, "First"), _document(admin, "Newest")
    assert admin.delete(f"/api/v2/resources/{newest}").status_code == 204
    following = _document(admin, "Following")
    assert following > newest > first
    # the asynchronous delete too
    r = admin.delete(f"/api/v2/resources/{following}/delete")
    assert r.status_code == 200, r.text
    assert poll(admin, r.json()["status_url"])["status"] == "finished"
    assert _document(admin, "After") > following


def test_a_deleted_newest_user_or_group_id_is_not_given_again(admin):
    user = make_user(admin)
    assert admin.delete(f"/api/v2/users/{user['pk']}").status_code in (200, 204)
    assert make_user(admin)["pk"] > user["pk"]
    group = make_group(admin)
    assert admin.delete(f"/api/v2/groups/{group['pk']}").status_code in (200, 204)
    again = make_group(admin)
    assert again["pk"] > group["pk"] and again["group"]["pk"] > group["group"]["pk"]


def test_a_deleted_newest_extra_metadata_item_id_is_not_given_again(admin):
    pk = _document(admin, "With extras")
    item = {"filter_header": "h", "field_name": "n", "field_label": "l", "field_value": "v"}
    made = admin.post(f"/api/v2/resources/{pk}/extra_metadata", json=[item]).json()
    newest = max(i["id"] for i in made)
    assert admin.request("DELETE", f"/api/v2/resources/{pk}/extra_metadata", json=[newest]).json() == []
    again = admin.post(f"/api/v2/resources/{pk}/extra_metadata", json=[item]).json()
    assert [i["id"] for i in again] == [newest + 1]


def test_every_counted_table_has_a_counter(server, admin):
    conn = sqlite3.connect(server.data_dir / "catalogue.sqlite3")
    try:
        for table in migrations.COUNTED_TABLES:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0]
            assert "AUTOINCREMENT" in sql.upper(), table
    finally:
        conn.close()


def _old_data_folder(folder) -> dict:
    """A data folder as the previous version left it (schema 12): users, a group, resources
    with extents, text, keywords and permissions, an execution; the newest resource deleted."""
    folder.mkdir(parents=True)
    db.migrate(folder / "catalogue.sqlite3", upto=12)
    conn = sqlite3.connect(folder / "catalogue.sqlite3", isolation_level=None)
    conn.execute("BEGIN")
    now = "2026-01-01T00:00:00.000000Z"
    owner = conn.execute("INSERT INTO users (username, email, password, date_joined) VALUES ('keeper', 'k@example.org', 'x', ?)",
                         (now,)).lastrowid
    ids = []
    for n, (title, box) in enumerate((("Glacier lakes of Norway", (5, 58, 31, 71)), ("Rivers of Chile", (-76, -56, -66, -17)),
                                      ("Deleted newest", (0, 0, 1, 1)))):
        rid = conn.execute(
            "INSERT INTO resources (uuid, resource_type, owner_id, title, abstract, created, last_updated,"
            " ll_x0, ll_y0, ll_x1, ll_y1, bbox_x0, bbox_y0, bbox_x1, bbox_y1, srid)"
            " VALUES (?, 'document', ?, ?, 'old data', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'EPSG:4326')",
            (str(uuid.uuid4()), owner, title, now, now, *box, *box)).lastrowid
        conn.execute("INSERT INTO resource_perms (resource_id, group_id, perm) VALUES (?, 1, 'view_resourcebase')", (rid,))
        conn.execute("UPDATE resources SET public_view = 1 WHERE id = ?", (rid,))
        ids.append(rid)
    keyword = conn.execute("INSERT INTO keywords (name, slug) VALUES ('lakes', 'lakes')").lastrowid
    conn.execute("INSERT INTO resource_keywords (resource_id, keyword_id) VALUES (?, ?)", (ids[0], keyword))
    conn.execute("DELETE FROM resources WHERE id = ?", (ids[2],))
    conn.execute("COMMIT")
    conn.close()
    return {"owner": owner, "ids": ids[:2], "deleted": ids[2]}


def test_a_data_folder_from_before_keeps_its_rows_and_gets_counters(tmp_path):
    old = _old_data_folder(tmp_path / "data")
    srv = in_process(tmp_path / "data")
    try:
        anon, admin = srv.client(), srv.client(auth=("admin", ADMIN_PASSWORD))
        rows = anon.get("/api/v2/resources", params={"sort[]": "pk"}).json()["resources"]
        assert [int(r["pk"]) for r in rows] == old["ids"]
        assert [r["owner"]["username"] for r in rows] == ["keeper", "keeper"]
        # the text and extent indexes still point at the right rows, and keywords at theirs
        found = anon.get("/api/v2/resources", params={"search": "lakes", "search_fields": "title"}).json()["resources"]
        assert [int(r["pk"]) for r in found] == [old["ids"][0]]
        chile = anon.get("/api/v2/resources", params={"extent": "-80,-40,-60,-20"}).json()["resources"]
        assert [int(r["pk"]) for r in chile] == [old["ids"][1]]
        tagged = anon.get("/api/v2/resources", params={"filter{keywords.slug}": "lakes"}).json()["resources"]
        assert [int(r["pk"]) for r in tagged] == [old["ids"][0]]
        # new ids continue after the highest one kept, and are not reused after a delete
        first = _document(admin, "New one")
        assert first == old["ids"][-1] + 1
        assert admin.delete(f"/api/v2/resources/{first}").status_code == 204
        assert _document(admin, "Newer one") == first + 1
        user = make_user(admin)
        assert admin.delete(f"/api/v2/users/{user['pk']}").status_code in (200, 204)
        assert make_user(admin)["pk"] == user["pk"] + 1
    finally:
        srv.stop()
    conn = sqlite3.connect(tmp_path / "data" / "catalogue.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        conn.execute("INSERT INTO resource_text (resource_text) VALUES ('integrity-check')")
        assert conn.execute("SELECT count(*) FROM resource_keywords").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM resource_perms WHERE group_id = 1").fetchone()[0] >= 2
    finally:
        conn.close()
