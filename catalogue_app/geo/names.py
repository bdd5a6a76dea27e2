"""Safe layer names derived from file names."""

from __future__ import annotations

import re
import unicodedata

_NOT_ALLOWED = re.compile(r"[^a-z0-9_]+")
_KNOWN_SUFFIXES = (".aux.xml", ".tar.gz")


def name_for(filename: str) -> str:
    """A layer name for ``filename``: lower-case ASCII letters, digits and underscores.

    The folder and the extension are dropped, accents are removed ("Évora" gives "evora"), every
    other run of characters becomes one underscore, and a name that would start with a digit (or
    be empty) gets a prefix: "2024 Roads.shp" gives "l_2024_roads", "%%%.shp" gives "layer".
    The caller makes the name unique.
    """
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    lowered = base.lower()
    for suffix in _KNOWN_SUFFIXES:
        if lowered.endswith(suffix):
            base = base[: -len(suffix)]
            break
    else:
        stem, dot, _ext = base.rpartition(".")
        if dot and stem:
            base = stem
    decomposed = unicodedata.normalize("NFKD", base)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    name = _NOT_ALLOWED.sub("_", plain.lower()).strip("_")
    name = re.sub(r"_+", "_", name)
    if not name:
        return "layer"
    if name[0].isdigit():
        name = "l_" + name
    return name
