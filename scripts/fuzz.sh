#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the two fuzz targets with clang, libFuzzer, AddressSanitizer and UBSan into
# build/fuzz/ and runs each: the profile reader's (tests/fuzz/fuzz_read.c) on a corpus
# seeded with generated profiles (and a real one when build/libprof.so exists), then the
# unwind-table compiler's (tests/fuzz/fuzz_cfi.c) on one seeded with small call-frame
# sections and the .eh_frame/.debug_frame of real binaries.
#   scripts/fuzz.sh [SECONDS] [CFI_SECONDS]   (default 30 each; CFI_SECONDS: SECONDS)
# Exit status: 0 when nothing crashed; non-zero on a build failure or a crash, whose input
# libFuzzer saves as build/fuzz/crash-* or build/fuzz/cfi-crash-* (replay:
# build/fuzz/fuzz_read FILE, build/fuzz/fuzz_cfi FILE).
set -eu
secs=${1:-30}
cfi_secs=${2:-$secs}
cd "$(dirname "$0")/.."
cc=${FUZZ_CC:-clang}
out=build/fuzz
flags="-std=gnu11 -D_GNU_SOURCE -I. -Wall -Wextra -Werror -g -O1
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: $cc not found (scripts/setup.sh fuzz installs it)" >&2
    exit 1
fi
mkdir -p "$out/corpus" "$out/cfi_corpus"

srcs="$(ls reporter/*/*.c attach/*.c | grep -v '^reporter/cmd/') tests/fuzz/fuzz_read.c"
# shellcheck disable=SC2086 # srcs and flags are lists of words without spaces
"$cc" $flags -o "$out/fuzz_read" $srcs -lbfd -lz -llzma -ldl
# shellcheck disable=SC2086
"$cc" $flags -o "$out/fuzz_cfi" tests/fuzz/fuzz_cfi.c

PROF_FUZZ_SEEDS="$out/corpus" "$out/fuzz_read"
if [ -x build/libprof.so ] || [ -f build/libprof.so ]; then
    # A real profile of a short shell loop; a failure here only loses a seed.
    LD_PRELOAD="$PWD/build/libprof.so" PROF_OUTPUT="$out/corpus/real.prof" \
        /bin/sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' || true
fi

# The call-frame sections of real binaries, each after the target's 5-byte head (flags,
# the section's address): a failure here only loses a seed.
PROF_FUZZ_SEEDS="$out/cfi_corpus" "$out/fuzz_cfi"
n=0
for bin in /bin/true build/libprof.so "$out/fuzz_cfi"; do
    for sec in eh_frame debug_frame; do
        [ -f "$bin" ] || continue
        objcopy -O binary --only-section=".$sec" "$bin" "$out/section" 2>/dev/null || continue
        [ -s "$out/section" ] || continue
        head=$([ $sec = debug_frame ] && printf '\001' || printf '\000')
        { printf '%s\000\020\000\000' "$head"; head -c 60000 "$out/section"; } \
            >"$out/cfi_corpus/real_$n.$sec"
        n=$((n + 1))
    done
done
rm -f "$out/section"

"$out/fuzz_read" -max_total_time="$secs" -max_len=65536 -timeout=10 \
    -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus"
exec "$out/fuzz_cfi" -max_total_time="$cfi_secs" -max_len=65536 -timeout=10 \
    -artifact_prefix="$out/cfi-" -print_final_stats=1 "$out/cfi_corpus"
