/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Publishing the code map (see codemap.h and sampler/codemap.h): a reader-counted double
 * buffer (sampler/dbuf.h), so a walk never sees its table change.
 */
#include "libprof/codemap.h"

#include <stdatomic.h>
#include <string.h>

#include "sampler/codemap.h"
#include "sampler/dbuf.h"

void lp_codemap_publish_with(const struct smp_code_range *ranges, size_t n,
                             void (*annotate)(struct smp_code_range *r, size_t i, void *ctx),
                             void *ctx)
{
    int j = smp_dbuf_spare(&smp_codemap.dbuf);
    struct smp_codemap_table *t = &smp_codemap.tables[j];
    if (n > SMP_CODEMAP_MAX)
        n = SMP_CODEMAP_MAX;
    memcpy(t->ranges, ranges, n * sizeof(ranges[0]));
    for (size_t i = 0; annotate != NULL && i < n; i++)
        annotate(&t->ranges[i], i, ctx);
    t->n = n;
    smp_dbuf_publish(&smp_codemap.dbuf, j);
    atomic_store_explicit(&smp_codemap.published, 1, memory_order_release);
}

void lp_codemap_publish(const struct smp_code_range *ranges, size_t n)
{
    lp_codemap_publish_with(ranges, n, NULL, NULL);
}
