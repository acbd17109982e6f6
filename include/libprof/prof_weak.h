/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * <libprof/prof.h> for a program that ships with its labels and runs with or without
 * libprof: include this instead, do not link -lprof. Every prof_ function is declared weak
 * and each call goes through a macro of the same name that calls it only when a loaded
 * libprof defines it (LD_PRELOAD=libprof.so, `prof record`), and otherwise does nothing:
 * a call returns -1 (prof_label_push() a token of 0, which prof_label_pop() takes).
 *
 *     #include <libprof/prof_weak.h>
 *     prof_label_token t = prof_label_push("endpoint", "/api/orders");
 *     handle(request);
 *     prof_label_pop(t);
 *
 * The check is one load of the function's address, resolved by the dynamic loader when
 * the program starts: position-independent code (PIE, gcc's default on Debian and most
 * distributions, or -fPIC) gets it from the loaded library; a non-PIE executable needs
 * -Wl,-z,dynamic-undefined-weak, or the linker fixes the address at 0. A function name
 * taken without a call (a pointer to prof_label_set) is the weak symbol itself.
 */
#ifndef PROF_INCLUDE_LIBPROF_PROF_WEAK_H
#define PROF_INCLUDE_LIBPROF_PROF_WEAK_H

#include <libprof/prof.h>

#if !defined(__GNUC__)
#error "<libprof/prof_weak.h> needs weak symbols (GCC or Clang)"
#endif

#pragma weak prof_start
#pragma weak prof_stop
#pragma weak prof_flush
#pragma weak prof_backtrace
#pragma weak prof_backtrace_fd
#pragma weak prof_snapshot
#pragma weak prof_label_set
#pragma weak prof_labels_clear
#pragma weak prof_label_push
#pragma weak prof_label_pop
#pragma weak prof_trace_set
#pragma weak prof_trace_clear

/* A macro does not expand inside its own expansion: the names in parentheses below are
 * the functions. */
#define prof_start() ((prof_start) ? (prof_start)() : -1)
#define prof_stop() ((prof_stop) ? (prof_stop)() : -1)
#define prof_flush() ((prof_flush) ? (prof_flush)() : -1)
#define prof_backtrace(pcs, max, skip) \
    ((prof_backtrace) ? (prof_backtrace)(pcs, max, skip) : 0)
#define prof_backtrace_fd(fd, skip) ((prof_backtrace_fd) ? (prof_backtrace_fd)(fd, skip) : -1)
#define prof_snapshot(fd) ((prof_snapshot) ? (prof_snapshot)(fd) : -1)
#define prof_label_set(key, value) ((prof_label_set) ? (prof_label_set)(key, value) : -1)
#define prof_labels_clear() ((prof_labels_clear) ? (prof_labels_clear)() : -1)
#define prof_label_push(key, value) \
    ((prof_label_push) ? (prof_label_push)(key, value) : (prof_label_token)0)
#define prof_label_pop(token) ((prof_label_pop) ? (prof_label_pop)(token) : -1)
#define prof_trace_set(trace_id, span_id) \
    ((prof_trace_set) ? (prof_trace_set)(trace_id, span_id) : -1)
#define prof_trace_clear() ((prof_trace_clear) ? (prof_trace_clear)() : -1)

#endif
