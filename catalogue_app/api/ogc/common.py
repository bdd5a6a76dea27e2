"""What the three OGC services share: the request with case-insensitive keys, the layers the
caller may see, and OGC exception reports in the shape each service and version expects."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from litestar import Response

from catalogue_app import files
from catalogue_app.api.context import Context
from catalogue_app.geo import basemap
from catalogue_app.geo.xml import xml_safe
from catalogue_app.reads import ogc as ogc_reads

XML = "text/xml"


class OgcError(Exception):
    """An OGC exception: ``code`` is the standard exceptionCode (InvalidParameterValue,
    MissingParameterValue, LayerNotDefined, ...), ``locator`` the parameter at fault."""

    def __init__(self, code: str, message: str, locator: str | None = None, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.locator, self.status = code, message, locator, status


@dataclass
class OgcRequest:
    """One OGC request: its parameters (keys lower-cased, as OGC says keys are case-insensitive),
    the service address it came to, and the caller."""

    ctx: Context
    params: dict[str, str]                 # lower-cased key -> first value
    multi: dict[str, list[str]]            # lower-cased key -> every value (WCS 2.0 repeats subset)
    service: str                           # "WMS", "WFS" or "WCS" ("" when neither path nor key says)
    url: str                               # the absolute address of this endpoint, for capabilities
    workspace: str | None = None           # a virtual service: /geoserver/<workspace>/ows
    layer_name: str | None = None          # or /geoserver/<workspace>/<layer>/ows
    body: bytes | None = None              # a POSTed XML body (a WFS Transaction)
    _cache: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: str | None = None) -> str | None:
        value = self.params.get(key.lower())
        return default if value is None or value == "" else value

    def require(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise OgcError("MissingParameterValue", f'The parameter "{key}" is required.', key)
        return value

    @property
    def version(self) -> str:
        return self.params.get("version") or self.params.get("acceptversions", "").split(",")[0] or ""

    # -- layers -------------------------------------------------------------------------------
    def layers(self, attributes: bool = False, editable: bool = False) -> list[dict[str, Any]]:
        """The datasets with data that the caller may see (those of the virtual service only);
        with ``editable``, each says whether the caller may change its features (``may_edit``)."""
        viewer = self.ctx.viewer
        return self.ctx.db.read_sync(ogc_reads.layers, viewer, self.workspace, self.layer_name, attributes, editable)

    def layer(self, name: str, locator: str, code: str = "InvalidParameterValue",
              download: bool = False) -> dict[str, Any]:
        """One dataset by any of its names, or an OGC error: unknown and hidden datasets are
        alike ("not defined"); a visible one whose data needs download_resourcebase is refused
        with 401 (anonymous) or 403."""
        key = f"layer:{name}"
        if key not in self._cache:
            self._cache[key] = self.ctx.db.read_sync(ogc_reads.layer, self.ctx.viewer, name)
        found = self._cache[key]
        if found is not None and self.workspace and (found["workspace"] != self.workspace or
                                                     (self.layer_name and found["name"] != self.layer_name)):
            found = None
        if found is None:
            raise OgcError(code, f'Unknown layer "{name}".', locator, 404 if code == "NoSuchCoverage" else 400)
        if download and not found["may_download"]:
            anonymous = self.ctx.caller.is_anonymous
            raise OgcError("NoApplicableCode" if self.service != "WMS" else "LayerNotQueryable",
                           f'You may not download the data of "{found["alternate"]}".', locator,
                           401 if anonymous else 403)
        return found

    def data_path(self, layer: dict[str, Any]) -> Path:
        """The working copy of a dataset (GeoPackage or tiled GeoTIFF), or the basemap's file."""
        if layer.get("builtin"):
            return basemap.PATH
        path = files.working_copy(self.ctx.settings.files_dir / layer["folder"])
        if path is None:
            raise OgcError("NoApplicableCode", f'The data of "{layer["alternate"]}" is missing.', None, 404)
        return path

    def style_body(self, layer: dict[str, Any], name: str | None) -> bytes | None:
        if layer.get("builtin"):
            return basemap.SLD
        return self.ctx.db.read_sync(ogc_reads.style, layer["id"], name)




def text(value: Any) -> str:
    """Text content for an XML element."""
    return escape(xml_safe("" if value is None else str(value)))


def attr(value: Any) -> str:
    """A quoted XML attribute value."""
    return quoteattr(xml_safe("" if value is None else str(value)))


def xml_answer(body: str, media_type: str = XML) -> Response:
    return Response(body.encode("utf-8"), media_type=media_type, status_code=200)


def exception_report(service: str, version: str, error: OgcError) -> Response:
    """The exception document each service and version defines."""
    message, code = text(error.message), attr(error.code)
    locator = f" locator={attr(error.locator)}" if error.locator else ""
    headers = {"WWW-Authenticate": 'Basic realm="catalogue"'} if error.status == 401 else {}
    if service == "WMS" or (service == "WCS" and version.startswith("1.0")):
        if service == "WMS" and version.startswith("1.1"):
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<ServiceExceptionReport version="1.1.1">'
                    f'<ServiceException code={code}{locator}>{message}</ServiceException></ServiceExceptionReport>')
            media = "application/vnd.ogc.se_xml"
        else:
            ver = "1.2.0" if service == "WCS" else "1.3.0"
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<ServiceExceptionReport version="{ver}" '
                    f'xmlns="http://www.opengis.net/ogc"><ServiceException code={code}{locator}>{message}'
                    f'</ServiceException></ServiceExceptionReport>')
            media = XML
    else:
        if service == "WCS":
            ns, ver = "http://www.opengis.net/ows/2.0", "2.0.1"
        elif version.startswith("1.1") or (service == "WFS" and version.startswith("1.0")):
            ns, ver = "http://www.opengis.net/ows", "1.0.0"
        else:
            ns, ver = "http://www.opengis.net/ows/1.1", "2.0.0"
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<ows:ExceptionReport xmlns:ows="{ns}" version="{ver}">'
                f'<ows:Exception exceptionCode={code}{locator}><ows:ExceptionText>{message}</ows:ExceptionText>'
                f'</ows:Exception></ows:ExceptionReport>')
        media = XML
    return Response(body.encode("utf-8"), media_type=media, status_code=error.status, headers=headers)
