#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the Debian packages libprof needs, only those missing. Idempotent.
#   scripts/setup.sh          build and test dependencies
#   scripts/setup.sh bench    also the peer profilers that `make bench` compares against
# Exits 1 with one line on stderr when a package is missing and cannot be installed.
set -eu

# clang and its runtime build the profile reader's fuzz target, which `make test` runs.
PKGS="gcc make libunwind-dev binutils-dev zlib1g-dev libcriterion-dev pkg-config python3
      clang libclang-rt-dev"
if [ "${1:-}" = bench ]; then
    PKGS="$PKGS google-perftools libgoogle-perftools-dev linux-perf"
fi

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "setup: installing:$missing" >&2
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "setup: missing packages:$missing; install them as root (apt-get install$missing)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends $missing; } \
        </dev/null >/tmp/libprof-setup.log 2>&1; then
    echo "setup: apt-get could not install:$missing (log: /tmp/libprof-setup.log)" >&2
    exit 1
fi
