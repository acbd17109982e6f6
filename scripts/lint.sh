#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Mechanical checks of the design's rules (make lint; part of make test):
#  1. the objects on the signal handler's path call only async-signal-safe functions
#     (from their undefined symbols) and reach TLS without __tls_get_addr (initial-exec);
#  2. each folder includes only the folders below it, and its modules include each other
#     without a cycle (docs/ARCHITECTURE.md, "The layout"; scripts/lint_layers.py); the
#     handler objects' sources reach only the common/ headers that say the signal
#     handler's path may use them;
#  3. libprof.so exports only the public API and the libc calls it interposes;
#  4. the prof command contains no library (smp_/lp_) code.
# Prints one line per violation and exits 1 if there is any.
#   scripts/lint.sh BUILD HANDLER_OBJECT...   (the Makefile passes its list of handler objects)
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
obj=$build/obj
fail=0
err() { echo "lint: $*" >&2; fail=1; }

# 1. Handler path. The allowlist: functions POSIX lists as async-signal-safe that these
# files use, plus the compiler's and glibc's safe helpers.
handler_objs=""
unw_obj=""
for o in "$@"; do
    case $o in
    */walk_unw.o) unw_obj=$o ;;
    *) handler_objs="$handler_objs $o" ;;
    esac
done
[ -n "$handler_objs" ] || err "no handler objects given (make lint passes them)"
# The libunwind stepper, when built (UNWIND=1), may also call libunwind's local unwinder
# (its entry points, per architecture), and its stand-ins for libunwind's descriptor calls
# forward to read, write and close. libunwind's local unwinding is async-signal-safe only
# with libprof/unwind.c's protection: no register-state cache (no lock), its descriptor
# calls redirected to those stand-ins, a warm-up unwind outside the handler, and a
# dl_iterate_phdr() that serves a snapshot instead of taking the loader's lock while
# smp_unw_busy is set (libunwind 1.6.2 calls dl_iterate_phdr from unw_step).
unw_allow="_ULx86_64_init_local2 _ULx86_64_step _ULx86_64_get_reg _ULx86_64_get_proc_info
           _ULaarch64_init_local2 _ULaarch64_step _ULaarch64_get_reg _ULaarch64_get_proc_info
           read write close"
allow="_GLOBAL_OFFSET_TABLE_ __errno_location clock_gettime syscall ioctl memset memcpy getpid sigaddset
       __stack_chk_fail __aarch64_cas8_acq_rel __aarch64_ldadd8_relax __aarch64_ldadd4_acq
       __aarch64_ldadd4_rel __aarch64_cas8_relax __aarch64_ldadd8_acq_rel
       __aarch64_cas4_acq_rel __aarch64_ldadd4_acq_rel __aarch64_swp4_acq_rel"
all_handler_objs=$handler_objs
[ -n "$unw_obj" ] && [ -f "$unw_obj" ] && all_handler_objs="$handler_objs $unw_obj"
defined=$(nm --defined-only $all_handler_objs 2>/dev/null | awk 'NF == 3 { print $3 }')
check_calls() { # objects, extra allowed symbols
    for sym in $(nm -u $1 | awk 'NF == 2 { print $2 }' | sort -u); do
        case " $(echo $allow $2 $defined) " in
        *" $sym "*) ;;
        *) err "handler path calls $sym, which is not on the async-signal-safe allowlist" ;;
        esac
        [ "$sym" = __tls_get_addr ] &&
            err "handler path uses __tls_get_addr (TLS must be initial-exec)"
    done
}
check_calls "$handler_objs" ""
[ -n "$unw_obj" ] && [ -f "$unw_obj" ] && check_calls "$unw_obj" "$unw_allow"
for o in $handler_objs; do
    [ -f "$o" ] || err "missing handler object $o (build first)"
done

# 2. Layering: includes are written from the root, so the layer is in the line; each
# folder uses only those below it, without cycles inside; the handler objects' sources
# (obj/sampler/x.o is sampler/x.c) reach only the common/ headers allowed on the handler's
# path (scripts/lint_layers.py).
handler_srcs=""
for o in $handler_objs $unw_obj; do
    s=${o#"$obj"/}
    handler_srcs="$handler_srcs ${s%.o}.c"
done
# shellcheck disable=SC2086 # a list of paths without spaces
python3 "$(dirname "$0")/lint_layers.py" "$(dirname "$0")/.." $handler_srcs || fail=1

# 3. Exported symbols of the library.
exports="prof_start prof_stop prof_flush prof_backtrace prof_backtrace_fd prof_snapshot
         prof_label_set prof_labels_clear prof_label_push prof_label_pop prof_trace_set
         prof_trace_clear
         pthread_create pthread_setname_np dlopen dlclose dl_iterate_phdr
         sigaction signal setitimer pthread_sigmask sigprocmask
         setuid setgid seteuid setegid setreuid setregid setresuid setresgid setgroups
         __libc_start_main execve execv execvp execvpe execl execlp execle fexecve execveat posix_spawn posix_spawnp
         system popen _exit _Exit"
# Symbols of default or protected visibility are exported; hidden ones the linker leaves in
# the dynamic table (__start_/__stop_ of a section) bind to nothing outside.
for sym in $(readelf --dyn-syms -W "$build/libprof.so" |
             awk '$1 ~ /^[0-9]+:$/ && $5 != "LOCAL" && $7 != "UND" && $6 != "HIDDEN" && $8 != "" { print $8 }' |
             sed 's/@.*//'); do
    case " $(echo $exports) " in
    *" $sym "*) ;;
    *) err "libprof.so exports $sym (only the API and interposed calls may be exported)" ;;
    esac
done

# 5. libprof's own code sets masks through lp_sigmask() (libprof/libc.h), never through the
# application's view of them (libprof/interpose.c wraps pthread_sigmask and sigprocmask).
root=$(dirname "$0")/..
direct=$(grep -nE '(^|[^._a-z])(pthread_sigmask|sigprocmask)\(' "$root"/libprof/*.c "$root"/libprof/*.h |
         grep -vE '^[^:]+:[0-9]+:\s*(/?\*|//)' | grep -v 'LP_EXPORT int ' || true)
[ -z "$direct" ] || err "libprof sets a signal mask through the application's view: $direct"

# 4. The reporter links none of the library's code.
if [ -f "$build/prof" ] && nm "$build/prof" | grep -E ' (smp|lp)_' >/dev/null; then
    err "build/prof contains library symbols: $(nm "$build/prof" | grep -E ' (smp|lp)_' | head -3)"
fi

# 6. Criterion fails a whole run on any warning a test logs (its exit status, not its
# count of failed tests): a test's diagnostics are cr_log_info(), a failure is an assertion.
warned=$(grep -rnE 'cr_log_warn\(|CR_LOG_WARNING' "$root"/tests || true)
[ -z "$warned" ] || err "a test logs a warning, which fails the run with every test passed: $warned"

[ $fail = 0 ] && echo "lint: ok"
exit $fail
