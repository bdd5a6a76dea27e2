"""Is a file what its name says? The first bytes of a document against its extension's family.

An executable (Windows, Linux, macOS binaries, scripts with ``#!``) is refused whatever its
name. A file of a known family (PDF, images, office documents, archives, sound, video, text)
must start as that family's files do; extensions without a known signature are taken as they
are, once they are not executables.
"""

from __future__ import annotations

from pathlib import Path

HEAD = 8192  # bytes read


def _riff(kind: bytes):
    return lambda h: h[:4] == b"RIFF" and h[8:12] == kind


def _text(h: bytes) -> bool:
    """Plain text: UTF-16 with its byte-order mark, or no NUL in the first bytes."""
    return h[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\0" not in h


ZIP = (b"PK\x03\x04", b"PK\x05\x06")
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
CHECKS = {
    "pdf": lambda h: b"%PDF-" in h[:1024],
    "png": lambda h: h.startswith(b"\x89PNG\r\n\x1a\n"),
    "gif": lambda h: h[:6] in (b"GIF87a", b"GIF89a"),
    "jpg": lambda h: h.startswith(b"\xff\xd8\xff"),
    "tif": lambda h: h[:4] in (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"),
    "bmp": lambda h: h.startswith(b"BM"),
    "pbm": lambda h: h[:2] in (b"P1", b"P4"),
    "zip": lambda h: h[:4] in ZIP,
    "ole2": lambda h: h.startswith(OLE2) or h.startswith(b"{\\rtf"),
    "gz": lambda h: h.startswith(b"\x1f\x8b"),
    "tar": lambda h: h[257:262] == b"ustar",
    "rar": lambda h: h.startswith(b"Rar!\x1a\x07"),
    "7z": lambda h: h.startswith(b"7z\xbc\xaf\x27\x1c"),
    "mp3": lambda h: h.startswith(b"ID3") or (len(h) > 1 and h[0] == 0xFF and h[1] & 0xE0 == 0xE0),
    "wav": _riff(b"WAVE"),
    "avi": _riff(b"AVI "),
    "aiff": lambda h: h[:4] == b"FORM" and h[8:12] in (b"AIFF", b"AIFC"),
    "au": lambda h: h.startswith(b".snd"),
    "mp4": lambda h: h[4:8] == b"ftyp",
    "webm": lambda h: h.startswith(b"\x1a\x45\xdf\xa3"),
    "ogg": lambda h: h.startswith(b"OggS"),
    "flv": lambda h: h.startswith(b"FLV"),
    "mpeg": lambda h: h[:4] in (b"\0\0\1\xba", b"\0\0\1\xb3") or (len(h) > 1 and h[0] == 0xFF and h[1] & 0xE0 == 0xE0),
    "glb": lambda h: h.startswith(b"glTF"),
    "dwg": lambda h: h.startswith(b"AC10"),
    "dxf": lambda h: _text(h) or h.startswith(b"AutoCAD Binary DXF"),
    "text": _text,
}
FAMILY = {
    "pdf": "pdf", "png": "png", "gif": "gif", "jpg": "jpg", "jpe": "jpg", "jpeg": "jpg", "tif": "tif", "tiff": "tif",
    "bmp": "bmp", "bm": "bmp", "pbm": "pbm",
    "docx": "zip", "xlsx": "zip", "pptx": "zip", "odt": "zip", "ods": "zip", "odp": "zip", "zip": "zip",
    "doc": "ole2", "xls": "ole2", "ppt": "ole2",
    "gz": "gz", "tgz": "gz", "tar": "tar", "rar": "rar", "7z": "7z",
    "mp3": "mp3", "mpga": "mp3", "wav": "wav", "avi": "avi", "aif": "aiff", "aiff": "aiff", "aifc": "aiff", "au": "au",
    "mp4": "mp4", "3gp": "mp4", "webm": "webm", "ogg": "ogg", "flv": "flv", "mpg": "mpeg", "mp2": "mpeg",
    "glb": "glb", "dwg": "dwg", "dxf": "dxf",
    "txt": "text", "csv": "text", "log": "text", "xml": "text", "sld": "text", "qml": "text", "gltf": "text", "ifc": "text",
}
NAMES = {"pdf": "a PDF", "zip": "a zip archive (as office documents are)", "ole2": "an Office 97-2003 document",
         "text": "plain text", "jpg": "a JPEG image", "tif": "a TIFF image", "png": "a PNG image", "gif": "a GIF image",
         "bmp": "a BMP image"}


def executable(head: bytes) -> str | None:
    """What kind of program the first bytes are, or None."""
    if head.startswith(b"\x7fELF"):
        return "a Linux program (ELF)"
    if head.startswith(b"MZ") and (b"\0" in head[:512] or b"PE\0\0" in head):
        return "a Windows program"
    if head[:4] in (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return "a macOS program"
    if head.startswith(b"#!/") or head.startswith(b"#! /"):
        return "a script"
    return None


def refusal(path: Path, name: str, extension: str) -> str | None:
    """Why the file at ``path``, sent as ``name``, cannot be a document of this extension, or
    None when it can."""
    with open(path, "rb") as f:
        head = f.read(HEAD)
    program = executable(head)
    if program:
        return f"{name} is {program}: programs are not accepted as documents, whatever their name."
    family = FAMILY.get(extension.lower())
    if family is None or not head or CHECKS[family](head):
        return None
    kind = NAMES.get(family, f"a .{extension.lower()} file")
    return f"{name} is not {kind}: its content does not match its extension .{extension.lower()}."
