/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A budget file: limits on function shares that hold without a baseline, for
 * `prof check --budget FILE`. One rule a line:
 *
 *   # comment (a line whose first non-blank character is '#'), blank lines ignored
 *   PATTERN  MAX_PERCENT  [self|total]
 *   parse_*        20          the total share of every function matching parse_* <= 20 %
 *   memcpy         5   self    memcpy's own (self) share <= 5 %
 *
 * PATTERN is a shell glob (fnmatch(3) without flags: '*', '?', '[...]') matched against
 * the whole function name as `prof report` prints it; it must not contain blanks. Each
 * function matching a rule is held to the limit on its own (shares are not summed).
 * MAX_PERCENT is a number in [0, 100]; the third field defaults to total. check.c applies
 * the rules; reporter thread only. The rules own their pattern strings.
 */
#ifndef PROF_REPORTER_COMPARE_BUDGET_H
#define PROF_REPORTER_COMPARE_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

struct cmn_err;

struct rep_budget_rule {
    char *pattern;      /* the glob; owned */
    double max_percent; /* the limit, 0..100 */
    bool is_self;       /* limit the self share, not the total share */
    unsigned line;      /* where it was written, for messages */
};

struct rep_budget {
    struct rep_budget_rule *rules; /* in file order; owned */
    size_t n_rules;
    size_t cap_rules;
};

/* Not async-signal-safe. */
/* Makes b an empty budget. Returns CMN_OK. */
int rep_budget_init(struct rep_budget *b);
/* Frees what b owns. Accepts NULL. */
void rep_budget_fini(struct rep_budget *b);
/* Adds the rules of text (NUL-terminated; name is used in messages). CMN_OK, CMN_E_INPUT
 * with "NAME:LINE: ..." in err on a malformed line (b keeps the rules before it), or
 * CMN_E_NOMEM. */
int rep_budget_parse(struct rep_budget *b, const char *text, const char *name, struct cmn_err *err);
/* Reads the file at path and parses it. CMN_OK, CMN_E_INPUT or CMN_E_NOMEM. */
int rep_budget_load(struct rep_budget *b, const char *path, struct cmn_err *err);
/* Whether function name matches rule r. */
bool rep_budget_matches(const struct rep_budget_rule *r, const char *name);

#endif
