/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A preloaded library that does nothing: what any LD_PRELOAD costs a process's start (the
 * loader finds, maps and relocates one more object), the base that libprof's start is
 * measured against (bench/startexit.py). One exported function, so that the object has
 * the usual sections.
 */
int bench_empty_library(void);

int bench_empty_library(void)
{
    return 0;
}
