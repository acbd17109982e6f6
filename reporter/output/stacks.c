/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Printing grouped stacks (see out_stacks.h). A group's line lists its threads and the
 * distinct states among them, in the order its threads have them; its frames are its first
 * thread's. Reporter thread only.
 */
#include "reporter/output/stacks.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "common/err.h"
#include "common/snap_calls.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/stacks/snap_groups.h"
#include "reporter/symbols/names.h"

const char *rep_out_stacks_state_word(char state)
{
    switch (state) {
    case 'R':
        return "running";
    case 'S':
        return "sleeping";
    case 'D':
        return "disk sleep";
    case 'T':
        return "stopped";
    case 't':
        return "tracing stop";
    case 'Z':
        return "zombie";
    case 'X':
        return "dead";
    case 'I':
        return "idle";
    case 'P':
        return "parked";
    case 'W':
        return "waking";
    default:
        return NULL;
    }
}

/* Why a walk ended early, for the walk that took the snapshot (the PROCESS record's
 * unwinder): frame pointers only, or unwind tables (libprof's, or libunwind's). */
static const char *truncation(uint8_t r, bool is_tables)
{
    switch (r) {
    case PROF_STOP_DEPTH:
        return "the depth limit was reached";
    case PROF_STOP_BOUNDS:
        return is_tables ? "the unwind tables led out of the stack or out of code (no unwind "
                           "information for a frame?)"
                         : "a frame pointer left the stack or a return address is in no code "
                           "(code built without frame pointers? try PROF_UNWIND=auto, or "
                           "prof stacks --unwind auto)";
    case PROF_STOP_ALIGN:
        return "a misaligned frame pointer";
    case PROF_STOP_ORDER:
        return is_tables ? "the stack pointer did not go up the stack"
                         : "frame pointers did not go up the stack (a corrupt chain)";
    case PROF_STOP_NO_STACK:
        return "the thread's stack was not known: its leaf only";
    case PROF_STOP_RULE:
        return "an unwind rule the walk does not follow (a DWARF expression, or a register it "
               "does not track)";
    case PROF_STOP_CODE:
        return "a return address is in no code";
    case PROF_STOP_NO_INFO:
        return "no unwind information for a frame (the tables alone were asked for)";
    case PROF_STOP_PENDING:
        return "the unwind table of a frame's module was not built yet";
    default:
        return "an unknown stop reason";
    }
}

static void print_missing(FILE *out, const struct rep_snap_member *m)
{
    const char *call;
    switch (m->status) {
    case PROF_SNAP_NO_ANSWER:
        fputs("did not answer in time (the signal blocked, or the thread could not stop)", out);
        break;
    case PROF_SNAP_GONE:
        fputs("exited before its stack was read", out);
        break;
    case PROF_SNAP_FAILED:
        fputs("its registers or stack could not be read", out);
        break;
    case PROF_SNAP_NOT_ASKED:
        call = cmn_snap_call_name(m->syscall);
        if (call)
            fprintf(out, "not asked: it waits in %s(), which a signal would cut short", call);
        else
            fprintf(out, "not asked: it waits in system call %u, which a signal would cut short",
                    (unsigned)m->syscall);
        fputs(" (prof stacks --ptrace reads it)", out);
        break;
    default:
        fputs("no stack (an unknown status)", out);
    }
}

static void print_state(FILE *out, char state)
{
    const char *word = rep_out_stacks_state_word(state);
    if (state == 0)
        fputs("?", out);
    else if (word != NULL)
        fprintf(out, "%c %s", state, word);
    else
        fputc(state, out);
}

static void print_thread(FILE *out, const struct rep_snap_member *m)
{
    fprintf(out, "%" PRIu32, m->tid);
    if (m->name != NULL && m->name[0] != '\0')
        fprintf(out, " %s", m->name);
}

/* Threads a group line names; a pool of 500 workers in one place is one line, not 500. */
#define LIST_MAX 12u

/* "K threads: TID name, ...  [S sleeping, R running]" */
static void print_group_line(FILE *out, const struct rep_snap_groups *g,
                             const struct rep_snap_group *gr)
{
    const struct rep_snap_member *m = &g->members[gr->first];
    fprintf(out, "%zu thread%s: ", gr->n_members, gr->n_members == 1 ? "" : "s");
    for (size_t i = 0; i < gr->n_members && i < LIST_MAX; i++) {
        fputs(i ? ", " : "", out);
        print_thread(out, &m[i]);
    }
    if (gr->n_members > LIST_MAX)
        fprintf(out, ", ... (%zu more)", gr->n_members - LIST_MAX);
    fputs("  [", out);
    for (size_t i = 0; i < gr->n_members; i++) {
        bool is_new = true;
        for (size_t j = 0; j < i && is_new; j++)
            is_new = m[j].run_state != m[i].run_state;
        if (!is_new)
            continue;
        fputs(i ? ", " : "", out);
        print_state(out, m[i].run_state);
    }
    fputs("]\n", out);
}

static void print_group(FILE *out, const struct rep_snap_groups *g, const struct rep_snap_group *gr,
                        const struct rep_names *names, bool is_tables)
{
    const struct rep_snap_member *m = &g->members[gr->first];
    const struct rep_snap_frame *f = rep_snap_member_frames(g, m);
    fputc('\n', out);
    print_group_line(out, g, gr);
    for (uint32_t i = 0; i < m->n_frames; i++)
        fprintf(out, "  #%-2" PRIu32 " 0x%016" PRIx64 " %s\n", i, f[i].addr,
                rep_names_get(names, f[i].id));
    if (m->stop_reason != PROF_STOP_END)
        fprintf(out, "  ... truncated: %s\n", truncation(m->stop_reason, is_tables));
}

int rep_out_stacks(FILE *out, const struct rep_profile *p, const struct rep_snap_groups *g,
                   const struct rep_names *names, const char *how)
{
    const char *exe = p->has_process && p->process.exe[0] ? p->process.exe : "?";
    const char *slash = strrchr(exe, '/');
    fprintf(out, "process %" PRIu32 " (%s): %zu thread%s, %zu distinct stack%s (%s)\n",
            p->has_process ? p->process.pid : 0, slash ? slash + 1 : exe, g->n_members,
            g->n_members == 1 ? "" : "s", g->n_groups, g->n_groups == 1 ? "" : "s", how);
    for (size_t i = 0; i < g->n_groups; i++)
        print_group(out, g, &g->groups[i], names,
                    p->process.unwinder == PROF_UNWIND_LIBUNWIND ||
                        p->process.unwinder == PROF_UNWIND_AUTO ||
                        p->process.unwinder == PROF_UNWIND_DWARF);
    if (g->n_members > g->n_stacked)
        fprintf(out, "\nthreads without a stack (%zu):\n", g->n_members - g->n_stacked);
    for (size_t i = g->n_stacked; i < g->n_members; i++) {
        const struct rep_snap_member *m = &g->members[i];
        fputs("  ", out);
        print_thread(out, m);
        fputs("  [", out);
        print_state(out, m->run_state);
        fputs("]  ", out);
        print_missing(out, m);
        fputc('\n', out);
    }
    if (fflush(out) != 0 || ferror(out))
        return CMN_E_IO;
    return CMN_OK;
}
