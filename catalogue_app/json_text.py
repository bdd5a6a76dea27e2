"""JSON from requests, with a bound on nesting: bodies, form fields and query values alike.

Arrays and objects may nest at most MAX_DEPTH levels; deeper text is a 400 "JSON nested too
deeply" (without the bound, 100,000 brackets would exhaust Python's recursion and end in a 500).
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from catalogue_app.services.errors import Unreadable

MAX_DEPTH = 64
# a JSON string; only used on text already decoded, so every quote outside strings opens one
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def too_deep() -> Unreadable:
    return Unreadable(f"JSON nested too deeply: at most {MAX_DEPTH} levels of arrays and objects.")


def check_depth(raw: bytes) -> None:
    """Raise too_deep() when valid JSON ``raw`` nests deeper than MAX_DEPTH (one pass in numpy)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return
    import numpy as np  # (here: most bodies never get this far, and a start needs no numpy)

    codes = np.frombuffer(_STRING.sub(b"", raw), dtype=np.uint8)
    steps = ((codes == 0x5B) | (codes == 0x7B)).astype(np.int32) - ((codes == 0x5D) | (codes == 0x7D))
    if steps.size and int(np.cumsum(steps).max()) > MAX_DEPTH:
        raise too_deep()


def decode(raw: bytes) -> Any:
    """A body's JSON value (msgspec.DecodeError when it is not JSON)."""
    try:
        value = msgspec.json.decode(raw)
    except RecursionError:
        raise too_deep() from None
    check_depth(raw)
    return value


def loads(text: str) -> Any:
    """A form field's or a query value's JSON value (ValueError when it is not JSON)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep() from None
    check_depth(text.encode("utf-8", "surrogatepass"))
    return value
