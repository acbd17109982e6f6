/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The reporter's own vDSO as a module. The vDSO has no file: the library records its
 * mapping as "[vdso]" with the build-id of the image the kernel mapped. When the reporter
 * runs on the same kernel, its own vDSO (found with getauxval(AT_SYSINFO_EHDR)) is that
 * image, so its symbols name the profile's frames. The symbolizer (reporter/symbols/symbols.c)
 * calls this once per run, in the reporter's thread; the image is written to a temporary
 * file that libbfd opens and that is unlinked again before this returns (the module keeps
 * everything it needs in memory).
 */
#ifndef PROF_REPORTER_SYMBOLS_VDSO_H
#define PROF_REPORTER_SYMBOLS_VDSO_H

#include <stddef.h>
#include <stdint.h>

struct rep_module;

/* Not async-signal-safe. */
/* Opens the reporter's vDSO when its build-id equals the n bytes at id (n may be 0 when
 * the profile recorded none: then it is not used, since nothing says it is the same).
 * CMN_OK with *m (close it with rep_module_close), CMN_E_NOTFOUND when there is no vDSO,
 * it cannot be read, or its build-id differs; CMN_E_NOMEM. */
int rep_vdso_open(const uint8_t *id, size_t n, struct rep_module **m /* out */);

#endif
