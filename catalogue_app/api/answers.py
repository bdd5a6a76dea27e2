"""Small answer helpers shared by handlers."""

from __future__ import annotations

import msgspec
from litestar import MediaType, Response


def json_string(message: str, status: int = 200) -> Response[bytes]:
    """A bare JSON string body, as GeoNode answers some actions (``"User deleted sucessfully"``)."""
    return Response(msgspec.json.encode(message), status_code=status, media_type=MediaType.JSON)
