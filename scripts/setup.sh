#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the Debian packages libprof needs, only those missing. Idempotent.
#   scripts/setup.sh          build and test dependencies
#   scripts/setup.sh bench    also the peer profilers that `make bench` compares against,
#                             and the servers and load generators of bench/services.py
#   scripts/setup.sh browser  only Chromium, Node.js and npm, for the browser test of the
#                             flame graphs (scripts/setup-browser.sh calls it)
# Exits 1 with one line on stderr when a package is missing and cannot be installed.
set -eu

# clang and its runtime build the profile reader's fuzz target, which `make test` runs.
# libc6-dbg gives the C library's frames their names and source lines (prof report --lines);
# golang-go's `go tool pprof` reads the pprof output in the end-to-end tests.
# libdebuginfod-dev and liblzma-dev: names for stripped programs, from debuginfod servers
# (loaded with dlopen at run time) and from MiniDebugInfo; debuginfod, elfutils and
# xz-utils serve and build the debug files of their end-to-end tests.
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user run the steppers' unit tests
# for aarch64 (make test-aarch64, part of make test).
# lld and rustc build the end-to-end tests' programs linked by LLD and written in Rust;
# golang-go also builds their Go program that calls C, openjdk-17-jdk-headless their Java
# program (tests/e2e/test_runtimes.c).
PKGS="gcc make libunwind-dev binutils-dev zlib1g-dev libcriterion-dev pkg-config python3
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
      libc6-dbg golang-go libdebuginfod-dev liblzma-dev debuginfod elfutils xz-utils sqlite3
      clang libclang-rt-dev lld rustc openjdk-17-jdk-headless"
if [ "${1:-}" = bench ]; then
    PKGS="$PKGS google-perftools libgoogle-perftools-dev linux-perf gdb strace nginx wrk
          redis-server redis-tools"
fi
if [ "${1:-}" = browser ]; then
    # node and npm may come from elsewhere than Debian's packages: asked for when missing.
    PKGS="chromium"
    command -v node >/dev/null 2>&1 || PKGS="$PKGS nodejs"
    command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
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
