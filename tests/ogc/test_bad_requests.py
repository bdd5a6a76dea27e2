"""Garbage in every parameter of every operation: each answer is a 2xx or a 4xx, never a 500.

The requests are made up from a fixed seed: real layer names, numbers at the edges, broken
lists, control characters and very long values, mixed into otherwise valid requests."""

import random

import pytest

OPERATIONS = {
    "WMS": {
        "GetCapabilities": ["version"],
        "GetMap": ["version", "layers", "styles", "crs", "srs", "bbox", "width", "height", "format", "transparent",
                   "bgcolor", "sld_body"],
        "GetFeatureInfo": ["version", "layers", "query_layers", "crs", "bbox", "width", "height", "i", "j", "x", "y",
                           "info_format", "feature_count"],
        "GetLegendGraphic": ["version", "layer", "style", "format", "width", "height"],
    },
    "WFS": {
        "GetCapabilities": ["version", "acceptversions"],
        "DescribeFeatureType": ["version", "typenames", "typename", "outputformat"],
        "GetFeature": ["version", "typenames", "typename", "count", "maxfeatures", "startindex", "bbox", "srsname",
                       "propertyname", "resulttype", "outputformat", "sortby", "resourceid", "featureid"],
    },
    "WCS": {
        "GetCapabilities": ["version", "acceptversions"],
        "DescribeCoverage": ["version", "coverageid", "coverage", "identifiers"],
        "GetCoverage": ["version", "coverageid", "coverage", "subset", "format", "outputcrs", "subsettingcrs",
                        "scalesize", "scalefactor", "scaleaxes", "crs", "response_crs", "bbox", "width", "height",
                        "resx", "resy", "interpolation", "rangesubset"],
    },
}


def values(ogc) -> list[str]:
    names = [ogc[k]["alternate"] for k in ("countries", "cities", "rgb", "private")]
    return names + [n.replace(":", "__") for n in names] + [
        "", " ", "*", ",", ",,", "-1", "0", "1", "2", "1e309", "-1e309", "nan", "inf", "99999999999999999999",
        "3.5", "1,2,3", "1,2,3,4", "-180,-90,180,90", "90,180,-90,-180", "0,0,0,0", "a,b,c,d", "1,2,3,4,EPSG:4326",
        "EPSG:4326", "EPSG:3857", "EPSG:0", "EPSG:999999", "CRS:84", "urn:ogc:def:crs:EPSG::4326",
        "http://www.opengis.net/def/crs/EPSG/0/32618", "EPSG:", "1.3.0", "1.1.1", "2.0.0", "2.0.1", "1.0.0", "9.9.9",
        "image/png", "image/jpeg", "application/json", "text/html", "image/tiff", "GeoTIFF", "x/y",
        "E(0,1)", "N(1,0)", "Lat(-100,100)", "Long(a,b)", "i(0,10)", "E(", "x(1,2,3)", "E(512),N(512)",
        "E(0),N(-5)", "E(99999999)", "hits", "results", "name", "-name", "name DESC", "x.1", "TRUE", "0xFFFFFF",
        "0xZZ", "<sld/>", "<", "\x00", "\x01", "%", "é", "𝔘", "a" * 5000, "1" * 400,
    ]


@pytest.mark.parametrize("service", sorted(OPERATIONS))
def test_no_combination_of_bad_values_gives_a_500(ogc, service):
    rng = random.Random(f"bad-{service}")
    pool = values(ogc)
    with ogc["srv"].client(auth=(ogc["viewer"]["username"], ogc["viewer"]["password"]), retry_all=True) as client:
        for operation, keys in OPERATIONS[service].items():
            for _ in range(60):
                params = {"service": service, "request": operation}
                for key in rng.sample(keys, k=rng.randint(1, len(keys))):
                    params[key.upper() if rng.random() < 0.3 else key] = rng.choice(pool)
                r = client.get("/geoserver/ows", params=params)
                assert r.status_code < 500, (params, r.status_code, r.text[:500])
                if r.status_code >= 400 and r.status_code not in (413, 414, 431):
                    assert "Exception" in r.text, (params, r.text[:300])


def test_numbers_too_long_for_python_are_refused(ogc):
    """Python will not read a number of more than 4,300 digits: such values are bad requests."""
    digits = "7" * 5000
    countries, rgb = ogc["countries"]["alternate"], ogc["rgb"]["alternate"].replace(":", "__")
    with ogc["srv"].client() as anon:
        for params in (
                {"service": "WFS", "version": "2.0.0", "request": "GetFeature", "typenames": countries,
                 "resourceid": f"{countries.split(':')[1]}.{digits}"},
                {"service": "WFS", "version": "2.0.0", "request": "GetFeature", "typenames": countries,
                 "srsname": f"EPSG:{digits}"},
                {"service": "WFS", "version": "2.0.0", "request": "GetFeature", "typenames": countries,
                 "bbox": f"0,0,1,1,EPSG:{digits}"},
                {"service": "WCS", "version": "2.0.1", "request": "GetCoverage", "coverageid": rgb,
                 "rangesubset": digits},
                {"service": "WMS", "version": "1.3.0", "request": "GetMap", "layers": countries, "styles": "",
                 "crs": f"EPSG:{digits}", "bbox": "0,0,1,1", "width": "10", "height": "10", "format": "image/png"}):
            r = anon.get("/geoserver/ows", params=params)
            assert 400 <= r.status_code < 500 and "Exception" in r.text, (params["request"], r.status_code, r.text[:300])


def test_a_type_is_found_by_each_of_its_names(ogc):
    """The bare name, the WCS-style "catalogue__name" and the alternate all name one layer."""
    name = ogc["countries"]["alternate"].split(":")[1]
    with ogc["srv"].client() as anon:
        for typename in (name, f"catalogue__{name}", ogc["countries"]["alternate"]):
            r = anon.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                                   "typenames": typename, "resulttype": "hits"})
            assert r.status_code == 200 and 'numberMatched="177"' in r.text, (typename, r.text[:300])
