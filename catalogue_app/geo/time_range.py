"""The first and last moment in a date or time field of a working copy (a dataset's time extent)."""

from __future__ import annotations

from pathlib import Path

from .errors import GeoError

TEMPORAL_TYPES = ("xsd:dateTime", "xsd:date")


def time_range(path: str | Path, layer: str, attribute: str) -> tuple[str | None, str | None]:
    """The earliest and latest value of ``attribute`` as UTC times ("2024-01-31T00:00:00.000000Z"),
    or (None, None) when it holds no value."""
    import numpy as np
    import pyogrio.raw

    from .inspect import _clean, _vector_errors

    try:
        _meta, _fids, _geometry, fields = pyogrio.raw.read(path, layer=layer, columns=[attribute], read_geometry=False)
    except _vector_errors() as exc:
        raise GeoError(f"the field {attribute!r} cannot be read ({_clean(exc)}).") from None
    values = fields[0]
    if values.dtype.kind != "M":
        raise GeoError(f"the field {attribute!r} holds no dates or times.")
    values = values[~np.isnat(values)]
    if not len(values):
        return None, None
    return _stamp(values.min()), _stamp(values.max())


def _stamp(value) -> str:
    import numpy as np

    micro = np.datetime64(value, "us").astype("datetime64[us]")
    return np.datetime_as_string(micro, unit="us") + "Z"
