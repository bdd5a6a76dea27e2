"""Takes the README's screenshots (docs/screenshots/) of a catalogue filled with the test data:
`.venv/bin/python scripts/readme_screenshots.py`. Needs Chromium, as the browser tests do."""

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


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "catalogue")
        try:
            with server.client(auth=("admin", ADMIN_PASSWORD)) as admin:
                pks = [upload(admin, *s) for s in SETS]
                for name in ("RGB.byte.tif", "shade.tif"):
                    r = admin.post("/api/v2/uploads/upload", files={"base_file": (name, (DATA / name).read_bytes())})
                    poll(admin, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")
                admin.post("/api/v2/documents", files={"doc_file": ("field-report.pdf", b"%PDF-1.4\n%%EOF\n", "application/pdf")},
                           data={"title": "Field report, spring campaign"})
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
                browser.close()
        finally:
            server.stop()
    print(f"screenshots in {OUT}")


if __name__ == "__main__":
    main()
