#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Prepares the browser test of the flame graphs (tests/e2e/test_browser.c): Chromium, Node.js
# and npm from Debian's packages when missing (scripts/setup.sh browser), then
# tests/browser/node_modules from package-lock.json with `npm ci`, only when it is missing
# or older than the lock file. Idempotent and quiet. Best effort: when something cannot be
# installed it says so in one line and exits 0, and the browser test is then skipped with
# that reason.
#   scripts/setup-browser.sh
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/tests/browser"

if ! command -v chromium >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1 ||
        ! command -v npm >/dev/null 2>&1; then
    if ! "$root/scripts/setup.sh" browser; then
        echo "setup-browser: Chromium or Node.js could not be installed; the browser test" \
            "will be skipped" >&2
        exit 0
    fi
fi

stamp="$dir/node_modules/.package-lock.json"
if [ -f "$dir/node_modules/playwright-core/package.json" ] && [ -f "$stamp" ] &&
        [ ! "$dir/package-lock.json" -nt "$stamp" ]; then
    exit 0
fi
log=/tmp/libprof-setup-browser.log
if ! (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts) >"$log" 2>&1; then
    echo "setup-browser: npm ci failed in tests/browser (log: $log); the browser test" \
        "will be skipped" >&2
fi
exit 0
