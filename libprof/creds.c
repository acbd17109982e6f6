/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A thread's capabilities, keep-caps flag and securebits (see creds.h). */
#include "libprof/creds.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int caps_of(pid_t tid, struct __user_cap_data_struct *d)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, tid};
    return syscall(SYS_capget, &h, d) == 0 ? 0 : -errno;
}

int lp_creds_caps_of(pid_t tid, struct lp_creds *c)
{
    memset(c, 0, sizeof(*c));
    return caps_of(tid, c->caps);
}

int lp_creds_get(struct lp_creds *c)
{
    memset(c, 0, sizeof(*c));
    int rc = caps_of(0, c->caps);
    c->keep_caps = prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0);
    c->securebits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    if (rc == 0 && (c->keep_caps < 0 || c->securebits < 0))
        rc = -errno;
    return rc;
}

int lp_creds_set(const struct lp_creds *c)
{
    struct lp_creds now;
    int rc = lp_creds_get(&now);
    if (rc != 0)
        return rc;
    /* The capabilities first: setting securebits takes CAP_SETPCAP, which the caller may
     * hold in its effective set. */
    if (memcmp(now.caps, c->caps, sizeof(c->caps)) != 0) {
        struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
        memcpy(d, c->caps, sizeof(d));
        if (syscall(SYS_capset, &h, d) != 0)
            rc = -errno;
    }
    /* The keep-caps flag is a securebit; without CAP_SETPCAP it alone can be set. */
    if (now.securebits != c->securebits &&
        prctl(PR_SET_SECUREBITS, (unsigned long)c->securebits, 0, 0, 0) != 0 &&
        prctl(PR_SET_KEEPCAPS, (unsigned long)c->keep_caps, 0, 0, 0) != 0 && rc == 0)
        rc = -errno;
    return rc;
}
