#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The demo behind `make demo`: profiles examples/pipeline.c (a small image pipeline with
# four hot functions) with `prof record`, then writes BUILD_DIR/demo/demo.folded (folded
# stacks, for flamegraph.pl, inferno or speedscope) and BUILD_DIR/demo/demo.top.txt (the
# top table), and a flame graph BUILD_DIR/demo/demo.svg when `prof report --format svg`
# or flamegraph.pl can draw one. Prints the top table and where the files are.
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

rm -f "$out/report.log"

svg=""
if "$prof" report --format svg "$out/demo.prof" >"$out/demo.svg" 2>/dev/null; then
    svg="prof report --format svg"
elif command -v flamegraph.pl >/dev/null 2>&1 &&
        flamegraph.pl --title "libprof demo: pipeline" "$out/demo.folded" >"$out/demo.svg"; then
    svg="flamegraph.pl"
else
    rm -f "$out/demo.svg"
fi

echo
echo "== where the CPU time went (prof report --format top)"
cat "$out/demo.top.txt"
echo
echo "== files"
echo "  profile        $out/demo.prof"
echo "  folded stacks  $out/demo.folded"
echo "  top table      $out/demo.top.txt"
if [ -n "$svg" ]; then
    echo "  flame graph    $out/demo.svg (drawn by $svg; open it in a browser)"
else
    echo "  flame graph    none yet: \`prof report --format svg\` is coming; meanwhile feed"
    echo "                 $out/demo.folded to flamegraph.pl or https://www.speedscope.app"
fi
