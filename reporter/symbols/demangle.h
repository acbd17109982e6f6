/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Turning a raw symbol name into the one a person reads: C++ (Itanium ABI) names
 * demangled with their parameters, symbol version suffixes dropped ("memcpy@@GLIBC_2.14"
 * reads "memcpy"), the "@plt" of PLT entries kept. The symbolizer calls it once per
 * distinct symbol it shows. Reporter thread only.
 */
#ifndef PROF_REPORTER_SYMBOLS_DEMANGLE_H
#define PROF_REPORTER_SYMBOLS_DEMANGLE_H

/* Not async-signal-safe. */
/* The readable form of raw in a new string (free it with free()). Returns CMN_OK or
 * CMN_E_NOMEM. */
int rep_demangle_name(const char *raw, char **out /* out */);

#endif
