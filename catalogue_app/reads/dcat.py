"""DCAT-AP 3 of the catalogue and of each resource, as portals harvest it (data.europa.eu, CKAN's
DCAT harvester): JSON-LD written here as plain data, Turtle made from it with rdflib.

Every resource the caller may view is a ``dcat:Dataset`` (datasets, documents, maps and geoapps
alike, as CKAN does), with its distributions taken from the links it already has (downloads,
WMS/WFS/WCS, OGC API - Features items), keywords, themes (the ISO topic categories that have a
clear EU data theme), spatial extent (GeoDCAT-AP's ``dct:spatial`` with a geometry and a
``dcat:bbox``), temporal extent, licence, contact points, publisher, landing page (the web UI's
page), identifier and dates. The catalogue is read a page at a time through the resource list's
own query (visibility is its SQL), 100 resources a page, with hydra paging links as CKAN writes
them. Every node is typed, so that the DCAT-AP SHACL range shapes hold without inference.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

import msgspec

from catalogue_app.reads.resources import keep, render
from catalogue_app.store import Connection, records, resource_extras, resources
from catalogue_app.store import sitemap as store
from catalogue_app.store.db import kept
from catalogue_app.store.resources import ResourceQuery, Viewer

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

PAGE_SIZE = 100
KEPT_PAGES = 64  # anonymous pages kept until the data change (harvesters read them again and again)
CONTEXT = {
    "dcat": "http://www.w3.org/ns/dcat#",
    "dct": "http://purl.org/dc/terms/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "vcard": "http://www.w3.org/2006/vcard/ns#",
    "locn": "http://www.w3.org/ns/locn#",
    "gsp": "http://www.opengis.net/ont/geosparql#",
    "adms": "http://www.w3.org/ns/adms#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "hydra": "http://www.w3.org/ns/hydra/core#",
    "prov": "http://www.w3.org/ns/prov#",
}
INSPIRE = "http://inspire.ec.europa.eu/metadata-codelist/"
# the contact roles beyond the contact point and the creator, as qualified attributions with
# INSPIRE's responsible party roles (as GeoDCAT-AP writes them)
ATTRIBUTED = {"metadata_author": "author", "processor": "processor", "publisher": "publisher",
              "custodian": "custodian", "distributor": "distributor", "resource_user": "user",
              "resource_provider": "resourceProvider", "principal_investigator": "principalInvestigator"}
EU = "http://publications.europa.eu/resource/authority/"
THEMES = EU + "data-theme"
# ISO 19115 topic categories with a clear EU data theme; the others (boundaries, elevation,
# imagery, location, planning, structure, utilities...) have none and are left out.
THEME_OF = {
    "farming": ("AGRI", "Agriculture, fisheries, forestry and food"),
    "biota": ("ENVI", "Environment"),
    "climatologyMeteorologyAtmosphere": ("ENVI", "Environment"),
    "environment": ("ENVI", "Environment"),
    "inlandWaters": ("ENVI", "Environment"),
    "oceans": ("ENVI", "Environment"),
    "economy": ("ECON", "Economy and finance"),
    "health": ("HEAL", "Health"),
    "society": ("SOCI", "Population and society"),
    "population": ("SOCI", "Population and society"),
    "transportation": ("TRAN", "Transport"),
    "geoscientificInformation": ("TECH", "Science and technology"),
}
# ISO 19115 maintenance frequencies and the EU frequency vocabulary
FREQUENCY_OF = {"continual": "CONT", "daily": "DAILY", "weekly": "WEEKLY", "fortnightly": "BIWEEKLY",
                "monthly": "MONTHLY", "quarterly": "QUARTERLY", "biannually": "ANNUAL_2", "annually": "ANNUAL",
                "asNeeded": "IRREG", "irregular": "IRREG", "notPlanned": "NEVER", "unknown": "UNKNOWN"}
SERVICE_TYPES = {"WMS": "http://www.opengis.net/def/serviceType/ogc/wms",
                 "WFS": "http://www.opengis.net/def/serviceType/ogc/wfs",
                 "WCS": "http://www.opengis.net/def/serviceType/ogc/wcs"}
SERVICE_FORMATS = {"WMS": EU + "file-type/WMS_SRVC", "WFS": EU + "file-type/WFS_SRVC"}
FEATURES_CORE = "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core"
IANA = "http://www.iana.org/assignments/media-types/"


class Publisher(NamedTuple):
    """Who publishes the catalogue (settings CATALOGUE_PUBLISHER_*)."""

    name: str
    url: str
    email: str


class Page(NamedTuple):
    """A page of the catalogue: its bytes, or None past the last page (``last``)."""

    body: bytes | None
    last: int


# -- the documents --------------------------------------------------------------------------------
def catalog(conn: Connection, caller: Caller, viewer: Viewer, base: str, publisher: Publisher, page: int,
            fmt: str) -> Page:
    """Page ``page`` (from 1) of the catalogue as the caller sees it, in ``fmt`` (jsonld, ttl).
    What anonymous callers see is kept until the data change."""
    here = kept(conn) if caller.is_anonymous else None
    key = ("dcat catalog", base, publisher, page, fmt)
    found = here.get(key) if here is not None else None
    if found is None:
        found = _catalog(conn, caller, viewer, base, publisher, page, fmt)
        if here is not None:
            keep(here, key, found, KEPT_PAGES)
    return found


def _catalog(conn: Connection, caller: Caller, viewer: Viewer, base: str, publisher: Publisher, page: int,
             fmt: str) -> Page:
    total, rows = resources.page(conn, viewer, ResourceQuery(), PAGE_SIZE, (page - 1) * PAGE_SIZE)
    last = max(1, math.ceil(total / PAGE_SIZE))
    if page > last:
        return Page(None, last)
    items = [msgspec.to_builtins(item) for item in render(conn, rows, caller, viewer, base)] if rows else []
    _add_links(conn, viewer, items)
    licences = store.licenses(conn, sorted({i["license"]["identifier"] for i in items if i.get("license")}))
    here = f"{base}/dcat/catalog"
    agent = publisher_node(publisher, base)
    node = {
        "@id": here, "@type": "dcat:Catalog",
        "dct:title": f"{publisher.name}: catalogue",
        "dct:description": f"The datasets, documents, maps and apps that {publisher.name} publishes, with their "
                           "data services and downloads.",
        "dct:publisher": agent,
        "foaf:homepage": {"@id": f"{base}/", "@type": "foaf:Document"},
        "dcat:themeTaxonomy": {"@id": THEMES, "@type": "skos:ConceptScheme", "dct:title": "Data theme"},
        "dcat:dataset": [dataset(item, base, agent["@id"], licences) for item in items],
    }
    paging = {
        "@id": f"{here}?page={page}", "@type": "hydra:PagedCollection",
        "hydra:totalItems": total, "hydra:itemsPerPage": PAGE_SIZE,
        "hydra:firstPage": f"{here}?page=1", "hydra:lastPage": f"{here}?page={last}",
    }
    if page < last:
        paging["hydra:nextPage"] = f"{here}?page={page + 1}"
    if page > 1:
        paging["hydra:previousPage"] = f"{here}?page={page - 1}"
    return Page(encode({"@context": CONTEXT, "@graph": [node, paging]}, fmt), last)


def one(conn: Connection, caller: Caller, viewer: Viewer, base: str, publisher: Publisher, uuid: str,
        fmt: str) -> bytes | None:
    """The DCAT of one resource the caller may view, with the catalogue's publisher; None when
    there is none with that uuid they may view."""
    rows = records.visible_by_uuids(conn, viewer, [uuid])
    if not rows:
        return None
    item = msgspec.to_builtins(render(conn, rows, caller, viewer, base)[0])
    _add_links(conn, viewer, [item])
    licences = store.licenses(conn, [item["license"]["identifier"]] if item.get("license") else [])
    agent = publisher_node(publisher, base)
    return encode({"@context": CONTEXT, "@graph": [agent, dataset(item, base, agent["@id"], licences)]}, fmt)


def schema_org_of(conn: Connection, caller: Caller, viewer: Viewer, base: str, publisher: Publisher,
                  uuid: str) -> bytes | None:
    """The schema.org JSON-LD of one resource the caller may view (the web UI puts it in the
    resource's page); None when there is none with that uuid they may view."""
    from catalogue_app.reads.linked_data import schema_org

    rows = records.visible_by_uuids(conn, viewer, [uuid])
    if not rows:
        return None
    item = msgspec.to_builtins(render(conn, rows, caller, viewer, base)[0])
    licences = store.licenses(conn, [item["license"]["identifier"]] if item.get("license") else [])
    row = licences.get(item["license"]["identifier"]) if item.get("license") else None
    licence = {"name": row["name"], "url": row["url"]} if row is not None else None
    return msgspec.json.encode(schema_org(item, base, licence=licence, publisher=publisher.name))


def _add_links(conn: Connection, viewer: Viewer, items: list[dict[str, Any]]) -> None:
    """Each item's ``linked_to``: the uuids of the resources it links to that the viewer sees."""
    linked = resource_extras.linked_uuids(conn, [int(item["pk"]) for item in items], viewer)
    for item in items:
        item["linked_to"] = [{"uuid": r["uuid"], "title": r["title"]} for r in linked[int(item["pk"])]]


def encode(document: dict[str, Any], fmt: str) -> bytes:
    """The JSON-LD document as bytes: as it is, or as Turtle."""
    if fmt != "ttl":
        return msgspec.json.encode(document)
    return graph_of(document).serialize(format="turtle", encoding="utf-8")


def graph_of(document: dict[str, Any]):
    """The rdflib graph of a JSON-LD document written here: its nodes' triples read straight from
    the few forms this module writes (compact IRIs of CONTEXT, nested nodes, typed and tagged
    literals, lists of values), several times quicker than rdflib's JSON-LD parser, with the same
    triples (the tests compare the two)."""
    import rdflib  # only when Turtle is asked for: start-up does not pay for it

    context = document["@context"]
    graph = rdflib.Graph()
    for prefix, namespace in context.items():
        graph.bind(prefix, namespace, override=True)
    add, Literal, URIRef = graph.add, rdflib.Literal, rdflib.URIRef
    a = rdflib.RDF.type

    def iri(term: str) -> rdflib.URIRef:
        prefix, colon, local = term.partition(":")
        return URIRef(context[prefix] + local if colon and prefix in context else term)

    def node(value: dict[str, Any]):
        subject = URIRef(value["@id"]) if "@id" in value else rdflib.BNode()
        kinds = value.get("@type", [])
        for kind in [kinds] if isinstance(kinds, str) else kinds:
            add((subject, a, iri(kind)))
        for key, values in value.items():
            if key in ("@id", "@type"):
                continue
            predicate = iri(key)
            for item in values if isinstance(values, list) else [values]:
                add((subject, predicate, term(item)))
        return subject

    def term(value: Any):
        if isinstance(value, dict):
            if "@value" in value:
                if "@language" in value:
                    return Literal(value["@value"], lang=value["@language"])
                return Literal(value["@value"], datatype=iri(value["@type"]) if "@type" in value else None)
            return node(value)
        return Literal(value)

    for item in document["@graph"]:
        node(item)
    return graph


# -- the nodes ------------------------------------------------------------------------------------
def publisher_node(publisher: Publisher, base: str) -> dict[str, Any]:
    node: dict[str, Any] = {"@id": f"{base}/dcat/catalog#publisher", "@type": "foaf:Agent", "foaf:name": publisher.name}
    if publisher.url:
        node["foaf:homepage"] = {"@id": publisher.url, "@type": "foaf:Document"}
    if publisher.email:
        node["foaf:mbox"] = {"@id": "mailto:" + publisher.email}
    return node


def resource_iri(base: str, uuid: str) -> str:
    return f"{base}/dcat/resources/{uuid}"


def dataset(item: dict[str, Any], base: str, publisher_id: str, licences: dict) -> dict[str, Any]:
    """One resource (as the API renders it) as a dcat:Dataset."""
    iri = resource_iri(base, item["uuid"])
    description = item["raw_abstract"] if item["abstract"] and item["raw_abstract"] != "None" else ""
    node: dict[str, Any] = {
        "@id": iri, "@type": "dcat:Dataset",
        "dct:identifier": item["uuid"],
        "dct:title": item["title"],
        "dct:description": description or item["title"],
        "dct:publisher": {"@id": publisher_id},
        "dcat:landingPage": {"@id": item["detail_url"], "@type": "foaf:Document"},
    }
    issued = item["date"] if item.get("date_type") == "publication" and item.get("date") else item["created"]
    for key, value in (("dct:issued", issued), ("dct:modified", item["last_updated"])):
        literal = date_literal(value)
        if literal:
            node[key] = literal
    words = [k["name"] for k in item["keywords"]] + [t["name"] for t in item["tkeywords"]]
    if words:
        node["dcat:keyword"] = list(dict.fromkeys(words))
    category = item.get("category")
    if category and category["identifier"] in THEME_OF:
        code, label = THEME_OF[category["identifier"]]
        node["dcat:theme"] = {"@id": f"{THEMES}/{code}", "@type": "skos:Concept",
                              "skos:prefLabel": {"@value": label, "@language": "en"}, "skos:inScheme": {"@id": THEMES}}
    spatial = location(item)
    if spatial:
        node["dct:spatial"] = spatial
    period = temporal(item)
    if period:
        node["dct:temporal"] = period
    licence = licence_node(item, licences)
    if licence:
        node["dct:license"] = licence
    language = (item.get("language") or "").strip()
    if len(language) == 3 and language.isalpha():
        node["dct:language"] = {"@id": f"{EU}language/{language.upper()}", "@type": "dct:LinguisticSystem"}
    frequency = FREQUENCY_OF.get(item.get("maintenance_frequency") or "")
    if frequency:
        node["dct:accrualPeriodicity"] = {"@id": f"{EU}frequency/{frequency}", "@type": "dct:Frequency"}
    if item.get("edition"):
        node["dcat:version"] = item["edition"]
    if item.get("doi"):
        node["adms:identifier"] = {"@type": "adms:Identifier", "skos:notation": item["doi"]}
    contacts = item["poc"] or [item["owner"]]
    node["dcat:contactPoint"] = [contact(user) for user in contacts]
    creator = (item["originator"] or [item["owner"]])[0]
    node["dct:creator"] = agent(creator)
    attributions = [{"@type": "prov:Attribution", "prov:agent": agent(person),
                     "dcat:hadRole": {"@id": f"{INSPIRE}ResponsiblePartyRole/{role}", "@type": "dcat:Role"}}
                    for api, role in ATTRIBUTED.items() for person in item.get(api) or []]
    if attributions:
        node["prov:qualifiedAttribution"] = attributions
    if item.get("attribution"):
        node["dct:rightsHolder"] = {"@type": "foaf:Agent", "foaf:name": item["attribution"]}
    if category:
        node["dct:subject"] = {"@id": f"{INSPIRE}TopicCategory/{category['identifier']}", "@type": "skos:Concept",
                               "skos:prefLabel": {"@value": category["gn_description"], "@language": "en"}}
    places = [{"@type": "dct:Location", "dct:identifier": r["code"], "skos:prefLabel": r["name"]}
              for r in item.get("regions") or []]
    if places:
        node["dct:spatial"] = [node["dct:spatial"], *places] if "dct:spatial" in node else places
    if item.get("data_quality_statement"):
        node["dct:provenance"] = {"@type": "dct:ProvenanceStatement",
                                  "rdfs:label": item.get("raw_data_quality_statement") or item["data_quality_statement"]}
    rights = [text for text in ((item.get("restriction_code_type") or {}).get("identifier"),
                                item.get("raw_constraints_other") if item.get("constraints_other") else None) if text]
    if rights:
        node["dct:accessRights"] = {"@type": "dct:RightsStatement", "rdfs:label": rights}
    if item.get("purpose"):
        node["skos:scopeNote"] = item.get("raw_purpose") or item["purpose"]
    if item.get("supplemental_information"):
        node["rdfs:comment"] = item.get("raw_supplemental_information") or item["supplemental_information"]
    if item.get("date") and item.get("date_type") == "creation":
        literal = date_literal(item["date"])
        if literal:
            node["dct:created"] = literal
    related = [{"@id": resource_iri(base, other["uuid"]), "@type": "rdfs:Resource"} for other in item.get("linked_to") or []]
    if related:
        node["dct:relation"] = related
    distributions = list(distributions_of(item, base, iri, licence))
    representation = (item.get("spatial_representation_type") or {}).get("identifier")
    for distribution in distributions if representation else []:
        distribution["adms:representationTechnique"] = {
            "@id": f"{INSPIRE}SpatialRepresentationType/{representation}", "@type": "skos:Concept",
            "skos:prefLabel": {"@value": representation, "@language": "en"}}
    if distributions:
        node["dcat:distribution"] = distributions
    return node


def date_literal(text: str | None) -> dict[str, str] | None:
    """An xsd:dateTime (or xsd:date) literal of a stored date; None when it is not one."""
    if not text:
        return None
    text = text.strip()
    try:
        if len(text) == 10:
            return {"@value": datetime.fromisoformat(text).date().isoformat(), "@type": "xsd:date"}
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return {"@value": moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "@type": "xsd:dateTime"}


def location(item: dict[str, Any]) -> dict[str, Any] | None:
    """The extent in longitude and latitude, as GeoDCAT-AP writes it: a geometry and a bbox (WKT,
    CRS84)."""
    box = item.get("ll_bbox_polygon")
    if not box:
        return None
    ring = box["coordinates"][0]
    xs, ys = [p[0] for p in ring], [p[1] for p in ring]
    if not all(math.isfinite(v) for v in xs + ys):
        return None
    x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
    wkt = f"POLYGON(({x0} {y0},{x0} {y1},{x1} {y1},{x1} {y0},{x0} {y0}))"
    literal = {"@value": wkt, "@type": "gsp:wktLiteral"}
    return {"@type": "dct:Location", "dcat:bbox": literal,
            "locn:geometry": {"@type": ["locn:Geometry", "gsp:Geometry"], "gsp:asWKT": literal},
            "dcat:centroid": {"@value": f"POINT({(x0 + x1) / 2} {(y0 + y1) / 2})", "@type": "gsp:wktLiteral"}}


def temporal(item: dict[str, Any]) -> dict[str, Any] | None:
    start, end = date_literal(item.get("temporal_extent_start")), date_literal(item.get("temporal_extent_end"))
    if not start and not end:
        return None
    node: dict[str, Any] = {"@type": "dct:PeriodOfTime"}
    if start:
        node["dcat:startDate"] = start
    if end:
        node["dcat:endDate"] = end
    return node


def licence_node(item: dict[str, Any], licences: dict) -> dict[str, Any] | None:
    chosen = item.get("license")
    row = licences.get(chosen["identifier"]) if chosen else None
    if row is None:
        return None
    node: dict[str, Any] = {"@type": "dct:LicenseDocument", "rdfs:label": row["name"]}
    if row["url"]:
        node["@id"] = row["url"]
    return node


def person_name(user: dict[str, Any]) -> str:
    return (f"{user.get('first_name') or ''} {user.get('last_name') or ''}".strip() or user.get("username")
            or user.get("organization") or "")


def agent(person: dict[str, Any]) -> dict[str, Any]:
    """A user, or a contact that is no user, as a foaf:Agent (a person, or an organisation alone)."""
    if not person_name(person) or (person.get("pk") is None and not person.get("first_name")):
        return {"@type": ["foaf:Agent", "foaf:Organization"], "foaf:name": person.get("organization") or ""}
    return {"@type": ["foaf:Agent", "foaf:Person"], "foaf:name": person_name(person)}


def contact(user: dict[str, Any]) -> dict[str, Any]:
    """A contact point (vCard): a user, or a contact that is no user, with its organisation; the
    e-mail address where the caller is shown it."""
    named = user.get("pk") is None
    kind = "vcard:Organization" if named and not user.get("first_name") else "vcard:Individual"
    node: dict[str, Any] = {"@type": ["vcard:Kind", kind], "vcard:fn": person_name(user)}
    if user.get("organization"):
        node["vcard:organization-name"] = user["organization"]
    if user.get("email"):
        node["vcard:hasEmail"] = {"@id": "mailto:" + user["email"]}
    return node


def web(url: str) -> dict[str, str]:
    """An address as the range shapes want it (typed rdfs:Resource)."""
    return {"@id": url, "@type": "rdfs:Resource"}


def media_type(mime: str) -> dict[str, str] | None:
    mime = (mime or "").split(";")[0].strip().lower()
    if mime.count("/") != 1 or " " in mime:
        return None
    return {"@id": IANA + mime, "@type": "dct:MediaType"}


def distributions_of(item: dict[str, Any], base: str, iri: str, licence: dict[str, Any] | None):
    """The resource's distributions, from its links: each OGC service (with the service it is
    served by), each download, and OGC API - Features items for a vector dataset served here."""
    for link in item["links"]:
        kind, url = link["link_type"], link["url"]
        if not url or not url.startswith(("http://", "https://")):
            continue
        if kind in ("OGC:WMS", "OGC:WFS", "OGC:WCS"):
            service = kind[4:]
            capabilities = joined(url, f"service={service}&request=GetCapabilities")
            node = {"@type": "dcat:Distribution", "dct:title": f"{service}: {link['name']}",
                    "dcat:accessURL": web(capabilities),
                    "dcat:accessService": {
                        "@type": "dcat:DataService", "dct:title": f"OGC {service}",
                        "dcat:endpointURL": web(url), "dcat:endpointDescription": web(capabilities),
                        "dct:conformsTo": {"@id": SERVICE_TYPES[service], "@type": "dct:Standard"},
                        "dcat:servesDataset": {"@id": iri}}}
            if service in SERVICE_FORMATS:
                node["dct:format"] = {"@id": SERVICE_FORMATS[service], "@type": "dct:MediaTypeOrExtent"}
        elif kind in ("data", "original"):
            node = {"@type": "dcat:Distribution", "dct:title": link["name"] or "Download", "dcat:accessURL": web(url)}
            if link["name"] != "Remote document":  # a remote page, not a file
                node["dcat:downloadURL"] = web(url)
            found = media_type(link["mime"])
            if found:
                node["dcat:mediaType"] = found
        else:
            continue
        if licence:
            node["dct:license"] = licence
        yield node
    if item["resource_type"] == "dataset" and item.get("alternate") and item.get("subtype") != "raster" and any(
            link["link_type"] == "OGC:WFS" and link["url"].startswith(base + "/") for link in item["links"]):
        layer = item["alternate"].split(":")[-1]
        items = f"{base}/ogcapi/collections/{quote(layer, safe='')}/items"
        node = {"@type": "dcat:Distribution", "dct:title": "OGC API - Features", "dcat:accessURL": web(items),
                "dcat:mediaType": {"@id": IANA + "application/geo+json", "@type": "dct:MediaType"},
                "dct:conformsTo": {"@id": FEATURES_CORE, "@type": "dct:Standard"},
                "dcat:accessService": {
                    "@type": "dcat:DataService", "dct:title": "OGC API - Features",
                    "dcat:endpointURL": web(f"{base}/ogcapi/"),
                    "dcat:endpointDescription": web(f"{base}/ogcapi/openapi"),
                    "dct:conformsTo": {"@id": FEATURES_CORE, "@type": "dct:Standard"},
                    "dcat:servesDataset": {"@id": iri}}}
        if licence:
            node["dct:license"] = licence
        yield node


def joined(url: str, query: str) -> str:
    if "?" not in url:
        return f"{url}?{query}"
    return url + ("" if url.endswith(("?", "&")) else "&") + query
