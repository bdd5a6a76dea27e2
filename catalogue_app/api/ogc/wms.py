"""WMS: to be written."""

from __future__ import annotations

from litestar import Response

from catalogue_app.api.ogc.common import OgcError, OgcRequest


def handle(req: OgcRequest) -> Response:
    """Answer one WMS request (runs in a worker thread)."""
    raise OgcError("OperationNotSupported", "WMS is not served yet.", "request", 501)
