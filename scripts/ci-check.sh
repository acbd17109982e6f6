#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The CI helper around `prof record`, `prof diff` and `prof check` (docs/CI.md); make
# install puts it on the PATH as prof-ci-check:
#   scripts/ci-check.sh record [-F HZ] DIR COMMAND [ARG]...
#       runs COMMAND once under `prof record` and adds its profile to DIR as run-N.prof
#       (N the next free number), so that calling it in a loop, alternating the base and
#       the new build, collects interleaved repeated runs of each; exits with COMMAND's
#       status (a failing benchmark fails the job)
#   scripts/ci-check.sh compare [-r REPORT] BASE_DIR NEW_DIR [CHECK_OPTION]...
#       writes the Markdown diff of the two sets of runs (for a pull-request comment) to
#       REPORT (default NEW_DIR/report.md), followed by the check's verdict, prints the
#       verdict, and exits with `prof check`'s status: 0 nothing regressed, 1 something
#       did, 2 bad input. CHECK_OPTIONs go to `prof check` (--budget FILE, --points N...).
#   scripts/ci-check.sh budget [-r REPORT] NEW_DIR BUDGET_FILE [CHECK_OPTION]...
#       the same against a budget file alone, without a baseline
#
# prof is $PROF, else prof next to this script (installed as prof-ci-check), else `prof` on
# the PATH, else build/prof next to this script's folder.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
usage() {
    sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

find_prof() {
    if [ -n "${PROF:-}" ]; then
        echo "$PROF"
    elif [ -x "$here/prof" ]; then
        echo "$here/prof"
    elif command -v prof >/dev/null 2>&1; then
        command -v prof
    elif [ -x "$here/../build/prof" ]; then
        echo "$here/../build/prof"
    else
        echo "ci-check: prof not found (set PROF, or put it on the PATH)" >&2
        exit 2
    fi
}

# The profiles of a directory (run-1.prof, run-2.prof, ... as `record` numbers them), one a
# line; fails if there are none.
runs_of() {
    n=1
    while [ -e "$1/run-$n.prof" ]; do
        echo "$1/run-$n.prof"
        n=$((n + 1))
    done
    if [ $n -eq 1 ]; then
        echo "ci-check: no run-1.prof in $1 (ci-check.sh record first)" >&2
        return 2
    fi
}

cmd_record() {
    hz=
    while getopts F: opt; do
        case $opt in
        F) hz=$OPTARG ;;
        *) usage ;;
        esac
    done
    shift $((OPTIND - 1))
    [ $# -ge 2 ] || usage
    dir=$1
    shift
    mkdir -p "$dir"
    n=1
    while [ -e "$dir/run-$n.prof" ]; do n=$((n + 1)); done
    prof=$(find_prof)
    if [ -n "$hz" ]; then
        "$prof" record -q -F "$hz" -o "$dir/run-$n.prof" -- "$@"
    else
        "$prof" record -q -o "$dir/run-$n.prof" -- "$@"
    fi
}

# compare and budget: the report's path, the BASE and NEW lists (one path a line; BASE may
# be empty), then prof check's options.
write_report() {
    report=$1
    base_list=$2
    new_list=$3
    shift 3
    prof=$(find_prof)
    nl='
'
    old_ifs=$IFS
    IFS=$nl
    # shellcheck disable=SC2086 # the lists are split on newlines only, on purpose
    set -- "$@" $base_list -- $new_list
    IFS=$old_ifs
    : >"$report"
    if [ -n "$base_list" ]; then
        IFS=$nl
        # shellcheck disable=SC2086
        "$prof" diff --format markdown --limit 20 $base_list -- $new_list >"$report" 2>/dev/null ||
            echo "(prof diff failed)" >"$report"
        IFS=$old_ifs
        echo >>"$report"
    fi
    status=0
    verdict=$("$prof" check "$@" 2>&1) || status=$?
    printf '%s\n' "$verdict"
    # shellcheck disable=SC2016 # the backquotes are Markdown's code fence
    printf '```\n%s\n```\n' "$verdict" >>"$report"
    return $status
}

cmd_compare() {
    report=
    while getopts r: opt; do
        case $opt in
        r) report=$OPTARG ;;
        *) usage ;;
        esac
    done
    shift $((OPTIND - 1))
    [ $# -ge 2 ] || usage
    base=$(runs_of "$1") || exit 2
    new=$(runs_of "$2") || exit 2
    report=${report:-$2/report.md}
    shift 2
    status=0
    # prof check's options come first, then BASE... -- NEW...
    write_report "$report" "$base" "$new" "$@" || status=$?
    exit $status
}

cmd_budget() {
    report=
    while getopts r: opt; do
        case $opt in
        r) report=$OPTARG ;;
        *) usage ;;
        esac
    done
    shift $((OPTIND - 1))
    [ $# -ge 2 ] || usage
    new=$(runs_of "$1") || exit 2
    report=${report:-$1/report.md}
    budget=$2
    shift 2
    status=0
    write_report "$report" "" "$new" --budget "$budget" "$@" || status=$?
    exit $status
}

[ $# -ge 1 ] || usage
sub=$1
shift
case $sub in
record) cmd_record "$@" ;;
compare) cmd_compare "$@" ;;
budget) cmd_budget "$@" ;;
*) usage ;;
esac
