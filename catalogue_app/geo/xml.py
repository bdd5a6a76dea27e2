"""XML documents from uploads (ISO metadata, SLD styles), read safely: no network, no DTD,
no entity expansion; a DOCTYPE that declares entities (billion laughs, external entities) is
refused outright."""

from __future__ import annotations

import re

from lxml import etree

from .errors import GeoError

# What libxml2 takes without its "huge" option: elements nested this deep, text nodes this long.
MAX_DEPTH = 256
MAX_TEXT = 10_000_000
# Characters XML 1.0 cannot hold at all (control characters, U+FFFE, U+FFFF, lone surrogates).
NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with what XML cannot hold replaced by U+FFFD, so that a title or a value a
    client sent can always be written into a document."""
    return NOT_XML.sub("\ufffd", text)


def read_xml(data: bytes, what: str, send: str) -> etree._Element:
    """The root element of ``data``, parsed with no network, no DTD and no entities.

    ``what`` names the file in messages ("The metadata file"); ``send`` says what to send instead.
    Raises GeoError for empty input, input that is not XML (an HTML page gets a message of its own)
    and a DOCTYPE that declares entities.
    """
    data = bytes(data).lstrip()
    if not data:
        raise GeoError(f"{what} is empty. {send}.")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        if b"<!ENTITY" in data:  # libxml2 stops a "billion laughs" itself, even without expanding it
            raise GeoError(_entities(what)) from None
        if _looks_like_html(data):
            raise GeoError(f"{what} is a web page (HTML), not XML. {send}.") from None
        reason = str(getattr(exc, "msg", None) or exc)[:200]
        if "Excessive depth" in reason:  # libxml2's limits, met before the document's end
            raise GeoError(f"{what} is nested more than {MAX_DEPTH} elements deep. {send}.") from None
        if "Text node too long" in reason or "Huge input lookup" in reason:
            raise GeoError(f"{what} holds a text of {MAX_TEXT // 1_000_000} MB or more in one piece. {send}.") from None
        raise GeoError(f"{what} is not well-formed XML ({reason}). {send}.") from None
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise GeoError(_entities(what))
    if etree.QName(root).localname.lower() == "html":
        raise GeoError(f"{what} is a web page (HTML), not XML. {send}.")
    return root


def _entities(what: str) -> str:
    return f"{what} declares XML entities (<!ENTITY ...>), which are refused for safety. Remove the DOCTYPE and send it again."


def _looks_like_html(data: bytes) -> bool:
    head = data[:2048].lower()
    return b"<!doctype html" in head or b"<html" in head


def root_start(data: bytes) -> tuple[str | None, str, dict[str, str]] | None:
    """The namespace, local name and attributes of the root element of ``data``, read from its
    start alone (the rest is not parsed, nor need it be complete); None when the start is not
    well-formed XML."""
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True, load_dtd=False,
                                 huge_tree=False)
    view = memoryview(bytes(data).lstrip())
    for at in range(0, min(len(view), 1 << 20), 4096):
        try:
            parser.feed(bytes(view[at:at + 4096]))
        except (etree.XMLSyntaxError, ValueError):
            broken = True
        else:
            broken = False
        for _event, element in parser.read_events():  # the root may have started before what is wrong
            name = etree.QName(element)
            return name.namespace, name.localname, {str(k): str(v) for k, v in element.attrib.items()}
        if broken:
            return None
    return None
