"""Entity tags of features (OGC API - Features, Part 4): a tag that changes whenever the feature
does, so that a client's If-Match names the state it edited."""

from __future__ import annotations

from pathlib import Path


def etag_of(path: str | Path, fid: int) -> str | None:
    """The entity tag (quoted, as sent in ETag) of feature ``fid`` of the working copy at
    ``path``; None when there is no such feature."""
    return None
