"""Takes the README's screenshots (docs/screenshots/) of a catalogue filled with the test data:
`.venv/bin/python scripts/readme_screenshots.py`. Needs Chromium, as the browser tests do.
Browse (in English and in Arabic), a dataset's page, its metadata editor, and a dataset's history
after an edit of its features."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright

from tests.conftest import ADMIN_PASSWORD, Server, poll
from tests.ui.conftest import ARGS, CHROMIUM

DATA = ROOT / "tests" / "data"
OUT = ROOT / "docs" / "screenshots"
SETS = [("naturalearth_lowres", "Countries of the world", "Country outlines with names, ISO codes and population estimates.",
         ["boundaries", "world"], "boundaries"),
        ("naturalearth_cities", "Capital cities", "The capital city of every country, as points.", ["cities", "world"], "location")]


def upload(client, stem: str, title: str, abstract: str, keywords: list[str], category: str) -> int:
    folder = DATA / stem
    files = {key: (f"{stem}.{ext}", (folder / f"{stem}.{ext}").read_bytes())
             for key, ext in (("base_file", "shp"), ("dbf_file", "dbf"), ("shx_file", "shx"), ("prj_file", "prj"))}
    r = client.post("/api/v2/uploads/upload", files=files)
    pk = poll(client, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")["output_params"]["resources"][0]["id"]
    client.patch(f"/api/v2/resources/{pk}", json={"title": title, "abstract": abstract, "keywords": keywords,
                                                  "category": {"identifier": category}, "license": {"identifier": "public_domain"}})
    return pk


def edit_cities(client, pk: int) -> None:
    """A history for the capitals: two names corrected and a point added, as the web UI sends them."""
    r = client.post(f"/api/v2/datasets/{pk}/edits", json={
        "update": [{"id": 3, "properties": {"name": "Vaduz (Liechtenstein)"}}, {"id": 5, "properties": {"name": "Luxembourg City"}}],
        "insert": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [6.6323, 46.5197]},
                    "properties": {"name": "Field station"}}]})
    r.raise_for_status()


def report_pdf() -> bytes:
    """A one-page PDF report (its first page becomes the document's thumbnail)."""
    import io

    from PIL import Image, ImageDraw

    page = Image.new("RGB", (595, 842), (255, 255, 255))
    draw = ImageDraw.Draw(page)
    draw.rectangle((0, 0, 595, 120), fill=(31, 111, 95))
    draw.rectangle((40, 40, 420, 80), fill=(255, 255, 255))
    for y in range(160, 800, 28):
        draw.rectangle((40, y, 40 + (520 if y % 3 else 380), y + 10), fill=(170, 180, 185))
    out = io.BytesIO()
    page.save(out, "PDF")
    return out.getvalue()


def this_ui(tmp: str) -> dict[str, str]:
    """The environment that makes the server show this checkout's ui/ (as tests/ui/conftest.py
    `ui_env` does, for a worktree sharing another checkout's editable install)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("catalogue_ui")
    if spec is not None and spec.origin and Path(spec.origin).resolve().parent == ROOT / "ui":
        return {}
    shim = Path(tmp) / "ui-package"
    shim.mkdir()
    (shim / "catalogue_ui").symlink_to(ROOT / "ui", target_is_directory=True)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "catalogue", env=this_ui(tmp))
        try:
            with server.client(auth=("admin", ADMIN_PASSWORD)) as admin:
                pks = [upload(admin, *s) for s in SETS]
                for name in ("RGB.byte.tif", "shade.tif"):
                    r = admin.post("/api/v2/uploads/upload", files={"base_file": (name, (DATA / name).read_bytes())})
                    poll(admin, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")
                admin.post("/api/v2/documents", files={"doc_file": ("field-report.pdf", report_pdf(), "application/pdf")},
                           data={"title": "Field report, spring campaign"})
                edit_cities(admin, pks[1])
            OUT.mkdir(parents=True, exist_ok=True)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"{server.url}/#/")
                page.wait_for_selector("[data-loaded]")
                page.hover(f".card[data-pk='{pks[1]}'] h2")  # its footprint stands out on the map
                page.wait_for_timeout(1500)
                page.screenshot(path=str(OUT / "browse.png"))
                page.goto(f"{server.url}/#/dataset/{pks[0]}")
                page.wait_for_selector(".attributes table")
                page.wait_for_timeout(1500)
                page.set_viewport_size({"width": 1280, "height": 1200})  # down to the downloads and records
                page.wait_for_timeout(500)
                page.screenshot(path=str(OUT / "dataset.png"))
                # the history of the capitals, as their owner sees it, with the features' changes shown
                page.set_viewport_size({"width": 1280, "height": 800})
                page.goto(f"{server.url}/#/login")
                page.fill("input[name=username]", "admin")
                page.fill("input[name=password]", ADMIN_PASSWORD)
                page.click("button[type=submit]")
                page.wait_for_selector("#nav .who")
                page.goto(f"{server.url}/#/dataset/{pks[1]}")
                page.wait_for_selector(".history ol[data-loaded] li.version")
                page.click(".history li.version:first-child button:text('Show changes')")
                page.wait_for_selector(".history .version-changes table")
                page.wait_for_selector("#toast.show", state="detached")  # "Signed in as admin." gone
                page.wait_for_timeout(300)
                page.locator(".history").screenshot(path=str(OUT / "history.png"))
                # the metadata editor, drawn from the metadata schema
                page.goto(f"{server.url}/#/dataset/{pks[0]}/edit")
                page.wait_for_selector(".metadata-form fieldset")
                page.wait_for_timeout(800)
                page.screenshot(path=str(OUT / "metadata-editor.png"))
                # Browse in Arabic: right to left, numbers and dates in the reader's language
                arabic = browser.new_page(viewport={"width": 1280, "height": 800})
                arabic.add_init_script("localStorage.setItem('catalogue.language', 'ar')")
                arabic.goto(f"{server.url}/#/")
                arabic.wait_for_selector("[data-loaded]")
                arabic.wait_for_timeout(1500)
                arabic.screenshot(path=str(OUT / "browse-ar.png"))
                browser.close()
        finally:
            server.stop()
    print(f"screenshots in {OUT}")


if __name__ == "__main__":
    main()
