#!/bin/sh
# Tests that use GDAL's own OGC clients (ogrinfo, ogr2ogr) need Debian's gdal-bin: install it
# where it is missing (Debian and Ubuntu, as root or with sudo).
set -eu
if command -v ogrinfo >/dev/null 2>&1; then
    exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    echo "Installing GDAL's command-line tools for the client tests (apt-get install gdal-bin)..."
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq gdal-bin >/dev/null
    exit 0
fi
echo "GDAL's command-line tools are missing: install gdal-bin (ogrinfo, ogr2ogr)." >&2
exit 1
