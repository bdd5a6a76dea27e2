"""Thumbnails of documents: an image document shows its picture and a PDF its first page, on the
card GeoNode clients lay out (500 x 200); other files, unreadable ones and remote documents keep
the placeholder, and the document is stored all the same."""

import io
import time

import pytest
from PIL import Image, ImageDraw

from tests.conftest import ADMIN_PASSWORD, in_process, login, make_user, poll

RED, BLUE = (200, 30, 30), (20, 40, 200)


@pytest.fixture(scope="module")
def dt(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("doc-thumbs") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner = make_user(admin)
    c = login(srv, owner)
    yield {"srv": srv, "admin": admin, "owner": c}
    c.close()
    admin.close()
    srv.stop()


def _pdf(pages: int = 2) -> bytes:
    """A real PDF: a red A4 page with a blue band across its top, then a plain page."""
    first = Image.new("RGB", (595, 842), RED)
    ImageDraw.Draw(first).rectangle((0, 0, 595, 100), fill=BLUE)
    out = io.BytesIO()
    first.save(out, "PDF", save_all=True, append_images=[Image.new("RGB", (595, 842), (255, 255, 255))] * (pages - 1))
    return out.getvalue()


def _image(kind: str, size=(1200, 300), colour=RED) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, kind)
    return out.getvalue()


def _upload(c, name: str, content: bytes):
    r = c.post("/api/v2/documents", files={"doc_file": (name, content, "application/octet-stream")},
               data={"title": name})
    assert r.status_code == 201, r.text
    return r.json()["document"]


def _thumbnail(c, doc) -> Image.Image:
    url = doc["thumbnail_url"]
    assert url and "/uploaded/thumbs/" in url, doc
    r = c.get(url)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(r.content)).convert("RGB")
    assert image.size == (500, 200)
    return image


@pytest.mark.parametrize("kind,name", [("PNG", "photo.png"), ("JPEG", "photo.JPG"), ("GIF", "drawing.gif"),
                                       ("TIFF", "scan.tif"), ("BMP", "old.bmp")])
def test_an_image_document_shows_its_picture(dt, kind, name):
    doc = _upload(dt["owner"], name, _image(kind))
    image = _thumbnail(dt["owner"], doc)
    r_, g_, b_ = image.getpixel((250, 100))
    assert r_ > 150 and g_ < 80 and b_ < 80, image.getpixel((250, 100))
    # what others then see: the detail and the list carry the same address
    again = dt["owner"].get(f"/api/v2/documents/{doc['pk']}").json()["document"]
    assert again["thumbnail_url"] == doc["thumbnail_url"]


def test_a_pdf_shows_the_top_of_its_first_page(dt):
    doc = _upload(dt["owner"], "report.pdf", _pdf())
    image = _thumbnail(dt["owner"], doc)
    top, bottom = image.getpixel((250, 20)), image.getpixel((250, 190))
    assert top[2] > 150 and top[0] < 80, top  # the blue band at the top of page one
    assert bottom[0] > 150 and bottom[2] < 80, bottom  # then the red page


def test_a_public_document_thumbnail_is_seen_by_anyone_who_sees_it(dt):
    doc = _upload(dt["owner"], "public.pdf", _pdf(1))
    with dt["srv"].client() as anon:
        assert anon.get(doc["thumbnail_url"]).status_code in (200, 404)  # as the resource's visibility says
        listed = anon.get("/api/v2/documents", params={"filter{pk}": doc["pk"]}).json()["documents"]
        if listed:
            assert listed[0]["thumbnail_url"] == doc["thumbnail_url"]
            assert anon.get(doc["thumbnail_url"]).status_code == 200


@pytest.mark.parametrize("name,content", [
    ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"),
    ("broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
    ("notes.txt", b"plain text"),
    ("huge-claims.png", None),
])
def test_other_or_unreadable_files_are_stored_without_one(dt, name, content):
    if content is None:  # a PNG header claiming 100,000 x 100,000 pixels: refused unread
        import struct
        import zlib

        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        content = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)) \
            + chunk(b"IEND", b"")
    r = dt["owner"].post("/api/v2/documents", files={"doc_file": (name, content, "application/octet-stream")})
    if r.status_code == 400:  # refused as not what its extension says: nothing stored, a clear error
        assert r.json().get("errors") or r.json().get("detail") or r.json().get("message"), r.text
        return
    assert r.status_code == 201, r.text
    doc = r.json()["document"]
    assert not (doc["thumbnail_url"] or "").startswith(f"{dt['srv'].url}/uploaded/thumbs/"), doc["thumbnail_url"]
    r = dt["owner"].get(f"/documents/{doc['pk']}/download")
    assert r.status_code == 200 and r.content == content


def test_a_remote_document_has_no_drawn_thumbnail(dt):
    r = dt["owner"].post("/api/v2/documents", data={"doc_url": "https://example.org/report.pdf", "title": "remote"})
    assert r.status_code == 201, r.text
    assert "/uploaded/thumbs/" not in (r.json()["document"]["thumbnail_url"] or "")


def test_an_ingested_pdf_gets_its_thumbnail(dt):
    imports = dt["srv"].data_dir / "import"
    imports.mkdir(exist_ok=True)
    (imports / "ingested.pdf").write_bytes(_pdf())
    r = dt["admin"].post("/api/v2/resources/ingest/document", json={"path": "ingested.pdf"})
    assert r.status_code == 200, r.text
    status = poll(dt["admin"], r.json()["status_url"])
    assert status["status"] == "finished", status
    pk = status["output_params"]["output"]["pk"]
    deadline = time.monotonic() + 15  # drawn just after the job's commit, which 'finished' reports
    while True:
        doc = dt["admin"].get(f"/api/v2/documents/{pk}").json()["document"]
        if doc["thumbnail_url"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    _thumbnail(dt["admin"], doc)
