"""Documents: POST /api/v2/documents with a file or a remote address (as geonodectl sends it),
the document fields on /api/v2/documents, the content from /documents/{pk}/download and /link,
who may read it, and refused uploads that leave nothing behind."""

import io
import sqlite3
import struct
import time
import uuid
import zipfile
import zlib
from pathlib import Path

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_group, make_user, wait_finished
from tests.row_shape import check_row

DATA = Path(__file__).parent.parent / "data"
ANON_GROUP, REGISTERED_GROUP = 1, 2
GEONODECTL_KEYS = ("title", "state", "subtype", "mime_type", "detail_url", "href")
SIZE_LIMIT = "/api/v2/upload-size-limits/document_upload_size"
PARALLEL_LIMIT = "/api/v2/upload-parallelism-limits/default_max_parallel_uploads"


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("documents") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "member", "stranger")}
    team = make_group(admin)
    r = admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [people["member"]["pk"]], "role": "member"})
    assert r.status_code == 200, r.text
    clients = {name: login(srv, user) for name, user in people.items()}
    clients["admin"], clients["anon"] = admin, srv.client()
    yield {"srv": srv, "c": clients, "people": people, "team": team}
    for c in clients.values():
        c.close()
    srv.stop()


def pdf() -> bytes:
    return b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def png() -> bytes:
    """A valid 1x1 RGB PNG."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x80\x00")) + chunk(b"IEND", b""))


def upload(client, name: str, content: bytes, **fields):
    return client.post("/api/v2/documents", files={"doc_file": (name, content, "application/octet-stream")},
                       data=fields)


def raw_upload(client, filename: bytes, content: bytes):
    """A multipart body written by hand, for file names an HTTP library would escape."""
    body = (b"--b0undary\r\nContent-Disposition: form-data; name=\"doc_file\"; filename=\"" + filename
            + b"\"\r\nContent-Type: application/pdf\r\n\r\n" + content + b"\r\n--b0undary--\r\n")
    return client.post("/api/v2/documents", content=body,
                       headers={"content-type": "multipart/form-data; boundary=b0undary"})


def created(response) -> dict:
    assert response.status_code == 201, response.text
    return response.json()["document"]


def snapshot(d) -> tuple:
    """What a refused upload must leave unchanged: the documents, files/ and an empty tmp/."""
    data = d["srv"].data_dir
    total = d["c"]["admin"].get("/api/v2/documents/").json()["total"]
    folders = sorted(p.name for p in (data / "files").iterdir()) if (data / "files").exists() else []
    return total, folders, sorted(p.name for p in (data / "tmp").iterdir()) if (data / "tmp").exists() else []


def change_perms(client, pk, body) -> None:
    """PUT the permissions and wait until the job has applied them (as geonodectl does)."""
    r = client.put(f"/api/v2/resources/{pk}/permissions", json=body)
    assert r.status_code == 200, r.text
    wait_finished(client, r.json()["status_url"])


def test_a_file_becomes_a_document(d):
    srv, c = d["srv"], d["c"]
    content = pdf()
    doc = created(upload(c["owner"], "report.pdf", content, title="Annual report", abstract="<b>Figures</b>"))
    for key in GEONODECTL_KEYS:
        assert isinstance(doc[key], str) and doc[key], key
    pk = doc["pk"]
    assert doc["title"] == doc["name"] == "Annual report" and doc["abstract"] == "<b>Figures</b>"
    assert (doc["extension"], doc["mime_type"], doc["subtype"]) == ("pdf", "application/pdf", "text")
    assert doc["state"] == "PROCESSED" and doc["sourcetype"] == "LOCAL" and doc["doc_url"] is None
    assert doc["href"] == f"{srv.url}/documents/{pk}/link"
    assert doc["detail_url"] == f"{srv.url}/catalogue/#/document/{pk}"
    assert doc["download_urls"] == [{"url": f"{srv.url}/documents/{pk}/download", "ajax_safe": True, "default": True}]
    assert doc["owner"]["username"] == d["people"]["owner"]["username"] and doc["resource_type"] == "document"
    assert (srv.data_dir / "files" / doc["uuid"] / "report.pdf").read_bytes() == content
    # the same document on its own, in the list, and in the base shape on /resources
    assert c["owner"].get(f"/api/v2/documents/{pk}").json()["document"] == doc
    assert c["anon"].get(f"/api/v2/documents/{pk}/").json()["document"]["perms"] == ["view_resourcebase",
                                                                                    "download_resourcebase"]
    rows = c["owner"].get("/api/v2/documents/", params={"page_size": 100}).json()["documents"]
    row = next(r for r in rows if r["pk"] == pk)
    check_row(row, srv.url)
    assert {k: row[k] for k in ("name", "href", "extension", "mime_type", "doc_url")} == \
        {k: doc[k] for k in ("name", "href", "extension", "mime_type", "doc_url")}
    base = c["owner"].get(f"/api/v2/resources/{pk}").json()["resource"]
    assert "extension" not in base and "href" not in base and base["title"] == "Annual report"
    # the content, as an attachment and inline, with and without a trailing slash, and HEAD
    for path, disposition in ((f"/documents/{pk}/download", "attachment"), (f"/documents/{pk}/link", "inline")):
        for slash in ("", "/"):
            r = c["anon"].get(path + slash)
            assert r.status_code == 200 and r.content == content
            assert r.headers["content-type"] == "application/pdf"
            assert r.headers["content-disposition"] == f'{disposition}; filename="report.pdf"'
        r = c["anon"].head(path)
        assert r.status_code == 200 and r.content == b"" and r.headers["content-length"] == str(len(content))


@pytest.mark.parametrize("name, make, extension, mime, subtype", [
    ("pixel.png", png, "png", "image/png", "image"),
    ("notes.txt", lambda: "Field notes, day 1\nRiver level: high\n".encode(), "txt", "text/plain", "text"),
    ("levels.csv", lambda: b"station,level\nA,1.5\nB,2.25\n", "csv", "text/csv", "text"),
    ("RGB.byte.tif", lambda: (DATA / "RGB.byte.tif").read_bytes(), "tif", "image/tiff", "image"),
    ("SHOUTING.PDF", pdf, "pdf", "application/pdf", "text"),  # GeoNode refuses upper case; this catalogue does not
])
def test_file_types_and_the_default_title(d, name, make, extension, mime, subtype):
    content = make()
    doc = created(upload(d["c"]["owner"], name, content))
    assert doc["title"] == doc["name"] == name
    assert (doc["extension"], doc["mime_type"], doc["subtype"]) == (extension, mime, subtype)
    r = d["c"]["owner"].get(f"/documents/{doc['pk']}/download")
    assert r.status_code == 200 and r.content == content and r.headers["content-type"].split(";")[0] == mime


def test_an_archive_and_an_explicit_extension(d):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for path in (DATA / "naturalearth_lowres").iterdir():
            z.write(path, path.name)
    doc = created(upload(d["c"]["owner"], "countries.zip", archive.getvalue(), title="Countries"))
    assert (doc["extension"], doc["mime_type"], doc["subtype"]) == ("zip", "application/zip", "archive")
    assert d["c"]["owner"].get(f"/documents/{doc['pk']}/download").content == archive.getvalue()
    # a file without an extension of its own, told by the form
    doc = created(upload(d["c"]["owner"], "README", b"read me", extension="txt"))
    assert doc["title"] == "README" and (doc["extension"], doc["mime_type"]) == ("txt", "text/plain")
    r = d["c"]["owner"].get(f"/documents/{doc['pk']}/link")
    assert r.content == b"read me" and r.headers["content-disposition"] == 'inline; filename="README"'
    # a blank title is the file name; files under other names are read and dropped
    doc = created(d["c"]["owner"].post("/api/v2/documents", data={"title": " ", "keywords": "rivers, levels"},
                                       files={"doc_file": ("a.pdf", pdf()), "thumbnail": ("t.png", png())}))
    assert doc["title"] == "a.pdf" and {k["name"] for k in doc["keywords"]} == {"rivers", "levels"}
    assert [p.name for p in (d["srv"].data_dir / "files" / doc["uuid"]).iterdir()] == ["a.pdf"]


def test_remote_documents(d):
    c = d["c"]
    url = "https://maps.example.org/static/overview%20map.png?size=large"
    doc = created(c["owner"].post("/api/v2/documents/", files={"doc_url": (None, url)}))
    assert doc["title"] == doc["name"] == "overview map.png" and doc["doc_url"] == doc["href"] == url
    assert (doc["extension"], doc["mime_type"], doc["subtype"], doc["sourcetype"]) == ("png", None, "image", "REMOTE")
    assert doc["download_urls"][0]["ajax_safe"] is False
    for path in ("download", "link", "download/"):
        r = c["anon"].get(f"/documents/{doc['pk']}/{path}")
        assert r.status_code == 302 and r.headers["location"] == url
    assert not (d["srv"].data_dir / "files" / doc["uuid"]).exists()
    # no extension in the path: the form says it (a plain form works as well as multipart)
    doc = created(c["owner"].post("/api/v2/documents", data={"doc_url": "http://example.org/reports/latest",
                                                            "extension": "PDF", "title": "Latest report"}))
    assert (doc["title"], doc["extension"], doc["subtype"]) == ("Latest report", "pdf", "text")


def test_remote_document_without_extension_asks_for_it(d):
    c, before = d["c"], snapshot(d)
    for url in ("https://example.org/", "https://example.org/download", "https://example.org/v1.0/file"):
        r = c["owner"].post("/api/v2/documents", files={"doc_url": (None, url)})
        assert_envelope(r, 400, "document_exception")
        assert "extension" in r.json()["errors"][0]
    assert_envelope(c["owner"].post("/api/v2/documents", files={"doc_url": (None, "https://example.org/page.php")}),
                    400, "document_exception", "The file provided is not in the supported extensions list")
    for url in ("ftp://example.org/a.pdf", "javascript:alert(1)//a.pdf", "file:///etc/passwd.txt", "example.org/a.pdf",
                "https:///a.pdf", "https://exa mple.org/a.pdf"):
        assert_envelope(c["owner"].post("/api/v2/documents", files={"doc_url": (None, url)}), 400, "invalid")
    assert snapshot(d) == before


def test_refused_uploads_leave_nothing(d):
    c, before = d["c"], snapshot(d)
    owner = c["owner"]
    cases = [
        (owner.post("/api/v2/documents", files={"title": (None, "Nothing")}),
         "document_exception", "A file, file path or URL must be speficied"),
        (owner.post("/api/v2/documents", files={"doc_file": ("a.pdf", pdf()), "doc_url": (None, "https://x.org/a.pdf")}),
         "document_exception", "Either a file or a URL must be specified, not both"),
        (upload(owner, "tool.exe", b"MZ\x90\x00"), "document_exception",
         "The file provided is not in the supported extensions list"),
        (upload(owner, "Makefile", b"all:\n"), "document_exception",
         "The file provided is not in the supported extensions list"),
        (upload(owner, "page.pdf", pdf(), extension="html"), "document_exception",
         "The file provided is not in the supported extensions list"),
        (owner.post("/api/v2/documents", files={"file_path": (None, "/etc/passwd")}), "document_exception", None),
        (owner.post("/api/v2/documents", files={"doc_file": (None, "not a file")}), "invalid", None),
        (upload(owner, "empty.txt", b""), "invalid", "doc_file: The submitted file is empty."),
        (upload(owner, "a.pdf", pdf(), category="nosuch"), "invalid", None),
        (upload(owner, "a.pdf", pdf(), extent="{not json"), "invalid", None),
    ]
    for response, code, message in cases:
        assert_envelope(response, 400, code, message)
    # two files in doc_file, a broken multipart body, no boundary, a body that is neither form nor JSON
    r = owner.post("/api/v2/documents", files=[("doc_file", ("a.pdf", pdf())), ("doc_file", ("b.pdf", pdf()))])
    assert_envelope(r, 400, "invalid")
    bad = {"content-type": "multipart/form-data; boundary=xyz"}
    assert_envelope(owner.post("/api/v2/documents", content=b"--xyz\r\nContent-Disposition: form-data; name=\"doc_file\"; "
                                                            b"filename=\"a.pdf\"\r\n\r\n%PDF", headers=bad), 400, "invalid")
    assert_envelope(owner.post("/api/v2/documents", content=b"--xyz--\r\n",
                               headers={"content-type": "multipart/form-data"}), 400, "invalid")
    r = owner.post("/api/v2/documents", content=b"doc_file=report.pdf", headers={"content-type": "text/plain"})
    assert r.status_code in (400, 415) and r.json()["success"] is False
    r = owner.post("/api/v2/documents", content=b"{not json", headers={"content-type": "application/json"})
    assert_envelope(r, 400, "parse_error")
    # anonymous callers may not add documents
    assert_envelope(c["anon"].post("/api/v2/documents", files={"doc_file": ("a.pdf", pdf())}), 401, "not_authenticated")
    assert_envelope(c["anon"].post("/api/v2/documents", json={"title": "x"}), 401, "not_authenticated")
    assert snapshot(d) == before


def test_the_size_limit(d):
    c, admin = d["c"], d["c"]["admin"]
    before = snapshot(d)
    assert admin.patch(SIZE_LIMIT, json={"max_size": 1000}).status_code == 200
    try:
        for size in (1001, 3 * 1024 * 1024):
            assert_envelope(upload(c["owner"], "big.pdf", b"%" * size), 400, "total_upload_size_exceeded",
                            "Total upload size exceeds 1000\u00a0bytes. Please try again with smaller files.")
        assert snapshot(d) == before
        doc = created(upload(c["owner"], "small.pdf", b"%PDF-" + b"%" * 995))  # the limit itself is allowed
        assert (d["srv"].data_dir / "files" / doc["uuid"] / "small.pdf").stat().st_size == 1000
        assert created(c["owner"].post("/api/v2/documents", files={"doc_url": (None, "https://x.org/big.pdf")}))
    finally:
        assert admin.patch(SIZE_LIMIT, json={"max_size": 104857600}).status_code == 200
    r = upload(c["owner"], "big.pdf", b"%PDF-" + b"%" * 996)
    assert created(r)["title"] == "big.pdf"
    assert admin.get(SIZE_LIMIT).json()["upload-size-limit"]["max_size_label"] == "100.0\u00a0MB"


def test_the_parallelism_limit(d):
    """An import of the user's still open (a request row written straight into the database, as
    no real import stays open long enough) fills a limit of one: the document upload is refused."""
    srv, c, admin = d["srv"], d["c"], d["c"]["admin"]
    before = snapshot(d)
    assert admin.patch(PARALLEL_LIMIT, json={"max_number": 1}).status_code == 200
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            conn.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, status, runner_pid,"
                         " created, last_updated) VALUES (?, ?, 'import', 'import', 'running', ?, ?, ?)",
                         (str(uuid.uuid4()), d["people"]["owner"]["pk"], srv.pid, "2026-01-01T00:00:00.000000Z",
                          "2026-01-01T00:00:00.000000Z"))
        assert_envelope(upload(c["owner"], "a.pdf", pdf()), 400, "upload_parallelism_limit_exceeded",
                        "The number of active parallel uploads exceeds 1. Wait for the pending ones to finish.")
        assert snapshot(d) == before
        created(upload(c["stranger"], "a.pdf", pdf()))  # another user's uploads are not counted
    finally:
        with conn:
            conn.execute("UPDATE execution_requests SET status = 'finished' WHERE status = 'running' AND action = 'import'")
        conn.close()
        assert admin.patch(PARALLEL_LIMIT, json={"max_number": 5}).status_code == 200
    created(upload(c["owner"], "a.pdf", pdf()))


def test_file_names_cannot_escape(d):
    srv, owner = d["srv"], d["c"]["owner"]
    data = srv.data_dir
    outside_before = sorted(p.name for p in data.iterdir())
    for attack, stored in (("../../evil.pdf", "evil.pdf"), ("..\\..\\evil2.pdf", "evil2.pdf"),
                           ("/etc/cron.d/evil3.pdf", "evil3.pdf"), ("C:\\Windows\\evil4.pdf", "evil4.pdf")):
        doc = created(upload(owner, attack, pdf()))
        assert doc["title"] == stored
        assert [p.name for p in (data / "files" / doc["uuid"]).iterdir()] == [stored]
        r = owner.get(f"/documents/{doc['pk']}/download")
        assert r.content == pdf() and r.headers["content-disposition"] == f'attachment; filename="{stored}"'
    assert sorted(p.name for p in data.iterdir()) == outside_before
    assert not list(data.parent.glob("evil*")) and not list(data.parent.parent.glob("evil*"))
    before = snapshot(d)
    for name in ("..", ".", "a/..", "x" * 300 + ".pdf"):
        assert_envelope(upload(owner, name, pdf()), 400, "invalid")
    for name in (b"evil\x00.pdf", b"line\rbreak.pdf", b"../..", b"sub/", b"latin-1 \xe9t\xe9.pdf"):
        assert_envelope(raw_upload(owner, name, pdf()), 400, "invalid")
    doc = created(raw_upload(owner, b"../../../raw-evil.pdf", pdf()))
    assert [p.name for p in (data / "files" / doc["uuid"]).iterdir()] == ["raw-evil.pdf"]
    before = snapshot(d)
    assert snapshot(d) == before
    # an unusual but harmless name comes back whole
    doc = created(upload(owner, "rapport d'été \"final\".pdf", pdf()))
    r = owner.get(f"/documents/{doc['pk']}/download")
    assert r.content == pdf() and "filename*=utf-8''" in r.headers["content-disposition"]


def test_who_may_read_a_document(d):
    c, team = d["c"], d["team"]
    doc = created(upload(c["owner"], "plan.png", png(), title="Site plan"))
    pk = doc["pk"]
    urls = {"detail": f"/api/v2/documents/{pk}", "download": f"/documents/{pk}/download",
            "link": f"/documents/{pk}/link", "links": f"/api/v2/documents/{pk}/linked_resources"}

    def listed(who) -> bool:
        rows = c[who].get("/api/v2/documents/", params={"page_size": 1000}).json()["documents"]
        return pk in [r["pk"] for r in rows]

    def statuses(who) -> dict:
        return {name: c[who].get(url).status_code for name, url in urls.items()}

    # new documents are public: anyone may read and download them
    for who in ("anon", "stranger", "member", "owner", "admin"):
        assert listed(who) and statuses(who) == dict.fromkeys(urls, 200), who
    # private, with view only for the team
    change_perms(c["owner"], pk, {"groups": [{"id": ANON_GROUP, "permissions": "none"},
                                             {"id": REGISTERED_GROUP, "permissions": "none"},
                                             {"id": team["group"]["pk"], "permissions": "view"}]})
    for who in ("anon", "stranger"):
        assert not listed(who) and statuses(who) == dict.fromkeys(urls, 404), who
        assert_envelope(c[who].get(urls["download"]), 404, "not_found")
    assert listed("member")
    assert statuses("member") == {"detail": 200, "download": 403, "link": 403, "links": 200}
    assert_envelope(c["member"].get(urls["download"]), 403, "permission_denied")
    assert c["member"].get(urls["detail"]).json()["document"]["perms"] == ["view_resourcebase"]
    for who in ("owner", "admin"):
        assert listed(who) and statuses(who) == dict.fromkeys(urls, 200), who
        assert c[who].get(urls["download"]).content == png()
    # anyone may see it, nobody but the owner and admins download it
    change_perms(c["owner"], pk, {"groups": [{"id": ANON_GROUP, "permissions": "view"}]})
    r = c["anon"].get(urls["download"])
    assert_envelope(r, 401, "not_authenticated")
    assert r.headers["www-authenticate"] == 'Basic realm="api"'
    assert_envelope(c["anon"].get(urls["link"]), 401, "not_authenticated")
    assert_envelope(c["stranger"].get(urls["link"]), 403, "permission_denied")
    assert c["anon"].get(urls["detail"]).status_code == 200
    # unknown documents, other resource types, bad ids
    maps = c["owner"].post("/api/v2/maps", json={"title": "A map"}).json()["map"]["pk"]
    for path in ("/documents/999999/download", "/documents/abc/link", f"/documents/{maps}/download",
                 "/api/v2/documents/999999/linked_resources"):
        assert_envelope(c["admin"].get(path), 404, "not_found")


def test_documents_without_content(d):
    """Created from JSON: no file, no address (and the same shape)."""
    c = d["c"]
    doc = created(c["owner"].post("/api/v2/documents", json={"title": "Placeholder"}))
    assert (doc["extension"], doc["mime_type"], doc["doc_url"]) == (None, None, None)
    assert doc["name"] == "Placeholder" and doc["href"].endswith(f"/documents/{doc['pk']}/link")
    for path in ("download", "link"):
        r = c["owner"].get(f"/documents/{doc['pk']}/{path}")
        assert_envelope(r, 404, "not_found")
        assert "no file" in r.json()["errors"][0]
    many = c["owner"].post("/api/v2/documents", json={"documents": [{"title": "One"}, {"title": "Two"}]})
    assert many.status_code == 201 and [x["title"] for x in many.json()["documents"]] == ["One", "Two"]
    assert all(x["extension"] is None and "href" in x for x in many.json()["documents"])


def test_changing_a_document(d):
    c = d["c"]
    doc = created(upload(c["owner"], "draft.txt", b"draft one"))
    pk, url = doc["pk"], f"/api/v2/documents/{doc['pk']}"
    for method in ("PATCH", "PUT"):
        r = c["owner"].request(method, url, json={"title": f"Final ({method})", "extension": "exe", "mime_type": "x/y",
                                                 "doc_url": "https://evil.example.org/x.exe", "href": "x", "name": "x"})
        assert r.status_code == 200, r.text
        got = r.json()["document"]
        assert got["title"] == got["name"] == f"Final ({method})"
        assert (got["extension"], got["mime_type"], got["doc_url"], got["sourcetype"]) == \
            ("txt", "text/plain", None, "LOCAL")
        assert got["href"] == doc["href"]
    r = c["owner"].patch(url + "/", json={"document": {"abstract": "Wrapped"}})
    assert r.status_code == 200 and r.json()["document"]["abstract"] == "Wrapped"
    assert c["owner"].get(f"/documents/{pk}/download").content == b"draft one"
    assert_envelope(c["stranger"].patch(url, json={"title": "Mine now"}), 403, "permission_denied")
    assert_envelope(c["anon"].patch(url, json={"title": "Mine now"}), 401, "not_authenticated")
    assert c["anon"].get(url).json()["document"]["title"] == "Final (PUT)"
    # /api/v2/documents/{pk} cannot be deleted (GeoNode: 405); /api/v2/resources/{pk} removes it
    assert c["owner"].delete(url).status_code == 405


def test_linked_resources_of_a_document(d):
    c = d["c"]
    doc = created(upload(c["owner"], "legend.png", png()))
    mp = c["owner"].post("/api/v2/maps", json={"title": "Linked map"}).json()["map"]
    r = c["owner"].post(f"/api/v2/resources/{doc['pk']}/linked_resources", json={"target": [int(mp["pk"])]})
    assert r.status_code == 200, r.text
    body = c["anon"].get(f"/api/v2/documents/{doc['pk']}/linked_resources").json()
    assert [x["pk"] for x in body["linked_to"]] == [int(mp["pk"])] and body["linked_by"] == []
    detail = c["anon"].get(f"/api/v2/documents/{doc['pk']}", params={"include[]": "linked_resources"}).json()
    assert detail["document"]["linked_resources"]["linked_to"][0]["title"] == "Linked map"
    assert detail["document"]["extension"] == "png"


def test_ingested_documents_carry_their_document_fields(d):
    srv, admin = d["srv"], d["c"]["admin"]
    (srv.data_dir / "import").mkdir(exist_ok=True)
    (srv.data_dir / "import" / "scan.PNG").write_bytes(png())
    r = admin.post("/api/v2/resources/ingest/document", json={"path": "scan.PNG"})
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + 15
    while (status := admin.get(r.json()["status_url"]).json())["status"] not in ("finished", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert status["status"] == "finished", status
    doc = admin.get(f"/api/v2/documents/{status['output_params']['output']['pk']}").json()["document"]
    assert (doc["extension"], doc["mime_type"], doc["subtype"]) == ("png", "image/png", "image")
    r = admin.get(f"/documents/{doc['pk']}/download")
    assert r.content == png() and r.headers["content-disposition"] == 'attachment; filename="scan.PNG"'


def test_bodies_without_a_file_are_read_up_to_10_mb(tmp_path_factory):
    """The documents URL takes 4 GB for a file; JSON or url-encoded bodies stop at 10 MB even
    when they come chunked, without a Content-Length."""
    srv = in_process(tmp_path_factory.mktemp("doc-bodies") / "data")
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            def chunks(total: int, head: bytes, tail: bytes):
                yield head
                for _ in range(total // 65536):
                    yield b"a" * 65536
                yield tail

            r = admin.post("/api/v2/documents", content=chunks(11 * 1024 * 1024, b'{"title": "', b'"}'),
                           headers={"content-type": "application/json"})
            assert_envelope(r, 413, "request_too_large")
            r = admin.post("/api/v2/documents", content=chunks(11 * 1024 * 1024, b"title=", b"&doc_url=http://x/a.pdf"),
                           headers={"content-type": "application/x-www-form-urlencoded"})
            assert_envelope(r, 413, "request_too_large")
            assert_envelope(admin.post("/api/v2/documents", content=b"", headers={"content-type": "application/json"}),
                            400, "invalid")
            r = admin.post("/api/v2/documents", content=b"title=Remote&doc_url=http://example.org/a.pdf",
                           headers={"content-type": "application/x-www-form-urlencoded"})
            assert r.status_code == 201 and r.json()["document"]["doc_url"] == "http://example.org/a.pdf"
            assert admin.get("/api/v2/documents/").json()["total"] == 1
    finally:
        srv.stop()
