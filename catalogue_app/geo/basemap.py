"""The built-in basemap: Natural Earth's countries (public domain), shipped with the package in
data/basemap-countries.gpkg (made by scripts/make_basemap.py), and the style it is drawn with
(light land, mid-grey borders; the sea is the map's background)."""

from __future__ import annotations

from pathlib import Path

PATH = Path(__file__).parent / "data" / "basemap-countries.gpkg"
CRS = "EPSG:4326"
GEOMETRY_TYPE = "MultiPolygon"
BOUNDS = (-180.0, -90.0, 180.0, 83.64513)   # lon, lat
STYLE = "basemap"
LAND = "#eef0e8"
BORDER = "#a9b0b7"
SLD = f"""<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc">
  <NamedLayer><Name>basemap</Name><UserStyle><Name>{STYLE}</Name><Title>Countries</Title>
    <FeatureTypeStyle><Rule><PolygonSymbolizer>
      <Fill><CssParameter name="fill">{LAND}</CssParameter></Fill>
      <Stroke><CssParameter name="stroke">{BORDER}</CssParameter><CssParameter name="stroke-width">0.6</CssParameter></Stroke>
    </PolygonSymbolizer></Rule></FeatureTypeStyle>
  </UserStyle></NamedLayer>
</StyledLayerDescriptor>
""".encode()
