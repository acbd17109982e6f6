/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Makes a large profile out of a small real one, for the reporter benchmark
 * (bench/reporter.sh): every record of TEMPLATE is copied, except that its sample records
 * (SAMPLE in format 1, batches of SAMPLES naming STACKs in format 2) are written over and
 * over, their times spread evenly, until there are at least N samples. The
 * stacks (and so the distinct addresses the reporter must symbolize) are the template's;
 * only the sample count grows, which is what the benchmark measures: time per sample and
 * memory that must not grow with it. Built and run by bench/reporter.sh.
 *
 *   gen_profile TEMPLATE N OUT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/libprof/prof_format.h"

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
    if (buf == NULL || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: gen_profile TEMPLATE N OUT\n");
        return 2;
    }
    size_t n_bytes;
    unsigned char *in = slurp(argv[1], &n_bytes);
    unsigned long long want = strtoull(argv[2], NULL, 10);
    FILE *out = fopen(argv[3], "wb");
    if (in == NULL || n_bytes < sizeof(struct prof_file_header) || out == NULL) {
        fprintf(stderr, "gen_profile: cannot read %s or write %s\n", argv[1], argv[3]);
        return 1;
    }
    const struct prof_file_header *h = (const void *)in;
    size_t at = h->header_bytes;
    fwrite(in, 1, at, out);
    /* Pass 1: every record but samples and the tail (STATS, END), which go last. */
    size_t *samples = malloc(n_bytes / 40 * sizeof(*samples) + 1);
    size_t n_samples = 0;
    size_t tail_at = 0;
    while (at + sizeof(struct prof_rec_hdr) <= n_bytes) {
        struct prof_rec_hdr r;
        memcpy(&r, in + at, sizeof(r));
        if (r.size_bytes < 8 || at + r.size_bytes > n_bytes)
            break;
        if (r.type == PROF_REC_SAMPLE || r.type == PROF_REC_SAMPLES)
            samples[n_samples++] = at;
        else if (r.type == PROF_REC_STATS || r.type == PROF_REC_END)
            tail_at = tail_at ? tail_at : at;
        else
            fwrite(in + at, 1, r.size_bytes, out);
        at += r.size_bytes;
    }
    if (n_samples == 0) {
        fprintf(stderr, "gen_profile: %s has no samples\n", argv[1]);
        return 1;
    }
    /* Pass 2: the samples, cycled, times spread over the template's time span. */
    /* Both record kinds have their time (SAMPLE) or base time (SAMPLES) at byte 8. */
    uint64_t t0, t1;
    memcpy(&t0, in + samples[0] + 8, 8);
    memcpy(&t1, in + samples[n_samples - 1] + 8, 8);
    uint64_t span = t1 > t0 ? t1 - t0 : 1;
    static unsigned char buf[PROF_REC_MAX_BYTES];
    unsigned long long done = 0;
    for (unsigned long long i = 0; done < want; i++) {
        size_t s = samples[i % n_samples];
        struct prof_rec_hdr r;
        memcpy(&r, in + s, sizeof(r));
        memcpy(buf, in + s, r.size_bytes);
        uint64_t t = t0 + (uint64_t)((double)span * (double)done / (double)want);
        memcpy(buf + 8, &t, 8);
        fwrite(buf, 1, r.size_bytes, out);
        uint32_t n = 1;
        if (r.type == PROF_REC_SAMPLES)
            memcpy(&n, buf + 16, sizeof(n));
        done += n;
    }
    /* The tail as it was, so the file ends cleanly. */
    if (tail_at)
        fwrite(in + tail_at, 1, at - tail_at, out);
    free(samples);
    free(in);
    return fclose(out) == 0 ? 0 : 1;
}
