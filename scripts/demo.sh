#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The demo behind `make demo`: profiles examples/pipeline.c (a small image pipeline with
# four hot functions) with `prof record`, then writes BUILD_DIR/demo/demo.folded (folded
# stacks, for flamegraph.pl, inferno or speedscope), BUILD_DIR/demo/demo.top.txt (the
# top table) and BUILD_DIR/demo/demo.svg (an interactive flame graph drawn by
# `prof report --format svg`). Prints the top table and where the files are.
#   scripts/demo.sh BUILD_DIR
# Exit status: 0, or 1 with one line on stderr when a step fails.
set -eu

build=${1:?usage: scripts/demo.sh BUILD_DIR}
prof="$build/prof"
prog="$build/examples/pipeline"
out="$build/demo"

fail() {
    echo "demo: $*" >&2
    exit 1
}

[ -x "$prof" ] || fail "$prof is missing (make all)"
[ -x "$prog" ] || fail "$prog is missing (make $prog)"
mkdir -p "$out"
rm -f "$out/demo.prof" "$out/demo.folded" "$out/demo.top.txt" "$out/demo.svg"

echo "== profiling: prof record -o $out/demo.prof -- $prog"
"$prof" record -o "$out/demo.prof" -- "$prog" || fail "prof record failed"

"$prof" report --format folded "$out/demo.prof" >"$out/demo.folded" 2>"$out/report.log" ||
    fail "prof report --format folded failed: $(head -n 1 "$out/report.log")"
"$prof" report --format top --limit 15 "$out/demo.prof" >"$out/demo.top.txt" \
    2>"$out/report.log" || fail "prof report --format top failed: $(head -n 1 "$out/report.log")"
"$prof" report --format svg --title "libprof demo: pipeline" "$out/demo.prof" \
    >"$out/demo.svg" 2>"$out/report.log" ||
    fail "prof report --format svg failed: $(head -n 1 "$out/report.log")"
rm -f "$out/report.log"

echo
echo "== where the CPU time went (prof report --format top)"
cat "$out/demo.top.txt"
echo
echo "== files"
echo "  profile        $out/demo.prof"
echo "  folded stacks  $out/demo.folded"
echo "  top table      $out/demo.top.txt"
echo "  flame graph    $out/demo.svg (open it in a browser: click to zoom, Search to highlight)"
