#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the profile reader's fuzz target (tests/fuzz/fuzz_read.c) with clang, libFuzzer,
# AddressSanitizer and UBSan into build/fuzz/, seeds a corpus with generated profiles (and
# a real one when build/libprof.so exists), and fuzzes for SECONDS.
#   scripts/fuzz.sh [SECONDS]      (default 30)
# Exit status: 0 when nothing crashed; non-zero on a build failure or a crash, whose input
# libFuzzer saves as build/fuzz/crash-* (replay: build/fuzz/fuzz_read FILE).
set -eu
secs=${1:-30}
cd "$(dirname "$0")/.."
cc=${FUZZ_CC:-clang}
out=build/fuzz

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: $cc not found (scripts/setup.sh fuzz installs it)" >&2
    exit 1
fi
mkdir -p "$out/corpus"

srcs="$(ls reporter/*/*.c attach/*.c | grep -v '^reporter/cmd/') tests/fuzz/fuzz_read.c"
# shellcheck disable=SC2086 # srcs is a list of paths without spaces
"$cc" -std=gnu11 -D_GNU_SOURCE -I. -Wall -Wextra -Werror -g -O1 \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -o "$out/fuzz_read" $srcs -lbfd -lz -llzma -ldl

PROF_FUZZ_SEEDS="$out/corpus" "$out/fuzz_read"
if [ -x build/libprof.so ] || [ -f build/libprof.so ]; then
    # A real profile of a short shell loop; a failure here only loses a seed.
    LD_PRELOAD="$PWD/build/libprof.so" PROF_OUTPUT="$out/corpus/real.prof" \
        /bin/sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' || true
fi

exec "$out/fuzz_read" -max_total_time="$secs" -max_len=65536 -timeout=10 \
    -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus"
