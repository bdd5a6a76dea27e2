"""QGIS's own OGC API - Features provider (Debian's python3-qgis), run by the system Python as a
QGIS user's session: open a collection, read every feature, then those in a box. Prints what the
provider gave, as JSON.

Usage: /usr/bin/python3 qgis_oapif_client.py <landing page url> <collection id>
"""

import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402  (the platform is chosen before Qt loads)
    QgsApplication,
    QgsFeatureRequest,
    QgsRectangle,
    QgsVectorLayer,
)


def main() -> dict:
    url, collection = sys.argv[1:3]
    layer = QgsVectorLayer(f"url='{url}' typename='{collection}' restrictToRequestBBOX='1'", "layer", "OAPIF")
    out: dict = {"valid": layer.isValid()}
    if not layer.isValid():
        out["error"] = layer.error().summary()
        return out
    out["crs"] = layer.crs().authid()
    out["fields"] = [f.name() for f in layer.fields()]
    out["count"] = layer.featureCount()
    rows = [(f.id(), f.attribute("name"), f.geometry().asWkt(6)) for f in layer.getFeatures()]
    out["names"] = sorted(r[1] for r in rows)
    out["first_geometry"] = sorted(rows)[0][2][:60] if rows else None
    boxed = layer.getFeatures(QgsFeatureRequest().setFilterRect(QgsRectangle(5, 45, 15, 55)))
    out["boxed"] = sorted(f.attribute("name") for f in boxed)
    out["errors"] = [str(e) for e in layer.dataProvider().errors()]
    return out


if __name__ == "__main__":
    app = QgsApplication([], False)
    app.initQgis()
    print(json.dumps(main()))
    app.exitQgis()
