"""Receiving a multipart/form-data upload straight into a folder of the data folder.

Litestar's own form parsing spools each file to the system's temporary folder, from where it
would be copied again; a 100 MB upload was written twice before it was looked at, and a small
or memory-backed /tmp could not take a large one at all. Here each file part is written once,
into ``folder``, as it arrives, and the size limit is checked on the way: once the files pass
it, the rest of the body is read and dropped (so that the client, still sending, gets the 400)
and nothing is kept.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from litestar import Request
from multipart import MultipartError, MultipartSegment, PushMultipartParser

from catalogue_app.api.errors import ApiError, invalid

MAX_FIELD = 1024 * 1024  # a text field (permissions, a title) is small
MAX_PARTS = 64
NAME_MAX = 255  # bytes: what a file system takes as one name


@dataclass
class ReceivedFile:
    filename: str
    path: Path
    size: int


@dataclass
class Form:
    """The files (by field, the first one sent) and the text fields of a received form."""

    files: dict[str, ReceivedFile] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    repeated: set[str] = field(default_factory=set)  # file fields sent more than once (the first is kept)


class TooLarge(Exception):
    """The counted files passed the limit (the body was read to its end, and dropped)."""


async def receive(request: Request, folder: Path, *, limit: int, skip=lambda name, form: False) -> Form:
    """Read the request's multipart body: files into ``folder`` (as .part-N; the caller names
    them; together at most ``limit`` bytes, TooLarge past it), text fields into memory.
    ``skip(field, form)`` drops a file part unread (one the caller has no use for, or a second
    copy of one already received)."""
    media, _, options = request.headers.get("content-type", "").partition(";")
    boundary = next((v.strip().strip('"') for k, _, v in (o.strip().partition("=") for o in options.split(";"))
                     if k.lower() == "boundary"), "")
    if media.strip().lower() != "multipart/form-data":
        raise ApiError(415, "An upload is sent as multipart/form-data.", "unsupported_media_type")
    if not boundary:
        raise invalid("Invalid multipart/form-data: the Content-Type has no boundary.")
    folder.mkdir(parents=True, exist_ok=True)
    form, total = Form(), 0
    segment: MultipartSegment | None = None
    out = None  # the open file of the current file part
    text = bytearray()
    dropping = False
    try:
        with PushMultipartParser(boundary, max_segment_count=MAX_PARTS, max_header_size=8192) as parser:
            async for chunk in request.stream():
                for part in parser.parse(chunk):
                    if dropping:
                        continue
                    if isinstance(part, MultipartSegment):
                        segment, text = part, bytearray()
                        name = part.name or ""
                        if part.filename is not None and name in form.files:
                            form.repeated.add(name)
                        elif part.filename is not None and not skip(name, form):
                            path = folder / f".part-{len(form.files)}"
                            out = open(path, "wb")  # noqa: SIM115 (closed at the segment's end)
                            form.files[name] = ReceivedFile(part.filename, path, 0)
                    elif part:  # a piece of the segment's body
                        if out is not None:
                            out.write(part)
                            total += len(part)
                            if total > limit:
                                dropping = True
                        elif segment is not None and segment.filename is None:
                            text += part
                            if len(text) > MAX_FIELD:
                                raise invalid(f"{segment.name}: a form field is at most 1 MB.")
                    else:  # the segment ended
                        if out is not None:
                            out.flush()
                            await asyncio.to_thread(os.fsync, out.fileno())
                            out.close()
                            form.files[segment.name or ""].size = segment.size
                            out = None
                        elif segment is not None and segment.filename is None:
                            form.fields.setdefault(segment.name or "", _decode(text, segment.charset))
                        segment = None
            if not parser.closed and not dropping:
                raise invalid("The multipart body ends before its last part does.")
    except MultipartError as exc:
        raise invalid(f"The multipart body cannot be read ({exc}).") from None
    finally:
        if out is not None:
            out.close()
    if dropping:
        raise TooLarge(total)
    return form


def _decode(text: bytearray, charset: str | None) -> str:
    """A text field in the charset its part names (UTF-8 when none, or an unknown one)."""
    try:
        return text.decode(charset or "utf-8", "replace")
    except LookupError:
        return text.decode("utf-8", "replace")


def safe_name(filename: str | None, field_name: str) -> str:
    """A sent file's own name, without any folder part; 400 when nothing usable is left, when it
    holds control characters (NUL among them) or is longer than a file system takes."""
    name = posixpath.basename((filename or "").replace("\\", "/"))
    if not name or name in (".", "..") or any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise invalid(f"{field_name}: the file has no usable name.")
    if len(name.encode("utf-8", "surrogatepass")) > NAME_MAX:
        raise invalid(f"{field_name}: the file name is longer than {NAME_MAX} bytes.")
    return name

