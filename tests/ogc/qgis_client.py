"""QGIS's own WFS provider (Debian's python3-qgis), run by the system Python as a QGIS user's edit
session: open a layer over WFS with a password, add a feature, change its attribute and move it,
delete another feature. Prints what the provider said, as JSON.

Usage: /usr/bin/python3 qgis_client.py <service url> <type name> <user> <password> <version>
"""

import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402  (the platform is chosen before Qt loads)
    QgsApplication,
    QgsDataSourceUri,
    QgsFeature,
    QgsGeometry,
    QgsPointXY,
    QgsVectorDataProvider,
    QgsVectorLayer,
)


def main() -> dict:
    url, typename, user, password, version = sys.argv[1:6]
    uri = QgsDataSourceUri()
    for key, value in (("url", url), ("typename", typename), ("version", version), ("restrictToRequestBBOX", "0")):
        uri.setParam(key, value)
    uri.setUsername(user)
    uri.setPassword(password)
    layer = QgsVectorLayer(uri.uri(False), "layer", "WFS")
    out: dict = {"valid": layer.isValid()}
    if not layer.isValid():
        return out
    provider = layer.dataProvider()
    out["may_add"] = bool(provider.capabilities() & QgsVectorDataProvider.AddFeatures)
    out["may_delete"] = bool(provider.capabilities() & QgsVectorDataProvider.DeleteFeatures)
    out["before"] = sorted(f.attribute("name") for f in layer.getFeatures())
    if not out["may_add"]:
        return out
    feature = QgsFeature(layer.fields())
    feature.setAttribute("name", "from qgis")
    feature.setAttribute("n", 42)
    feature.setGeometry(QgsGeometry.fromPointXY(QgsPointXY(7.5, 47.25)))
    out["added"], added = provider.addFeatures([feature])
    fid = added[0].id()
    name = layer.fields().indexOf("name")
    out["changed"] = provider.changeAttributeValues({fid: {name: "renamed by qgis"}})
    out["moved"] = provider.changeGeometryValues({fid: QgsGeometry.fromPointXY(QgsPointXY(8.5, 46.5))})
    victim = next(f for f in layer.getFeatures() if f.id() != fid)
    out["deleted_name"] = victim.attribute("name")
    out["deleted"] = provider.deleteFeatures([victim.id()])
    out["errors"] = [str(e) for e in provider.errors()]
    return out


if __name__ == "__main__":
    app = QgsApplication([], False)
    app.initQgis()
    print(json.dumps(main()), flush=True)
    os._exit(0)  # QGIS may crash while shutting down headless; what it did is printed
