"""Starting the catalogue pays for none of the libraries of the OGC APIs and linked data: they
are imported inside the functions that use them (CQL2, tiles, vector tiles, DCAT), so that a
start (and the single executable's warm start, under a second) does not load them.

A fresh Python does what a server does (the command line read, the application made as a
worker makes it, its start-up run, the first answer given) and lists which of them it loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The libraries and what they bring along: the tile grid's (morecantile: pydantic, attrs), RDF's
# (rdflib), vector tiles' (mapbox-vector-tile: protobuf, pyclipper), CQL2's once (pygeofilter:
# lark, dateparser), and the test-only SHACL validator. (Litestar loads pydantic and attrs itself
# when they are installed, unless told not to: app.py does.)
LAZY = ("pygeofilter", "lark", "dateparser", "pygeoif", "morecantile", "pydantic", "pydantic_core", "attr", "attrs",
        "mapbox_vector_tile", "google.protobuf", "pyclipper", "rdflib", "pyshacl", "pypdfium2", "pypdfium2_raw")

STARTING = """
import json, sys
from catalogue_app.cli import parser
parser()  # what `catalogue serve` builds before it starts the server
from catalogue_app.app import create_app_from_env
from litestar.testing import TestClient
app = create_app_from_env()
with TestClient(app, base_url="http://127.0.0.1") as client:  # runs the start-up and shutdown
    assert client.get("/api/v2/").status_code == 200
lazy = json.loads(sys.argv[1])
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in lazy or name in lazy)))
"""


def test_start_imports_none_of_the_lazy_libraries(tmp_path: Path):
    env = {**os.environ, "CATALOGUE_DATA_DIR": str(tmp_path / "data"), "CATALOGUE_HARVEST_TICK": "0",
           "CATALOGUE_ADMIN_PASSWORD": "a-long-enough-password-1"}
    done = subprocess.run([sys.executable, "-c", STARTING, json.dumps(LAZY)], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == [], f"loaded at start: {loaded} (import them inside the functions that use them)"


def test_the_check_itself_sees_a_library_loaded():
    """The same list, after a use of the tile grid and of RDF: the test above would see either."""
    using = ("import json, sys, morecantile, rdflib\n"
             "morecantile.tms.get('WebMercatorQuad')\n"
             "lazy = json.loads(sys.argv[1])\n"
             "print(json.dumps(sorted({n.split('.')[0] for n in sys.modules if n.split('.')[0] in lazy})))")
    done = subprocess.run([sys.executable, "-c", using, json.dumps(LAZY)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {"morecantile", "pydantic", "pydantic_core", "rdflib"} <= set(json.loads(done.stdout))
