#!/bin/sh
# The browser tests drive the system's Chromium: install it where it is missing (Debian and
# Ubuntu, as root or with sudo). Elsewhere, say how to point the tests at a Chromium binary.
set -eu
if [ -n "${CATALOGUE_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    echo "Installing Chromium for the browser tests (apt-get install chromium)..."
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
    exit 0
fi
echo "Chromium is missing: install it, or set CATALOGUE_CHROMIUM to a Chromium or Chrome binary." >&2
exit 1
