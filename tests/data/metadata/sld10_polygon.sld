<?xml version="1.0" encoding="UTF-8"?>
<!-- Written for the catalogue's tests (CC0): an SLD 1.0.0 style for a polygon layer. -->
<StyledLayerDescriptor version="1.0.0"
    xmlns="http://www.opengis.net/sld"
    xmlns:ogc="http://www.opengis.net/ogc"
    xmlns:xlink="http://www.w3.org/1999/xlink"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:schemaLocation="http://www.opengis.net/sld http://schemas.opengis.net/sld/1.0.0/StyledLayerDescriptor.xsd">
  <NamedLayer>
    <Name>flood_meadows</Name>
    <UserStyle>
      <Name>meadows_by_status</Name>
      <Title>Flood meadows by management status</Title>
      <Abstract>Managed meadows in green, others in sand.</Abstract>
      <FeatureTypeStyle>
        <Rule>
          <Name>managed</Name>
          <Title>Managed for wildlife</Title>
          <ogc:Filter>
            <ogc:PropertyIsEqualTo>
              <ogc:PropertyName>status</ogc:PropertyName>
              <ogc:Literal>managed</ogc:Literal>
            </ogc:PropertyIsEqualTo>
          </ogc:Filter>
          <PolygonSymbolizer>
            <Fill>
              <CssParameter name="fill">#8fb996</CssParameter>
            </Fill>
            <Stroke>
              <CssParameter name="stroke">#3c6e47</CssParameter>
              <CssParameter name="stroke-width">1</CssParameter>
            </Stroke>
          </PolygonSymbolizer>
        </Rule>
        <Rule>
          <Name>other</Name>
          <Title>Other</Title>
          <ElseFilter/>
          <PolygonSymbolizer>
            <Fill>
              <CssParameter name="fill">#e3d5b8</CssParameter>
            </Fill>
            <Stroke>
              <CssParameter name="stroke">#8c7b5a</CssParameter>
              <CssParameter name="stroke-width">0.5</CssParameter>
            </Stroke>
          </PolygonSymbolizer>
        </Rule>
      </FeatureTypeStyle>
    </UserStyle>
  </NamedLayer>
</StyledLayerDescriptor>
