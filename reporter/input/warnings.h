/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Warnings about one profile as read (reporter/input/warnings.c).
 */
#ifndef PROF_REPORTER_INPUT_WARNINGS_H
#define PROF_REPORTER_INPUT_WARNINGS_H

struct rep_profile;

/* Not async-signal-safe. */
/* Prints p's warnings on stderr (reporter/base/warn.h), one line each, nothing when the run
 * went well. */
void rep_profile_warn(const struct rep_profile *p);

#endif
