/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `json` output: the merged call tree (reporter/stacks/flame.h) for scripts, one line:
 *
 *   {"total":N,"unit":"samples","root":{"name":"all","self":S,"total":T,"children":[
 *     {"name":"main","self":0,"total":T,"children":[...]}]}}
 *
 * total is the weight of every sample (timer ticks; "samples" as the unit). Every node
 * has name, self (weight where it is the leaf), total (weight through it) and children,
 * sorted by total, largest first, then by name bytewise; a leaf has "children":[]. The
 * root "all" holds the samples without frames as its self. Names are JSON strings; bytes
 * that are not UTF-8 become U+FFFD. Called by main(); reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_JSON_H
#define PROF_REPORTER_OUTPUT_JSON_H

#include <stdio.h>

struct rep_flame;
struct rep_names;

/* Not async-signal-safe; not re-entrant (it sorts the tree: rep_flame_order). */
/* Writes the tree f, named by names, to out, children ordered by total (f is reordered).
 * CMN_OK, CMN_E_NOMEM, or CMN_E_IO when writing failed (errno says why); out is flushed,
 * not closed. */
int rep_out_json(FILE *out, struct rep_flame *f, const struct rep_names *names);

#endif
