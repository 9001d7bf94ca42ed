#!/bin/sh
# Installs what the browser tests need from Debian: Chromium (Playwright drives /usr/bin/chromium; it never
# downloads a browser of its own), CJK fonts, so the Chinese chapter prose in the screenshots is readable, and npm,
# which the browser edition's build (lite/build.py) uses to fetch the Pyodide runtime from the npm registry.
# Does nothing when all are already there, so `make test` stays fast after the first run.
set -eu

missing=""
[ -x /usr/bin/chromium ] || missing="$missing chromium"
dpkg-query -W -f='${Status}' fonts-noto-cjk 2>/dev/null | grep -q "install ok installed" || missing="$missing fonts-noto-cjk"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "browser tests need:$missing (Debian packages); install them, or skip these tests with: pytest -m 'not browser'" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "browser tests need:$missing; run this script as root to install them" >&2; exit 1; }
    SUDO="sudo"
fi
echo "installing Debian packages for the browser tests:$missing"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
