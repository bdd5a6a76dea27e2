"""QGIS's own WFS provider (Debian's python3-qgis 3.22) edits a layer over WFS-T at 1.0.0, 1.1.0,
2.0.0 and "auto" (3.22 sends 1.0.0 Transactions with URN srsNames and longitude first there): it
sees the layer as editable, adds a feature, changes and moves it, deletes another; GetFeature
shows the result. A user who may not edit gets a read-only layer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import login
from tests.ogc.wfst_helpers import features, fresh, make_world

CLIENT = Path(__file__).with_name("qgis_client.py")
SYSTEM_PYTHON = "/usr/bin/python3"


def _has_qgis() -> bool:
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import qgis.core"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = pytest.mark.skipif(not _has_qgis(), reason="python3-qgis is not installed")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = make_world(tmp_path_factory)
    yield w
    w["admin"].close()
    w["srv"].stop()


def qgis(world, user: dict, alternate: str, version: str) -> dict:
    r = subprocess.run([SYSTEM_PYTHON, str(CLIENT), f"{world['srv'].url}/geoserver/ows", alternate, user["username"],
                        user["password"], version], capture_output=True, text=True, timeout=300,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(world["folder"]), "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0 and r.stdout.strip(), r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0", "2.0.0", "auto"])
def test_qgis_edits_a_layer(world, version):
    layer = fresh(world)
    with login(world["srv"], world["owner"]) as c:
        before = features(c, layer["alternate"])
    got = qgis(world, world["member"], layer["alternate"], version)  # a member of a group granted edit
    assert got["valid"] and got["may_add"] and got["may_delete"], got
    assert got["added"] and got["changed"] and got["moved"] and got["deleted"] and not got["errors"], got
    with login(world["srv"], world["owner"]) as c:
        after = features(c, layer["alternate"])
    new = [f for i, f in after.items() if i not in before]
    assert len(new) == 1 and len(after) == len(before)  # one added, one deleted, no duplicate
    assert new[0]["properties"]["name"] == "renamed by qgis" and new[0]["properties"]["n"] == 42
    assert [round(v, 6) for v in new[0]["geometry"]["coordinates"]] == [8.5, 46.5]
    assert got["deleted_name"] not in {f["properties"]["name"] for f in after.values()}


def test_qgis_gives_a_read_only_layer_to_those_who_may_not_edit(world):
    layer = fresh(world)
    got = qgis(world, world["other"], layer["alternate"], "1.1.0")
    assert got["valid"] and not got["may_add"] and not got["may_delete"], got
