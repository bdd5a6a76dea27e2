#!/bin/sh
# Vendors axe-core, pinned, into tests/vendor/axe-core/ (the accessibility checker that the browser
# tests inject into each page, with its MPL-2.0 licence). Not served to users. Run by hand when
# upgrading; the result is committed, so `make test` needs neither Node.js nor the network.
set -eu
VERSION=4.14.1
INTEGRITY="sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT="$HERE/tests/vendor/axe-core"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
npm pack --silent "axe-core@$VERSION" >/dev/null
GOT="sha512-$(openssl dgst -sha512 -binary "axe-core-$VERSION.tgz" | base64 -w0)"
[ "$GOT" = "$INTEGRITY" ] || { echo "axe-core-$VERSION.tgz: integrity mismatch ($GOT)" >&2; exit 1; }
tar xzf "axe-core-$VERSION.tgz"
rm -rf "$OUT" && mkdir -p "$OUT"
cp package/axe.min.js package/LICENSE "$OUT/"
if [ -f package/LICENSE-3RD-PARTY.txt ]; then cp package/LICENSE-3RD-PARTY.txt "$OUT/"; fi
echo "$VERSION" > "$OUT/VERSION"
echo "axe-core $VERSION vendored into $OUT"
