"""WCS: to be written."""

from __future__ import annotations

from litestar import Response

from catalogue_app.api.ogc.common import OgcError, OgcRequest


def handle(req: OgcRequest) -> Response:
    """Answer one WCS request (runs in a worker thread)."""
    raise OgcError("OperationNotSupported", "WCS is not served yet.", "request", 501)
