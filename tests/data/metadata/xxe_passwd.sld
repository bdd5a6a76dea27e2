<?xml version="1.0" encoding="UTF-8"?>
<!-- Written for the catalogue's tests (CC0): an SLD whose style name is an external entity reading /etc/passwd; it must be refused. -->
<!DOCTYPE StyledLayerDescriptor [
  <!ENTITY passwd SYSTEM "file:///etc/passwd">
]>
<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld">
  <NamedLayer>
    <Name>&passwd;</Name>
    <UserStyle>
      <Name>&passwd;</Name>
      <Title>&passwd;</Title>
      <FeatureTypeStyle>
        <Rule>
          <LineSymbolizer/>
        </Rule>
      </FeatureTypeStyle>
    </UserStyle>
  </NamedLayer>
</StyledLayerDescriptor>
