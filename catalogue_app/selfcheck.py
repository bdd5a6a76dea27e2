"""`catalogue selfcheck`: what this build can do. Each check uses one of the libraries the
catalogue loads only when a request needs it (the tile grid's morecantile, linked data's
rdflib) once, as the catalogue uses it, and prints ok or FAILED with the reason and the time it
took (the import included). In the single executable a library whose files were left out fails
only when first used: this finds it at once. The exit status is 1 when a check failed."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable


def _tile_grid() -> str:
    import morecantile

    grid = morecantile.tms.get("WebMercatorQuad")
    tile = grid.tile(10.0, 45.0, 6)
    # the same tile by the textbook formula of the spherical Mercator grid
    n = 2 ** 6
    y = (1 - math.asinh(math.tan(math.radians(45.0))) / math.pi) / 2 * n
    assert (tile.x, tile.y, tile.z) == (int((10.0 + 180) / 360 * n), int(y), 6), tile
    left, bottom, right, top = grid.xy_bounds(tile)
    assert math.isclose(right - left, 2 * math.pi * 6378137 / n) and math.isclose(top - bottom, right - left)
    return f"morecantile {morecantile.__version__}: WebMercatorQuad tile {tile.z}/{tile.y}/{tile.x}"


def _linked_data() -> str:
    import rdflib
    from rdflib.compare import isomorphic
    from rdflib.namespace import DCAT, DCTERMS, RDF

    graph = rdflib.Graph()
    dataset = rdflib.URIRef("http://example.org/dcat/resources/1")
    graph.add((dataset, RDF.type, DCAT.Dataset))
    graph.add((dataset, DCTERMS.title, rdflib.Literal("Rivers", lang="en")))
    graph.bind("dcat", DCAT)
    graph.bind("dct", DCTERMS)
    for media, name in (("json-ld", "JSON-LD"), ("turtle", "Turtle")):
        written = graph.serialize(format=media)
        again = rdflib.Graph().parse(data=written, format=media)
        assert isomorphic(graph, again), f"{name} read back differs:\n{written}"
    return f"rdflib {rdflib.__version__}: a DCAT dataset written and read as JSON-LD and Turtle"


def _document_thumbnails() -> str:
    import io
    import tempfile
    from pathlib import Path

    from PIL import Image

    from catalogue_app.geo import document_thumbnail

    page = io.BytesIO()
    Image.new("RGB", (595, 842), (200, 30, 30)).save(page, "PDF")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "page.pdf"
        path.write_bytes(page.getvalue())
        png = document_thumbnail.draw(path, "pdf")
    assert png, "no thumbnail drawn"
    drawn = Image.open(io.BytesIO(png))
    assert drawn.size == (500, 200) and drawn.convert("RGB").getpixel((250, 100))[0] > 150, "the page is not shown"
    import pypdfium2

    return f"pypdfium2 {pypdfium2.version.PYPDFIUM_INFO}: a PDF's first page drawn as a thumbnail"


CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("tile grid", _tile_grid),
    ("linked data", _linked_data),
    ("document thumbnails", _document_thumbnails),
]


def run(out=sys.stdout) -> int:
    """Run every check; 0 when all passed, else 1."""
    failed = 0
    for name, check in CHECKS:
        started = time.perf_counter()
        try:
            said = check()
        except Exception as exc:  # noqa: BLE001 - every failure is reported, the other checks still run
            failed += 1
            print(f"FAILED  {name}: {type(exc).__name__}: {exc}", file=out, flush=True)
        else:
            print(f"ok      {name} ({(time.perf_counter() - started) * 1000:.0f} ms): {said}", file=out, flush=True)
    return 1 if failed else 0
