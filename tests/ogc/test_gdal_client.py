"""GDAL's own WFS client (Debian's gdal-bin, which `make test` installs) reads the WFS as QGIS's
and GDAL's users do: `ogrinfo WFS:<address>?VERSION=...` lists the layer with its feature count
and extent, and reads a feature by its id, in each version the service offers."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

VERSIONS = ["1.0.0", "1.1.0", "2.0.0"]


def ogrinfo(*args: str) -> str:
    found = shutil.which("ogrinfo")
    assert found, "gdal-bin is missing: `make test` installs it (scripts/ensure_gdal.sh)"
    # no proxy settings: the server is on this machine
    r = subprocess.run([found, "-ro", *args], capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ.get("PATH", ""), "GDAL_HTTP_TIMEOUT": "60"})
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_gdal_lists_a_layer_with_its_count_and_extent(ogc, version):
    cities = ogc["cities"]
    out = ogrinfo("-so", f"WFS:{ogc['srv'].url}/geoserver/ows?VERSION={version}", cities["alternate"])
    lines = out.splitlines()
    assert f"Layer name: {cities['alternate']}" in lines
    assert "Feature Count: 243" in lines  # every city of the Natural Earth file
    extent = next(line for line in lines if line.startswith("Extent: "))
    x0, y0, x1, y1 = (float(v) for v in extent.replace("Extent: (", "").replace(") - (", ", ").rstrip(")").split(", "))
    assert -180 <= x0 < -170 and 170 < x1 <= 180 and -50 < y0 < y1 < 80  # longitude first, as GDAL shows it
    assert "name: String" in out


def test_gdal_reads_a_feature_by_its_id(ogc):
    cities = ogc["cities"]
    out = ogrinfo("-al", "-q", "-fid", "3", f"WFS:{ogc['srv'].url}/geoserver/ows?VERSION=1.1.0", cities["alternate"])
    layer = cities["alternate"].split(":")[-1]
    assert f"gml_id (String) = {layer}.3" in out
    assert "name (String) = Vaduz" in out and "POINT (9.51" in out


def test_gdal_sees_no_private_layer_anonymously(ogc):
    out = ogrinfo(f"WFS:{ogc['srv'].url}/geoserver/ows?VERSION=2.0.0")
    assert ogc["cities"]["alternate"] in out and ogc["private"]["alternate"] not in out
