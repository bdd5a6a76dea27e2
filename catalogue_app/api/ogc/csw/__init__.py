"""CSW 2.0.2: the catalogue's records for OGC catalogue clients."""
