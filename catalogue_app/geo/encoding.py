"""The character set of a vector file's text, when the file does not say it itself.

A Shapefile names its encoding in a .cpg file or in the language byte of its .dbf; GDAL reads
one without either as ISO-8859-1. An uploader may name the charset instead (GeoNode's
``charset`` form field). It is used only where the file is silent, and only when the text
really decodes with it: clients such as geonodectl send "UTF-8" by default, and an old
Latin-1 file must not turn into replacement characters because of that default.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from pathlib import Path

from .errors import GeoError

CHECKED_BYTES = 64 * 1024 * 1024  # enough text to tell; a larger file is checked on its start
_UTF8 = {"utf-8", "utf8"}


# Python codecs that are not character sets a file's text can be in (or that GDAL cannot read)
NOT_CHARSETS = {"idna", "punycode", "utf-7", "raw-unicode-escape", "unicode-escape", "undefined", "utf-16", "utf-16-be",
                "utf-16-le", "utf-32", "utf-32-be", "utf-32-le", "mbcs", "oem", "charmap"}


def codec_name(charset: str) -> str:
    """The canonical name of ``charset`` ("latin1" -> "iso8859-1"); GeoError when it is not a
    known character set of text (base64, rot13 or zlib are codecs, not character sets)."""
    try:
        codec = codecs.lookup(charset.strip())
    except (LookupError, ValueError):
        codec = None
    if codec is None or not getattr(codec, "_is_text_encoding", True) or codec.name.replace("_", "-") in NOT_CHARSETS:
        raise GeoError(f"charset: {charset!r} is not a known character set (e.g. UTF-8, ISO-8859-1, cp1252).")
    return codec.name


def text_encoding(main: Path, parts: Sequence[Path], charset: str | None) -> str | None:
    """The encoding to read ``main``'s text with, or None to let GDAL decide."""
    if not charset:
        return None
    suffix = main.suffix.lower()
    if suffix == ".shp":
        if any(p.suffix.lower() == ".cpg" for p in parts):
            return None
        dbf = next((p for p in parts if p.suffix.lower() == ".dbf"), None)
        if dbf is None:
            return None
        with open(dbf, "rb") as f:
            header = f.read(32)
            if len(header) < 32 or header[29] != 0:  # the language byte names the encoding
                return None
            f.seek(int.from_bytes(header[8:10], "little"))
            text = f.read(CHECKED_BYTES)
    elif suffix == ".csv":
        with open(main, "rb") as f:
            text = f.read(CHECKED_BYTES)
    else:
        return None  # GeoPackage, GeoJSON and KML are UTF-8 by definition
    name = codec_name(charset)
    if len(text) == CHECKED_BYTES and name.replace("_", "-") in _UTF8:
        text = text[: text.rfind(b"\n") + 1] or text[:-3]  # do not cut a character in two
    try:
        text.decode(name)
    except (UnicodeError, LookupError):
        return None
    if suffix == ".csv" and name in _UTF8:
        return None  # GDAL reads CSV as UTF-8 already
    return name
