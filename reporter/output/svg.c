/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SVG flame graph, drawn in one pass over the tree's nodes in index order (a caller
 * always comes before its callees). Geometry is in SVG user units: the graph is
 * SVG_WIDTH wide, frames SVG_FRAME_H high, the root's row at the bottom (or the top for an
 * icicle). Labels are cut to the characters that fit at SVG_CHAR_W units each, which is
 * wide enough for the monospace font at SVG_FONT_PX; the script redoes the cut the same
 * way when it zooms. The script reads everything it needs from the document: each
 * frame's start, total and depth in data- attributes, its name from the first line of
 * its <title>, and the geometry from data- attributes of the <svg>. Reporter thread.
 */
#include "reporter/output/svg.h"

#include <inttypes.h>
#include <string.h>

#include "common/err.h"
#include "common/hash.h"
#include "reporter/output/escape.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"

#define SVG_WIDTH 1200.0
#define SVG_PAD 10.0     /* left and right margins */
#define SVG_TOP 60.0     /* the frames start below the title, subtitle and buttons */
#define SVG_BOTTOM 36.0  /* room for the details and the search result under them */
#define SVG_FRAME_H 16.0 /* a row; a box is 1 unit less, for a gap */
#define SVG_FONT_PX 12
#define SVG_CHAR_W 7.25  /* monospace advance at SVG_FONT_PX (0.6 em), rounded up */
#define SVG_NOTE_MAX 256 /* bytes of a note hook's line */

/* The embedded script (its source reads as plain JavaScript below). It must never hold
 * the three characters that end a CDATA section. */
static const char flame_js[] =
    "(function () {\n"
    "    'use strict';\n"
    "    var svg = document.getElementById('pf-svg');\n"
    "    var total = Number(svg.getAttribute('data-total'));\n"
    "    var pad = Number(svg.getAttribute('data-pad'));\n"
    "    var width = Number(svg.getAttribute('data-width'));\n"
    "    var charW = Number(svg.getAttribute('data-charw'));\n"
    "    var details = document.getElementById('pf-details');\n"
    "    var matched = document.getElementById('pf-matched');\n"
    "    var resetBtn = document.getElementById('pf-reset');\n"
    "    var searchBtn = document.getElementById('pf-search');\n"
    "    var clearBtn = document.getElementById('pf-clear');\n"
    "    var input = document.getElementById('pf-search-input');\n"
    "    var idle = details.textContent;\n"
    "    var frames = [];\n"
    "    var byG = new Map();\n"
    "    var lastTerm = '';\n"
    "\n"
    "    svg.querySelectorAll('g.f').forEach(function (g) {\n"
    "        var lines = g.querySelector('title').textContent.split('\\n');\n"
    "        var f = {\n"
    "            g: g, rect: g.querySelector('rect'), text: g.querySelector('text'),\n"
    "            name: lines[0], tip: lines.join(' \\u00b7 '),\n"
    "            s: Number(g.getAttribute('data-s')), t: Number(g.getAttribute('data-t')),\n"
    "            d: Number(g.getAttribute('data-d'))\n"
    "        };\n"
    "        frames.push(f);\n"
    "        byG.set(g, f);\n"
    "    });\n"
    "\n"
    "    function show(el, on) {\n"
    "        el.style.display = on ? '' : 'none';\n"
    "    }\n"
    "\n"
    "    function percent(part, whole) {\n"
    "        return whole > 0 ? (100 * part / whole).toFixed(2) + ' %' : '0 %';\n"
    "    }\n"
    "\n"
    "    /* The name cut to the characters that fit in w units, as the C side does. */\n"
    "    function label(name, w) {\n"
    "        var fit = Math.floor((w - 6) / charW);\n"
    "        if (fit < 3)\n"
    "            return '';\n"
    "        var chars = Array.from(name);\n"
    "        return chars.length <= fit ? name : chars.slice(0, fit - 2).join('') + '..';\n"
    "    }\n"
    "\n"
    "    /* Draws the frames of z (null: everything) across the full width; its callers stay,\n"
    "     * full width and dimmed; the rest is hidden. */\n"
    "    function zoom(z) {\n"
    "        var s = z ? z.s : 0, t = z ? z.t : total, d = z ? z.d : 0;\n"
    "        frames.forEach(function (f) {\n"
    "            var inside = f.d >= d && f.s >= s && f.s + f.t <= s + t;\n"
    "            var caller = f.d < d && f.s <= s && f.s + f.t >= s + t;\n"
    "            show(f.g, inside || caller);\n"
    "            if (!inside && !caller)\n"
    "                return;\n"
    "            f.g.classList.toggle('pf-caller', caller);\n"
    "            var x = caller ? pad : pad + (f.s - s) / t * width;\n"
    "            var w = caller ? width : f.t / t * width;\n"
    "            f.rect.setAttribute('x', x.toFixed(2));\n"
    "            f.rect.setAttribute('width', w.toFixed(2));\n"
    "            f.text.setAttribute('x', (x + 3).toFixed(2));\n"
    "            f.text.textContent = label(f.name, w);\n"
    "        });\n"
    "        show(resetBtn, z !== null);\n"
    "    }\n"
    "\n"
    "    /* Highlights the frames whose name matches term, a regular expression or, when it is\n"
    "     * not one, plain text; the share counts each sample once, however many matching\n"
    "     * frames its stack has. */\n"
    "    function search(term) {\n"
    "        lastTerm = term || '';\n"
    "        if (!lastTerm) {\n"
    "            clearSearch();\n"
    "            return;\n"
    "        }\n"
    "        var re = null;\n"
    "        try {\n"
    "            re = new RegExp(lastTerm);\n"
    "        } catch (e) {\n"
    "            re = null;\n"
    "        }\n"
    "        var hits = [];\n"
    "        frames.forEach(function (f) {\n"
    "            var hit = f.d > 0 && (re ? re.test(f.name) : f.name.indexOf(lastTerm) >= 0);\n"
    "            f.g.classList.toggle('pf-hit', hit);\n"
    "            if (hit)\n"
    "                hits.push(f);\n"
    "        });\n"
    "        hits.sort(function (a, b) { return a.s - b.s || b.t - a.t; });\n"
    "        var sum = 0, end = -1;\n"
    "        hits.forEach(function (f) {\n"
    "            if (f.s >= end) {\n"
    "                sum += f.t;\n"
    "                end = f.s + f.t;\n"
    "            }\n"
    "        });\n"
    "        matched.textContent = 'Matched: ' + percent(sum, total) + ' (' + sum + ' of ' +\n"
    "            total + ' samples, ' + hits.length + ' frames)';\n"
    "        show(clearBtn, true);\n"
    "        if (input && input.value !== lastTerm)\n"
    "            input.value = lastTerm;\n"
    "    }\n"
    "\n"
    "    function clearSearch() {\n"
    "        lastTerm = '';\n"
    "        frames.forEach(function (f) { f.g.classList.remove('pf-hit'); });\n"
    "        matched.textContent = '';\n"
    "        show(clearBtn, false);\n"
    "        if (input)\n"
    "            input.value = '';\n"
    "    }\n"
    "\n"
    "    function askSearch() {\n"
    "        if (input) {\n"
    "            input.focus();\n"
    "            input.select();\n"
    "            return;\n"
    "        }\n"
    "        var term = window.prompt('Search frames (regular expression or text):', lastTerm);\n"
    "        if (term !== null)\n"
    "            search(term);\n"
    "    }\n"
    "\n"
    "    function frameOf(target) {\n"
    "        var g = target && target.closest ? target.closest('g.f') : null;\n"
    "        return g ? byG.get(g) : undefined;\n"
    "    }\n"
    "\n"
    "    svg.addEventListener('click', function (ev) {\n"
    "        var f = frameOf(ev.target);\n"
    "        if (f)\n"
    "            zoom(f.d === 0 ? null : f);\n"
    "    });\n"
    "    svg.addEventListener('mouseover', function (ev) {\n"
    "        var f = frameOf(ev.target);\n"
    "        if (f)\n"
    "            details.textContent = f.tip;\n"
    "    });\n"
    "    svg.addEventListener('mouseout', function (ev) {\n"
    "        if (frameOf(ev.target))\n"
    "            details.textContent = idle;\n"
    "    });\n"
    "    resetBtn.addEventListener('click', function () { zoom(null); });\n"
    "    searchBtn.addEventListener('click', askSearch);\n"
    "    clearBtn.addEventListener('click', clearSearch);\n"
    "    if (input)\n"
    "        input.addEventListener('input', function () { search(input.value); });\n"
    "    document.addEventListener('keydown', function (ev) {\n"
    "        var find = (ev.ctrlKey || ev.metaKey) && ev.key === 'f';\n"
    "        if (find || (ev.key === '/' && ev.target !== input)) {\n"
    "            ev.preventDefault();\n"
    "            askSearch();\n"
    "        } else if (ev.key === 'Escape') {\n"
    "            zoom(null);\n"
    "            clearSearch();\n"
    "        }\n"
    "    });\n"
    "})();\n";

static const char flame_css[] = "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
                                ".pf-title { font-size: 17px; text-anchor: middle; }\n"
                                ".pf-sub { fill: #555; text-anchor: middle; }\n"
                                ".pf-btn { fill: #1a55a8; cursor: pointer; }\n"
                                ".pf-right { text-anchor: end; }\n"
                                "g.f { cursor: pointer; }\n"
                                "g.f text { pointer-events: none; }\n"
                                "g.f:hover rect { stroke: #222; stroke-width: 0.7; }\n"
                                "g.pf-hit rect { fill: #d61fd0; }\n"
                                "g.pf-caller { opacity: 0.55; }\n";

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* 0xRRGGBB of hue h (degrees), saturation s and lightness l (0..1). */
static uint32_t hsl_rgb(double h, double s, double l)
{
    double c = (1.0 - (2.0 * l - 1.0 < 0 ? 1.0 - 2.0 * l : 2.0 * l - 1.0)) * s;
    double hp = h / 60.0;
    double frac = hp - 2.0 * (double)(int)(hp / 2.0);
    double x = c * (1.0 - (frac - 1.0 < 0 ? 1.0 - frac : frac - 1.0));
    double r = 0, g = 0, b = 0;
    if (hp < 1)
        r = c, g = x;
    else if (hp < 2)
        r = x, g = c;
    else if (hp < 3)
        g = c, b = x;
    else if (hp < 4)
        g = x, b = c;
    else if (hp < 5)
        r = x, b = c;
    else
        r = c, b = x;
    double m = l - c / 2.0;
    uint32_t ri = (uint32_t)((r + m) * 255.0 + 0.5), gi = (uint32_t)((g + m) * 255.0 + 0.5);
    uint32_t bi = (uint32_t)((b + m) * 255.0 + 0.5);
    return ri << 16 | gi << 8 | bi;
}

/* A warm colour (red through orange to yellow) that depends on the name only, so that a
 * function has the same colour in every graph. */
uint32_t rep_svg_warm_color(const char *name)
{
    uint64_t h = cmn_hash_bytes(name, strlen(name));
    double hue = (double)(h % 1000) / 1000.0 * 52.0;
    double sat = 0.72 + (double)((h >> 16) % 1000) / 1000.0 * 0.2;
    double light = 0.52 + (double)((h >> 32) % 1000) / 1000.0 * 0.12;
    return hsl_rgb(hue, sat, light);
}

/* A cool colour (blue through teal) for frames whose time is all off CPU (a wall profile's
 * waits), from the name as rep_svg_warm_color() does. */
uint32_t rep_svg_cool_color(const char *name)
{
    uint64_t h = cmn_hash_bytes(name, strlen(name));
    double hue = 190.0 + (double)(h % 1000) / 1000.0 * 40.0;
    double sat = 0.45 + (double)((h >> 16) % 1000) / 1000.0 * 0.25;
    double light = 0.58 + (double)((h >> 32) % 1000) / 1000.0 * 0.12;
    return hsl_rgb(hue, sat, light);
}

/* What the graph leaves out: frames under the threshold whose caller is drawn. */
struct elided {
    double min_width;   /* the fraction of the total asked for */
    uint64_t min_total; /* a frame is drawn when its total is at least this (and not 0) */
    size_t n_frames;    /* frames left out at the top of a left-out subtree */
    uint64_t weight;    /* their total weight */
    uint32_t max_depth; /* of a frame drawn */
};

static bool is_drawn(const struct rep_flame *f, uint32_t i, const struct elided *e)
{
    return i == REP_FLAME_ROOT || (f->nodes[i].total > 0 && f->nodes[i].total >= e->min_total);
}

static void find_elided(const struct rep_flame *f, const struct rep_flame_opts *o, struct elided *e)
{
    double min = o->min_width == 0 ? REP_FLAME_MIN_WIDTH : o->min_width;
    double root = (double)f->nodes[REP_FLAME_ROOT].total;
    memset(e, 0, sizeof(*e));
    e->min_width = min;
    e->min_total = min <= 0 ? 0 : (uint64_t)(min * root + 0.999999);
    for (uint32_t i = 1; i < f->n_nodes; i++) {
        const struct rep_flame_node *nd = &f->nodes[i];
        if (is_drawn(f, i, e)) {
            if (nd->depth > e->max_depth)
                e->max_depth = nd->depth;
        } else if (is_drawn(f, nd->parent, e) && nd->total > 0) {
            e->n_frames++;
            e->weight += nd->total;
        }
    }
}

/* The label of a frame w units wide: the name, or its start and "..", or nothing. */
static void put_label(FILE *out, const char *name, double w)
{
    double fit_d = (w - 6.0) / SVG_CHAR_W;
    size_t fit = fit_d < 0 ? 0 : (size_t)fit_d;
    if (fit < 3)
        return;
    if (rep_utf8_count(name) <= fit) {
        rep_escape_xml(out, name, SIZE_MAX);
        return;
    }
    rep_escape_xml(out, name, fit - 2);
    fputs("..", out);
}

static void put_frame(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                      const struct rep_flame_opts *o, const struct elided *e, uint32_t i)
{
    const struct rep_flame_node *nd = &f->nodes[i];
    uint64_t root = f->nodes[REP_FLAME_ROOT].total;
    const char *name = i == REP_FLAME_ROOT ? "all" : rep_names_get(names, nd->name_id);
    double width = SVG_WIDTH - 2 * SVG_PAD;
    double x = SVG_PAD + (root ? (double)nd->start / (double)root * width : 0);
    double w = root ? (double)nd->total / (double)root * width : width;
    uint32_t row = o->is_icicle ? nd->depth : e->max_depth - nd->depth;
    double y = SVG_TOP + row * SVG_FRAME_H;
    uint32_t rgb = 0xe0e0e0;
    if (o->color != NULL)
        o->color(o->hook_ctx, f, i, &rgb);
    else if (i != REP_FLAME_ROOT)
        rgb = nd->off > 0 && nd->off == nd->total ? rep_svg_cool_color(name)
                                                   : rep_svg_warm_color(name);

    fprintf(out,
            "<g class=\"f\" data-s=\"%" PRIu64 "\" data-t=\"%" PRIu64 "\" data-d=\"%" PRIu32
            "\"><title>",
            nd->start, nd->total, nd->depth);
    rep_escape_xml(out, name, SIZE_MAX);
    fprintf(out, "\n%" PRIu64 " samples, %.2f %%", nd->total, percent(nd->total, root));
    if (nd->self != nd->total)
        fprintf(out, " (self %" PRIu64 ")", nd->self);
    char note[SVG_NOTE_MAX];
    if (o->note != NULL && o->note(o->hook_ctx, f, i, note, sizeof(note)) > 0) {
        note[sizeof(note) - 1] = '\0';
        fputc('\n', out);
        rep_escape_xml(out, note, SIZE_MAX);
    }
    fprintf(out,
            "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" rx=\"2\" "
            "fill=\"#%06" PRIx32 "\"/><text x=\"%.2f\" y=\"%.1f\">",
            x, y, w, SVG_FRAME_H - 1, rgb & 0xffffff, x + 3, y + SVG_FRAME_H - 4.5);
    put_label(out, name, w);
    fputs("</text></g>\n", out);
}

static void put_subtitle(FILE *out, const struct rep_flame *f, const struct rep_flame_opts *o,
                         const struct elided *e)
{
    uint64_t root = f->nodes[REP_FLAME_ROOT].total;
    if (o->subtitle != NULL) {
        rep_escape_xml(out, o->subtitle, SIZE_MAX);
    } else {
        fprintf(out, "%" PRIu64 " samples", root);
        if (f->seconds > 0)
            fprintf(out, " (%.2f s of CPU time)", f->seconds);
    }
    if (e->n_frames > 0)
        fprintf(out, "; %zu frames under %.2g %% of the total not drawn (%.2f %% of the samples)",
                e->n_frames, 100.0 * e->min_width, percent(e->weight, root));
}

void rep_out_svg_element(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                         const struct rep_flame_opts *o, bool is_inline)
{
    struct elided e;
    find_elided(f, o, &e);
    double height = SVG_TOP + (e.max_depth + 1) * SVG_FRAME_H + SVG_BOTTOM;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"pf-svg\" ");
    if (is_inline)
        fputs("width=\"100%\" ", out);
    else
        fprintf(out, "width=\"%.0f\" height=\"%.0f\" ", SVG_WIDTH, height);
    fprintf(out,
            "viewBox=\"0 0 %.0f %.0f\" data-total=\"%" PRIu64 "\" data-pad=\"%.0f\" "
            "data-width=\"%.0f\" data-charw=\"%.2f\">\n",
            SVG_WIDTH, height, f->nodes[REP_FLAME_ROOT].total, SVG_PAD, SVG_WIDTH - 2 * SVG_PAD,
            SVG_CHAR_W);
    fprintf(out, "<style>\n%s</style>\n", flame_css);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fdfcf4\"/>\n");
    fprintf(out, "<text class=\"pf-title\" x=\"%.0f\" y=\"24\">", SVG_WIDTH / 2);
    rep_escape_xml(out, o->title != NULL ? o->title : "Flame graph", SIZE_MAX);
    fprintf(out, "</text>\n<text class=\"pf-sub\" x=\"%.0f\" y=\"42\">", SVG_WIDTH / 2);
    put_subtitle(out, f, o, &e);
    fprintf(out,
            "</text>\n<text id=\"pf-reset\" class=\"pf-btn\" x=\"%.0f\" y=\"24\" "
            "style=\"display:none\">Reset zoom</text>\n",
            SVG_PAD);
    fprintf(out,
            "<text id=\"pf-search\" class=\"pf-btn pf-right\" x=\"%.0f\" y=\"24\">Search"
            "</text>\n",
            SVG_WIDTH - SVG_PAD);
    fprintf(out,
            "<text id=\"pf-clear\" class=\"pf-btn pf-right\" x=\"%.0f\" y=\"42\" "
            "style=\"display:none\">Clear search</text>\n",
            SVG_WIDTH - SVG_PAD);
    fputs("<g id=\"pf-frames\">\n", out);
    for (uint32_t i = 0; i < f->n_nodes; i++)
        if (is_drawn(f, i, &e))
            put_frame(out, f, names, o, &e, i);
    fputs("</g>\n", out);
    fprintf(out,
            "<text id=\"pf-details\" x=\"%.0f\" y=\"%.0f\">Click a frame to zoom, Search to "
            "highlight</text>\n",
            SVG_PAD, height - 20);
    fprintf(out, "<text id=\"pf-matched\" class=\"pf-right\" x=\"%.0f\" y=\"%.0f\"></text>\n",
            SVG_WIDTH - SVG_PAD, height - 6);
    fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", flame_js);
}

int rep_out_svg(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                const struct rep_flame_opts *o)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    rep_out_svg_element(out, f, names, o, false);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
