/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The json output: the tree ordered by total, then walked depth first without recursion
 * (a stack can be 65536 frames deep): down to the first child, else across to the next
 * sibling, else back up through the parents, closing each object on the way. Reporter
 * thread only.
 */
#include "reporter/output/json.h"

#include <inttypes.h>

#include "common/err.h"
#include "reporter/output/escape.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"

static void open_node(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                      uint32_t i)
{
    const struct rep_flame_node *nd = &f->nodes[i];
    fputs("{\"name\":", out);
    rep_escape_json(out, i == REP_FLAME_ROOT ? "all" : rep_names_get(names, nd->name_id));
    fprintf(out, ",\"self\":%" PRIu64 ",\"total\":%" PRIu64 ",\"children\":[", nd->self, nd->total);
}

int rep_out_json(FILE *out, struct rep_flame *f, const struct rep_names *names)
{
    if (rep_flame_order(f, names, REP_FLAME_BY_TOTAL) != CMN_OK)
        return CMN_E_NOMEM;
    fprintf(out, "{\"total\":%" PRIu64 ",\"unit\":\"samples\",\"root\":",
            f->nodes[REP_FLAME_ROOT].total);
    uint32_t i = REP_FLAME_ROOT;
    open_node(out, f, names, i);
    for (;;) {
        if (f->nodes[i].first_child != REP_FLAME_NONE) {
            i = f->nodes[i].first_child;
            open_node(out, f, names, i);
            continue;
        }
        fputs("]}", out);
        while (i != REP_FLAME_ROOT && f->nodes[i].next_sibling == REP_FLAME_NONE) {
            i = f->nodes[i].parent;
            fputs("]}", out);
        }
        if (i == REP_FLAME_ROOT)
            break;
        i = f->nodes[i].next_sibling;
        fputc(',', out);
        open_node(out, f, names, i);
    }
    fputs("}\n", out);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
