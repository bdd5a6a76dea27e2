#!/bin/sh
# Vendors Leaflet, pinned, into ui/vendor/leaflet/ (the web UI's map library, with its licence).
# Run by hand when upgrading; the result is committed, so neither `make run` nor `make test`
# needs Node.js or the network.
set -eu
VERSION=1.9.4
INTEGRITY="sha512-nxS1ynzJOmOlHp+iL3FyWqK89GtNL8U8rvlMOsQdTTssxZwCXh8N2NB3GDQOL+YR3XnWyZAxwQixURb+FA74PA=="
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT="$HERE/ui/vendor/leaflet"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
npm pack --silent "leaflet@$VERSION" >/dev/null
GOT="sha512-$(openssl dgst -sha512 -binary "leaflet-$VERSION.tgz" | base64 -w0)"
[ "$GOT" = "$INTEGRITY" ] || { echo "leaflet-$VERSION.tgz: integrity mismatch ($GOT)" >&2; exit 1; }
tar xzf "leaflet-$VERSION.tgz"
rm -rf "$OUT" && mkdir -p "$OUT/images"
cp package/dist/leaflet.js package/dist/leaflet.css package/LICENSE "$OUT/"
cp package/dist/images/layers.png package/dist/images/layers-2x.png "$OUT/images/"
echo "$VERSION" > "$OUT/VERSION"
echo "Leaflet $VERSION vendored into $OUT"
