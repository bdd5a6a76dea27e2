"""The ISO 19139 XML schemas (tests/data/iso19139), loaded once with lxml, to validate the
catalogue's ISO records offline."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from lxml import etree

GMD_XSD = (Path(__file__).parent / "data" / "iso19139" / "pycsw" / "plugins" / "profiles" / "apiso" / "schemas"
           / "ogc" / "iso" / "19139" / "20060504" / "gmd" / "gmd.xsd")


@lru_cache(maxsize=1)
def schema() -> etree.XMLSchema:
    parser = etree.XMLParser(no_network=True, resolve_entities=False)
    return etree.XMLSchema(etree.parse(str(GMD_XSD), parser))


def errors_of(element: etree._Element) -> list[str]:
    """The schema's complaints about one gmd:MD_Metadata element (none: it is valid)."""
    document = etree.fromstring(etree.tostring(element))
    checker = schema()
    return [] if checker.validate(document) else [f"{e.line}: {e.message}" for e in checker.error_log]
