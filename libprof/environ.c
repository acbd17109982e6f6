/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The children's environment (see environ.h). LD_PRELOAD entries are separated by spaces
 * or colons, as ld.so takes them.
 */
#include "libprof/environ.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libprof/fd.h"

#define LP_LIBRARY_NAME "libprof.so"

size_t lp_env_count(char *const *envp)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    return n;
}

const char *lp_env_preload(char *const *envp)
{
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0)
            return envp[i];
    return NULL;
}

/* Whether an LD_PRELOAD entry of len bytes at tok names this library. */
static int is_us(const char *tok, size_t len)
{
    const char *base = tok;
    for (size_t i = 0; i < len; i++)
        if (tok[i] == '/')
            base = tok + i + 1;
    size_t base_len = len - (size_t)(base - tok);
    return base_len == strlen(LP_LIBRARY_NAME) && memcmp(base, LP_LIBRARY_NAME, base_len) == 0;
}

/* The next entry of an LD_PRELOAD value at *p: its start, with its length (0 for an empty
 * one) in *len, and *p moved past it and its separator; NULL at the value's end. */
static const char *next_entry(const char **p, size_t *len)
{
    const char *tok = *p;
    if (*tok == '\0')
        return NULL;
    *len = strcspn(tok, ": ");
    *p = tok + *len + (tok[*len] != '\0');
    return tok;
}

/* Whether an LD_PRELOAD value names this library among its entries. */
static int preload_names_us(const char *value)
{
    size_t len;
    for (const char *p = value, *tok; (tok = next_entry(&p, &len)) != NULL;)
        if (len && is_us(tok, len))
            return 1;
    return 0;
}

char *const *lp_env_without_us(char *const *envp, char **arr, char *buf)
{
    size_t n = 0;
    for (size_t i = 0; envp[i]; i++) {
        if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0) {
            arr[n++] = envp[i];
            continue;
        }
        char *out = buf + 11;
        memcpy(buf, "LD_PRELOAD=", 11);
        size_t len;
        for (const char *p = envp[i] + 11, *tok; (tok = next_entry(&p, &len)) != NULL;) {
            if (len && !is_us(tok, len)) {
                if (out > buf + 11)
                    *out++ = ':';
                memcpy(out, tok, len);
                out += len;
            }
        }
        *out = '\0';
        if (out > buf + 11)
            arr[n++] = buf;
    }
    arr[n] = NULL;
    return arr;
}

const char *lp_env_relative_output(char *const *envp)
{
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], "PROF_OUTPUT=", 12) == 0)
            return envp[i][12] != '\0' && envp[i][12] != '/' ? envp[i] : NULL;
    return NULL;
}

char *const *lp_env_with_output(char *const *envp, const char *cwd, char **arr, char *buf,
                                size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; envp[i]; i++) {
        if (strncmp(envp[i], "PROF_OUTPUT=", 12) != 0) {
            arr[n++] = envp[i];
            continue;
        }
        const char *rel = envp[i] + 12;
        size_t lc = strlen(cwd), lr = strlen(rel);
        if (12 + lc + 1 + lr + 1 > cap) {
            arr[n++] = envp[i];
            continue;
        }
        memcpy(buf, "PROF_OUTPUT=", 12);
        memcpy(buf + 12, cwd, lc);
        buf[12 + lc] = '/';
        memcpy(buf + 12 + lc + 1, rel, lr + 1);
        arr[n++] = buf;
    }
    arr[n] = NULL;
    return arr;
}

void lp_env_fix_output(char **env, const char *cwd)
{
    static char entry[12 + PATH_MAX + 1 + PATH_MAX];
    const char *rel = lp_env_relative_output(env);
    if (!rel)
        return;
    char *one[2] = {(char *)rel, NULL}, *arr[2];
    char *const *fixed = lp_env_with_output(one, cwd, arr, entry, sizeof(entry));
    if (fixed[0] == rel)
        return; /* too long to make absolute: left as it is */
    for (size_t i = 0; env[i]; i++)
        if (env[i] == rel)
            env[i] = entry;
}

int lp_env_parent_unfollowed(void)
{
    const char *follow = getenv("PROF_FOLLOW");
    if (follow == NULL)
        return 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)getppid());
    size_t len = 0;
    char *text = lp_fd_slurp(path, &len);
    if (!text)
        return 0;
    int same_follow = 0, preloaded = 0;
    for (size_t at = 0; at < len; at += strlen(text + at) + 1) {
        const char *e = text + at;
        if (strncmp(e, "PROF_FOLLOW=", 12) == 0)
            same_follow = strcmp(e + 12, follow) == 0;
        else if (strncmp(e, "LD_PRELOAD=", 11) == 0)
            preloaded = preload_names_us(e + 11);
    }
    free(text);
    return same_follow && preloaded;
}
