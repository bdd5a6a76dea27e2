"""The OGC services of the catalogue's own datasets: WMS, WFS and WCS, at GeoServer's addresses."""
