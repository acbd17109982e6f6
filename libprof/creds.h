/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a thread may do, kept the same on libprof's writer thread as on the application
 * thread that changes its user or group. glibc runs each set*id call on every thread of
 * the process and aborts the process when one of them fails; capabilities, the keep-caps
 * flag and the securebits are per thread, so a program that raised its own (capset after
 * PR_SET_KEEPCAPS and a uid change: setpriv, capng) would see the writer fail the next call
 * had it kept the creator's. The calling thread reads its own (lp_creds_get()), the writer
 * thread takes them on (lp_creds_set()) just before the call (libprof/session.c). Not
 * async-signal-safe; any thread but a handler.
 */
#ifndef PROF_LIBPROF_CREDS_H
#define PROF_LIBPROF_CREDS_H

#include <linux/capability.h>
#include <sys/types.h>

struct lp_creds {
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3]; /* effective, permitted,
                                                                   * inheritable */
    int keep_caps;  /* PR_GET_KEEPCAPS */
    int securebits; /* PR_GET_SECUREBITS */
};

/* The calling thread's. 0 or -errno. */
int lp_creds_get(struct lp_creds *c /* out */);
/* Only the capabilities, of thread tid of this process (capget reads another thread's);
 * the keep-caps flag and securebits of another thread cannot be read. 0 or -errno. */
int lp_creds_caps_of(pid_t tid, struct lp_creds *c /* out: caps only */);
/* Makes the calling thread's what c says, as far as a thread may (it can lower its
 * capabilities and raise them within what it is permitted). 0 when they match; -errno when
 * a part could not be made to. */
int lp_creds_set(const struct lp_creds *c);

#endif
