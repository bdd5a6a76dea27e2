"""Document cards in the web UI show what the document is: a PDF its first page, an image its
picture (drawn by the server on upload), where they used to show the placeholder."""

from __future__ import annotations

import io

from PIL import Image


def _pdf() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (595, 842), (30, 90, 160)).save(out, "PDF")
    return out.getvalue()


def test_document_cards_show_their_thumbnails(tab, ui_admin):
    r = ui_admin.post("/api/v2/documents", files={"doc_file": ("Field report.pdf", _pdf(), "application/pdf")},
                      data={"title": "Field report with a first page"})
    assert r.status_code == 201, r.text
    doc = r.json()["document"]
    assert "/uploaded/thumbs/" in doc["thumbnail_url"]
    tab.go("/?q=" + "Field report with a first page")
    tab.until(f"document.querySelector('a[href=\"#/document/{doc['pk']}\"]') !== null")
    shown = tab.until(f"""(() => {{
      const card = document.querySelector('a[href="#/document/{doc['pk']}"]').closest('li');
      const img = card && card.querySelector('img');
      return img && img.complete && img.naturalWidth > 0 && img.src.includes('/uploaded/thumbs/') ? img.src : null;
    }})()""")
    assert shown.endswith(doc["thumbnail_url"].split("/uploaded/thumbs/")[1])
    tab.shot("document-card-thumbnail")
