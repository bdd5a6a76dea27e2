"""The feature types: which datasets are served as feature types, finding the one a request
names (for the caller, with or without the right to download its features), and the XML name
and namespace of each.
"""

from __future__ import annotations

from typing import Any

from catalogue_app.api.ogc.common import OgcError, OgcRequest
from catalogue_app.geo.feature_encoding import TypeName

NAMESPACE = "urn:catalogue:workspace:"  # + workspace: the XML namespace of a workspace's feature types


def is_vector(layer: dict[str, Any]) -> bool:
    """A dataset whose features are here (not a raster, nor a layer of a remote WMS)."""
    return layer["subtype"] != "raster" and not layer.get("remote_url")


def feature_type(req: OgcRequest, name: str, download: bool) -> dict[str, Any]:
    # OgcRequest has a field "layer" (the per-layer address) that hides its method of that
    # name on instances, so the method is called through the class.
    layer = req.layer(name, "typeName", download=download)
    if layer.get("remote_url"):
        raise OgcError("InvalidParameterValue", f'"{name}" is a layer of a remote map service, whose features are '
                       f'not here: read it there ({layer["remote_url"]}).', "typeName")
    if not is_vector(layer):
        raise OgcError("InvalidParameterValue", f'"{name}" is a raster layer, not a feature type: read it with WCS.',
                       "typeName")
    return layer


def type_name(layer: dict[str, Any]) -> TypeName:
    return TypeName(layer["workspace"], layer["name"], NAMESPACE + layer["workspace"])
