/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The demo program that `make demo` profiles: a tiny image pipeline with four stages,
 * each a function you will find by name in the profile.
 *
 *   render_scene   draws a frame of a moving integer "plasma" pattern     (~10 % of the time)
 *   blur_image     7x7 box blur, the slow naive way                      (~45 %)
 *   sort_pixels    recursive quicksort of half the pixels, for a median  (~20 %)
 *   checksum_crc32 bit-by-bit CRC-32 of the frame, before and after blur (~25 %)
 *
 * main runs the pipeline for FRAMES frames and prints one line with the median brightness
 * and a checksum. The quicksort calls itself, so its samples stack up as
 * sort_pixels;quicksort;quicksort;...: a tower in a flame graph.
 *
 *   pipeline [FRAMES]    default 60, about 1.5 s
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 512
#define HEIGHT 512
#define N_PIXELS (WIDTH * HEIGHT)
#define BLUR_RADIUS 3

void render_scene(uint8_t *img, int frame);
void blur_image(const uint8_t *src, uint8_t *dst);
void quicksort(uint8_t *v, long lo, long hi);
uint8_t sort_pixels(const uint8_t *img, uint8_t *scratch);
uint32_t checksum_crc32(const uint8_t *data, size_t n, uint32_t crc);

/* Stage 1: a pattern that moves with the frame number, in integer arithmetic only. */
__attribute__((noipa)) void render_scene(uint8_t *img, int frame)
{
    for (int y = 0; y < HEIGHT; y++) {
        for (int x = 0; x < WIDTH; x++) {
            unsigned v = (unsigned)((x * x + y * y) / 64 + frame * 3);
            for (int k = 0; k < 12; k++) {
                v ^= (unsigned)(x * y + k) >> 6;
                v = v * 2654435761u >> 8;
            }
            img[y * WIDTH + x] = (uint8_t)((v + (unsigned)(x + y + frame)) & 0xff);
        }
    }
}

/* Stage 2: every output pixel is the mean of the (2r+1)^2 pixels around it, clamped at
 * the edges; deliberately the naive O(r^2) way. */
__attribute__((noipa)) void blur_image(const uint8_t *src, uint8_t *dst)
{
    for (int y = 0; y < HEIGHT; y++) {
        for (int x = 0; x < WIDTH; x++) {
            unsigned sum = 0, n = 0;
            for (int dy = -BLUR_RADIUS; dy <= BLUR_RADIUS; dy++) {
                int yy = y + dy;
                if (yy < 0 || yy >= HEIGHT)
                    continue;
                for (int dx = -BLUR_RADIUS; dx <= BLUR_RADIUS; dx++) {
                    int xx = x + dx;
                    if (xx < 0 || xx >= WIDTH)
                        continue;
                    sum += src[yy * WIDTH + xx];
                    n++;
                }
            }
            dst[y * WIDTH + x] = (uint8_t)(sum / n);
        }
    }
}

/* Stage 3: Hoare-partition quicksort, recursing into both halves. */
__attribute__((noipa)) void quicksort(uint8_t *v, long lo, long hi)
{
    if (lo >= hi)
        return;
    uint8_t pivot = v[lo + (hi - lo) / 2];
    long i = lo - 1, j = hi + 1;
    for (;;) {
        do
            i++;
        while (v[i] < pivot);
        do
            j--;
        while (v[j] > pivot);
        if (i >= j)
            break;
        uint8_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    quicksort(v, lo, j);
    quicksort(v, j + 1, hi);
}

/* Sorts every other row, which is enough for a median. */
__attribute__((noipa)) uint8_t sort_pixels(const uint8_t *img, uint8_t *scratch)
{
    long n = 0;
    for (int y = 0; y < HEIGHT; y += 2, n += WIDTH)
        memcpy(scratch + n, img + y * WIDTH, WIDTH);
    quicksort(scratch, 0, n - 1);
    return scratch[n / 2];
}

/* Stage 4: CRC-32 (IEEE), one bit at a time: slow on purpose, simple to read. */
__attribute__((noipa)) uint32_t checksum_crc32(const uint8_t *data, size_t n, uint32_t crc)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= data[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 60;
    if (frames <= 0) {
        fprintf(stderr, "usage: pipeline [FRAMES]\n");
        return 2;
    }
    uint8_t *frame = malloc(N_PIXELS), *blurred = malloc(N_PIXELS);
    uint8_t *scratch = malloc(N_PIXELS);
    if (!frame || !blurred || !scratch) {
        fprintf(stderr, "pipeline: out of memory\n");
        return 1;
    }
    uint32_t crc = 0;
    unsigned long median_sum = 0;
    for (int f = 0; f < frames; f++) {
        render_scene(frame, f);
        blur_image(frame, blurred);
        median_sum += sort_pixels(blurred, scratch);
        crc = checksum_crc32(frame, N_PIXELS, crc);
        crc = checksum_crc32(blurred, N_PIXELS, crc);
    }
    printf("pipeline: %d frames of %dx%d, mean median brightness %lu, crc32 %08x\n", frames, WIDTH,
           HEIGHT, median_sum / (unsigned long)frames, crc);
    free(frame);
    free(blurred);
    free(scratch);
    return 0;
}
