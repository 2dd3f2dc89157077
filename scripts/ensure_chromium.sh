#!/usr/bin/env bash
# Make sure Debian's chromium and chromium-driver are installed (/usr/bin/chromium and
# /usr/bin/chromedriver), for the browser check of the built book (scripts/browser_check.py).
# When missing, installs them with apt-get if we are root (as CI is); otherwise explains.
#
#   scripts/ensure_chromium.sh             missing and not installable: error (exit 1)
#   scripts/ensure_chromium.sh --optional  missing and not installable: a note, exit 0 (make test:
#                                          tests/test_browser_check.py then skips)
set -uo pipefail

optional=false
[ "${1:-}" = "--optional" ] && optional=true

have() { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; }
give_up() {
    if $optional; then
        echo "note: $1; tests/test_browser_check.py will be skipped" >&2
        exit 0
    fi
    echo "error: $1" >&2
    echo "       install them as root: apt-get install chromium chromium-driver" >&2
    exit 1
}

have && exit 0
if [ "$(id -u)" != 0 ]; then
    give_up "/usr/bin/chromium or /usr/bin/chromedriver missing, and not root to apt-get them"
fi
if ! command -v apt-get >/dev/null 2>&1; then
    give_up "/usr/bin/chromium or /usr/bin/chromedriver missing, and no apt-get"
fi
echo "Installing chromium and chromium-driver with apt-get ..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq &&
       apt-get install -y -qq --no-install-recommends chromium chromium-driver; } >&2; then
    give_up "apt-get install chromium chromium-driver failed"
fi
have || give_up "chromium-driver installed, but no /usr/bin/chromium or /usr/bin/chromedriver"
