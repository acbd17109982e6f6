/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The HTML flame graph: a page whose script draws the graph from the data embedded in it
 * (the stacks as name indexes, their weights, each stack's samples per interval of the
 * run), so that it can draw it again for what the reader chooses: a time range, dragged on
 * a strip of the run over time (samples per interval, stacked by the value of the first
 * --by-label key), and a value of that label. The graph has the SVG output's structure
 * (g.f frames with data-s, data-t, data-d, a title, a rect and a text; the same colours,
 * search, zoom and keys), every frame drawn down to a tenth of a pixel, the ones narrower
 * (at the zoom shown) together in one hatched box per caller, and the page opens with the
 * root in view. Everything is in the page; nothing is fetched. Reporter thread.
 */
#include "reporter/output/html.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/output/escape.h"
#include "reporter/output/svg.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"

#define HTML_BINS 200u /* intervals of the strip of the run */
#define NO_INDEX UINT32_MAX

static const char page_css[] =
    "html, body { height: 100%; margin: 0; }\n"
    "body { display: flex; flex-direction: column; background: #fdfcf4;\n"
    "       font: 14px sans-serif; }\n"
    "#pf-head { padding: 6px 12px 0; }\n"
    "#pf-bar { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }\n"
    "#pf-bar h1 { font-size: 17px; font-weight: normal; margin: 0 12px 0 0; }\n"
    "#pf-search-input { font: 13px monospace; width: 22em; padding: 2px 4px; }\n"
    "#pf-sub, #pf-range, #pf-hint { color: #555; }\n"
    "#pf-strip { display: block; width: 100%; height: 48px; margin-top: 4px; cursor: crosshair;\n"
    "            background: #f3f1e4; }\n"
    "#pf-view { flex: 1; min-height: 0; overflow: auto; padding: 0 12px; }\n"
    "#pf-svg { display: block; width: 100%; }\n"
    "#pf-foot { display: flex; justify-content: space-between; padding: 2px 12px 6px;\n"
    "           font: 12px monospace; min-height: 1.2em; }\n"
    "button { font: 13px sans-serif; }\n"
    "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
    "g.f { cursor: pointer; }\n"
    "g.f text { pointer-events: none; }\n"
    "g.f:hover rect { stroke: #222; stroke-width: 0.7; }\n"
    "g.pf-hit rect { fill: #d61fd0; }\n"
    "g.pf-caller { opacity: 0.55; }\n";

/* The embedded script (its source reads as plain JavaScript below). */
static const char page_js[] =
    "(function () {\n"
    "    'use strict';\n"
    "    var D = JSON.parse(document.getElementById('pf-data').textContent);\n"
    "    var NS = 'http://www.w3.org/2000/svg';\n"
    "    var PAD = 10, WIDTH = 1180, FRAME_H = 16, CHAR_W = 7.25, MIN_PX = 0.1;\n"
    "    var svg = document.getElementById('pf-svg');\n"
    "    var view = document.getElementById('pf-view');\n"
    "    var details = document.getElementById('pf-details');\n"
    "    var matched = document.getElementById('pf-matched');\n"
    "    var resetBtn = document.getElementById('pf-reset');\n"
    "    var clearBtn = document.getElementById('pf-clear');\n"
    "    var input = document.getElementById('pf-search-input');\n"
    "    var sub = document.getElementById('pf-sub');\n"
    "    var strip = document.getElementById('pf-strip');\n"
    "    var rangeText = document.getElementById('pf-range');\n"
    "    var select = document.getElementById('pf-label');\n"
    "    var idle = details.textContent;\n"
    "    var nodes = [], frames = [], byG = new Map(), narrow = new Map();\n"
    "    var zoomed = null, lastTerm = '', range = null, labelValue = '';\n"
    "\n"
    "    /* The graph drawn again for what the reader chose, the root in view. */\n"
    "    function redraw() {\n"
    "        build();\n"
    "        render();\n"
    "        drawStrip();\n"
    "        view.scrollTop = D.icicle ? 0 : view.scrollHeight;\n"
    "    }\n"
    "\n"
    "    /* The value of the --by-label key a stack is under: its root frame \"key=value\". */\n"
    "    var prefix = D.label_key ? D.label_key + '=' : null;\n"
    "    var stackLabel = D.stacks.map(function (s) {\n"
    "        var n = s.length ? D.names[s[0]] : '';\n"
    "        return prefix && n.indexOf(prefix) === 0 ? n.slice(prefix.length) : null;\n"
    "    });\n"
    "\n"
    "    function el(name, attrs, parent) {\n"
    "        var e = document.createElementNS(NS, name);\n"
    "        for (var k in attrs)\n"
    "            e.setAttribute(k, attrs[k]);\n"
    "        if (parent)\n"
    "            parent.appendChild(e);\n"
    "        return e;\n"
    "    }\n"
    "\n"
    "    function show(e, on) {\n"
    "        e.style.display = on ? '' : 'none';\n"
    "    }\n"
    "\n"
    "    function percent(part, whole) {\n"
    "        return whole > 0 ? (100 * part / whole).toFixed(2) + ' %' : '0 %';\n"
    "    }\n"
    "\n"
    "    function cmpName(a, b) {\n"
    "        var x = D.names[a.name], y = D.names[b.name];\n"
    "        return x < y ? -1 : x > y ? 1 : 0;\n"
    "    }\n"
    "\n"
    "    /* The weight of stack i in the selection: its samples in the time range, under the\n"
    "     * label value chosen. */\n"
    "    function weightOf(i) {\n"
    "        if (labelValue && stackLabel[i] !== labelValue)\n"
    "            return 0;\n"
    "        if (!range)\n"
    "            return D.weights[i];\n"
    "        var s = D.series[i], w = 0;\n"
    "        for (var k = 0; k < s.length; k += 2)\n"
    "            if (s[k] >= range[0] && s[k] < range[1])\n"
    "                w += s[k + 1];\n"
    "        return w;\n"
    "    }\n"
    "\n"
    "    /* The call tree of the selection: nodes by (parent, name), each with its children\n"
    "     * sorted by name. */\n"
    "    function build() {\n"
    "        nodes = [{name: -1, parent: null, depth: 0, self: 0, total: 0, off: 0, kids: new Map()}];\n"
    "        nodes[0].self = range || labelValue ? 0 : D.empty;\n"
    "        nodes[0].total = nodes[0].self;\n"
    "        for (var i = 0; i < D.stacks.length; i++) {\n"
    "            var w = weightOf(i);\n"
    "            if (w <= 0)\n"
    "                continue;\n"
    "            var n = nodes[0], off = D.off[i] ? w : 0;\n"
    "            n.total += w;\n"
    "            n.off += off;\n"
    "            var s = D.stacks[i];\n"
    "            for (var k = 0; k < s.length; k++) {\n"
    "                var c = n.kids.get(s[k]);\n"
    "                if (!c) {\n"
    "                    c = {name: s[k], parent: n, depth: k + 1, self: 0, total: 0, off: 0,\n"
    "                         kids: new Map()};\n"
    "                    n.kids.set(s[k], c);\n"
    "                    nodes.push(c);\n"
    "                }\n"
    "                c.total += w;\n"
    "                c.off += off;\n"
    "                n = c;\n"
    "            }\n"
    "            n.self += w;\n"
    "        }\n"
    "        nodes.forEach(function (n) {\n"
    "            n.children = Array.from(n.kids.values()).sort(cmpName);\n"
    "        });\n"
    "    }\n"
    "\n"
    "    /* Places the children of n from its start, the wide ones by name, then those under\n"
    "     * thr (narrower than MIN_PX at the scale drawn) together in one box at the end. */\n"
    "    function place(n, thr) {\n"
    "        var at = n.start;\n"
    "        n.narrowW = 0;\n"
    "        n.narrowN = 0;\n"
    "        n.children.forEach(function (c) {\n"
    "            c.isNarrow = c.total < thr;\n"
    "            if (!c.isNarrow) {\n"
    "                c.start = at;\n"
    "                at += c.total;\n"
    "            }\n"
    "        });\n"
    "        n.narrowAt = at;\n"
    "        n.children.forEach(function (c) {\n"
    "            if (c.isNarrow) {\n"
    "                c.start = at;\n"
    "                at += c.total;\n"
    "                n.narrowW += c.total;\n"
    "                n.narrowN++;\n"
    "            }\n"
    "            place(c, thr);\n"
    "        });\n"
    "    }\n"
    "\n"
    "    /* The name cut to the characters that fit in w units, as the SVG output does. */\n"
    "    function label(name, w) {\n"
    "        var fit = Math.floor((w - 6) / CHAR_W);\n"
    "        if (fit < 3)\n"
    "            return '';\n"
    "        var chars = Array.from(name);\n"
    "        return chars.length <= fit ? name : chars.slice(0, fit - 2).join('') + '..';\n"
    "    }\n"
    "\n"
    "    function nameOf(n) {\n"
    "        return n.name < 0 ? 'all' : D.names[n.name];\n"
    "    }\n"
    "\n"
    "    function colorOf(n) {\n"
    "        if (n.name < 0)\n"
    "            return '#e0e0e0';\n"
    "        return '#' + (n.off > 0 && n.off === n.total ? D.cool : D.warm)[n.name];\n"
    "    }\n"
    "\n"
    "    function tipOf(n) {\n"
    "        var t = nameOf(n) + '\\n' + n.total + ' samples, ' + percent(n.total, nodes[0].total);\n"
    "        if (n.self !== n.total)\n"
    "            t += ' (self ' + n.self + ')';\n"
    "        return t;\n"
    "    }\n"
    "\n"
    "    /* Draws the tree of the selection afresh: a g.f per node, a marked box per parent for\n"
    "     * its children narrower than a tenth of a pixel. */\n"
    "    function render() {\n"
    "        zoomed = null;\n"
    "        var maxDepth = 0;\n"
    "        nodes.forEach(function (n) {\n"
    "            if (n.depth > maxDepth)\n"
    "                maxDepth = n.depth;\n"
    "        });\n"
    "        var height = (maxDepth + 1) * FRAME_H + 4;\n"
    "        svg.setAttribute('viewBox', '0 0 ' + (WIDTH + 2 * PAD) + ' ' + height);\n"
    "        svg.setAttribute('data-total', nodes[0].total);\n"
    "        svg.textContent = '';\n"
    "        var defs = el('defs', {}, svg);\n"
    "        var pat = el('pattern', {id: 'pf-hatch', width: 4, height: 4,\n"
    "                                 patternUnits: 'userSpaceOnUse',\n"
    "                                 patternTransform: 'rotate(45)'}, defs);\n"
    "        el('rect', {width: 4, height: 4, fill: '#bbb'}, pat);\n"
    "        el('line', {x1: 0, y1: 0, x2: 0, y2: 4, stroke: '#777', 'stroke-width': 2}, pat);\n"
    "        var all = el('g', {id: 'pf-frames'}, svg);\n"
    "        frames = [];\n"
    "        byG = new Map();\n"
    "        narrow = new Map();\n"
    "        nodes.forEach(function (n) {\n"
    "            var row = D.icicle ? n.depth : maxDepth - n.depth;\n"
    "            var y = 2 + row * FRAME_H;\n"
    "            var g = el('g', {class: 'f'}, all);\n"
    "            var title = el('title', {}, g);\n"
    "            title.textContent = tipOf(n);\n"
    "            n.rect = el('rect', {y: y, height: FRAME_H - 1, rx: 2, fill: colorOf(n)}, g);\n"
    "            n.text = el('text', {y: y + FRAME_H - 4.5}, g);\n"
    "            n.g = g;\n"
    "            n.tip = tipOf(n).split('\\n').join(' \\u00b7 ');\n"
    "            frames.push(n);\n"
    "            byG.set(g, n);\n"
    "            if (n.children.length) {\n"
    "                var b = el('g', {class: 'pf-narrow'}, all);\n"
    "                b.appendChild(document.createElementNS(NS, 'title'));\n"
    "                el('rect', {y: y - (D.icicle ? -FRAME_H : FRAME_H), height: FRAME_H - 1,\n"
    "                            fill: 'url(#pf-hatch)'}, b);\n"
    "                narrow.set(n, b);\n"
    "            }\n"
    "        });\n"
    "        layout(null);\n"
    "        var t = nodes[0].total;\n"
    "        sub.textContent = t + ' samples' + (D.seconds_per_unit > 0 ?\n"
    "            ' (' + (t * D.seconds_per_unit).toFixed(2) + ' s of ' + D.time_kind + ')' : '') +\n"
    "            (range ? '; ' + rangeLabel() : '') + (labelValue ? '; ' + prefix + labelValue : '');\n"
    "        if (lastTerm)\n"
    "            search(lastTerm);\n"
    "    }\n"
    "\n"
    "    /* Positions every frame for zoom z (null: the whole graph): z's subtree across the full\n"
    "     * width, its callers full width and dimmed, the rest hidden; frames narrower than a tenth\n"
    "     * of a pixel in one marked box per parent. */\n"
    "    function layout(z) {\n"
    "        var root = nodes[0];\n"
    "        var scale = WIDTH / Math.max(1, z ? z.total : root.total);\n"
    "        var px = svg.getBoundingClientRect().width / (WIDTH + 2 * PAD) || 1;\n"
    "        var thr = MIN_PX / px / scale;\n"
    "        if (z) {\n"
    "            place(z, thr);\n"
    "        } else {\n"
    "            root.start = 0;\n"
    "            place(root, thr);\n"
    "        }\n"
    "        var zs = z ? z.start : 0, zd = z ? z.depth : 0;\n"
    "        var caller = {};\n"
    "        for (var c = z; c; c = c.parent)\n"
    "            caller[c.depth] = c;\n"
    "        frames.forEach(function (n) {\n"
    "            var inside = !z || (n.depth >= zd && n.start >= zs && n.start < zs + z.total &&\n"
    "                                inSubtree(n, z));\n"
    "            var isCaller = z && n.depth < zd && caller[n.depth] === n;\n"
    "            var drawn = (inside && !n.isNarrow && n.total > 0) || isCaller;\n"
    "            show(n.g, drawn);\n"
    "            n.g.classList.toggle('pf-caller', !!isCaller);\n"
    "            var x = isCaller ? PAD : PAD + (n.start - zs) * scale;\n"
    "            var w = isCaller ? WIDTH : n.total * scale;\n"
    "            n.g.setAttribute('data-s', n.start);\n"
    "            n.g.setAttribute('data-t', n.total);\n"
    "            n.g.setAttribute('data-d', n.depth);\n"
    "            n.rect.setAttribute('x', x.toFixed(2));\n"
    "            n.rect.setAttribute('width', Math.max(w, 0).toFixed(2));\n"
    "            n.text.setAttribute('x', (x + 3).toFixed(2));\n"
    "            n.text.textContent = drawn ? label(nameOf(n), w) : '';\n"
    "            var b = narrow.get(n);\n"
    "            if (b) {\n"
    "                var bw = n.narrowW * scale;\n"
    "                show(b, drawn && !isCaller && n.narrowN > 0 && bw >= MIN_PX / px);\n"
    "                b.firstChild.textContent = n.narrowN + ' frames under ' + MIN_PX +\n"
    "                    ' px called by ' + nameOf(n) + ': ' + n.narrowW + ' samples, ' +\n"
    "                    percent(n.narrowW, root.total);\n"
    "                b.lastChild.setAttribute('x', (PAD + (n.narrowAt - zs) * scale).toFixed(2));\n"
    "                b.lastChild.setAttribute('width', bw.toFixed(2));\n"
    "            }\n"
    "        });\n"
    "        zoomed = z;\n"
    "        show(resetBtn, z !== null);\n"
    "    }\n"
    "\n"
    "    function inSubtree(n, z) {\n"
    "        for (var p = n; p; p = p.parent)\n"
    "            if (p === z)\n"
    "                return true;\n"
    "        return false;\n"
    "    }\n"
    "\n"
    "    /* Highlights the drawn frames whose name matches term, a regular expression or, when\n"
    "     * it is not one, plain text; the share counts each sample once. */\n"
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
    "        frames.forEach(function (n) {\n"
    "            var name = nameOf(n);\n"
    "            var hit = n.depth > 0 && n.g.style.display !== 'none' &&\n"
    "                (re ? re.test(name) : name.indexOf(lastTerm) >= 0);\n"
    "            n.g.classList.toggle('pf-hit', hit);\n"
    "            if (hit)\n"
    "                hits.push(n);\n"
    "        });\n"
    "        hits.sort(function (a, b) { return a.start - b.start || b.total - a.total; });\n"
    "        var sum = 0, end = -1;\n"
    "        hits.forEach(function (n) {\n"
    "            if (n.start >= end) {\n"
    "                sum += n.total;\n"
    "                end = n.start + n.total;\n"
    "            }\n"
    "        });\n"
    "        var total = nodes[0].total;\n"
    "        matched.textContent = 'Matched: ' + percent(sum, total) + ' (' + sum + ' of ' + total +\n"
    "            ' samples, ' + hits.length + ' frames)';\n"
    "        show(clearBtn, true);\n"
    "        if (input.value !== lastTerm)\n"
    "            input.value = lastTerm;\n"
    "    }\n"
    "\n"
    "    function clearSearch() {\n"
    "        lastTerm = '';\n"
    "        frames.forEach(function (n) { n.g.classList.remove('pf-hit'); });\n"
    "        matched.textContent = '';\n"
    "        show(clearBtn, false);\n"
    "        input.value = '';\n"
    "    }\n"
    "\n"
    "    function frameOf(target) {\n"
    "        var g = target && target.closest ? target.closest('g.f') : null;\n"
    "        return g ? byG.get(g) : undefined;\n"
    "    }\n"
    "\n"
    "    svg.addEventListener('click', function (ev) {\n"
    "        var n = frameOf(ev.target);\n"
    "        if (n) {\n"
    "            layout(n.depth === 0 ? null : n);\n"
    "            if (lastTerm)\n"
    "                search(lastTerm);\n"
    "        }\n"
    "    });\n"
    "    svg.addEventListener('mouseover', function (ev) {\n"
    "        var n = frameOf(ev.target);\n"
    "        var b = ev.target.closest ? ev.target.closest('g.pf-narrow') : null;\n"
    "        if (n)\n"
    "            details.textContent = n.tip;\n"
    "        else if (b)\n"
    "            details.textContent = b.firstChild.textContent;\n"
    "    });\n"
    "    svg.addEventListener('mouseout', function () {\n"
    "        details.textContent = idle;\n"
    "    });\n"
    "    resetBtn.addEventListener('click', function () {\n"
    "        layout(null);\n"
    "        if (lastTerm)\n"
    "            search(lastTerm);\n"
    "    });\n"
    "    clearBtn.addEventListener('click', clearSearch);\n"
    "    input.addEventListener('input', function () { search(input.value); });\n"
    "    document.addEventListener('keydown', function (ev) {\n"
    "        var find = (ev.ctrlKey || ev.metaKey) && ev.key === 'f';\n"
    "        if (find || (ev.key === '/' && ev.target !== input)) {\n"
    "            ev.preventDefault();\n"
    "            input.focus();\n"
    "            input.select();\n"
    "        } else if (ev.key === 'Escape') {\n"
    "            layout(null);\n"
    "            clearSearch();\n"
    "        }\n"
    "    });\n"
    "\n"
    "    /* The label's values, largest first. */\n"
    "    if (select) {\n"
    "        var byValue = new Map();\n"
    "        D.stacks.forEach(function (s, i) {\n"
    "            var v = stackLabel[i];\n"
    "            if (v !== null)\n"
    "                byValue.set(v, (byValue.get(v) || 0) + D.weights[i]);\n"
    "        });\n"
    "        Array.from(byValue.entries()).sort(function (a, b) { return b[1] - a[1]; })\n"
    "            .forEach(function (e) {\n"
    "                var o = document.createElement('option');\n"
    "                o.value = e[0];\n"
    "                o.textContent = e[0] + ' (' + percent(e[1], D.total) + ')';\n"
    "                select.appendChild(o);\n"
    "            });\n"
    "        select.addEventListener('change', function () {\n"
    "            labelValue = select.value;\n"
    "            redraw();\n"
    "        });\n"
    "    }\n"
    "\n"
    "    /* ---- the strip of the run over time -------------------------------------------- */\n"
    "\n"
    "    var STRIP_W = 1200, STRIP_H = 48, drag = null, dragX = 0;\n"
    "\n"
    "    function binTime(b) {\n"
    "        return (b * D.bin_ns / 1e9).toFixed(2) + ' s';\n"
    "    }\n"
    "\n"
    "    function rangeLabel() {\n"
    "        return 'time ' + binTime(range[0]) + ' \\u2013 ' + binTime(range[1]);\n"
    "    }\n"
    "\n"
    "    /* Samples per interval of the run (per value of the label with --by-label, stacked,\n"
    "     * the value chosen in colour, the others grey), the range chosen marked. */\n"
    "    function drawStrip() {\n"
    "        if (!strip)\n"
    "            return;\n"
    "        strip.textContent = '';\n"
    "        var per = [], top = 0, values = [];\n"
    "        for (var b = 0; b < D.n_bins; b++)\n"
    "            per.push(new Map());\n"
    "        D.series.forEach(function (s, i) {\n"
    "            var v = stackLabel[i] === null ? '' : stackLabel[i];\n"
    "            for (var k = 0; k < s.length; k += 2) {\n"
    "                var m = per[s[k]];\n"
    "                m.set(v, (m.get(v) || 0) + s[k + 1]);\n"
    "            }\n"
    "        });\n"
    "        per.forEach(function (m) {\n"
    "            var t = 0;\n"
    "            m.forEach(function (w, v) {\n"
    "                t += w;\n"
    "                if (values.indexOf(v) < 0)\n"
    "                    values.push(v);\n"
    "            });\n"
    "            top = Math.max(top, t);\n"
    "        });\n"
    "        values.sort();\n"
    "        var bw = STRIP_W / D.n_bins;\n"
    "        per.forEach(function (m, b) {\n"
    "            var y = STRIP_H;\n"
    "            values.forEach(function (v, k) {\n"
    "                var w = m.get(v) || 0;\n"
    "                if (!w)\n"
    "                    return;\n"
    "                var h = w / top * (STRIP_H - 2);\n"
    "                y -= h;\n"
    "                var hue = values.length > 1 ? (k * 137) % 360 : 20;\n"
    "                var on = !labelValue || v === labelValue;\n"
    "                el('rect', {x: (b * bw).toFixed(2), y: y.toFixed(2),\n"
    "                            width: Math.max(bw - 0.5, 0.5).toFixed(2), height: h.toFixed(2),\n"
    "                            fill: on ? 'hsl(' + hue + ',65%,55%)' : '#ccc',\n"
    "                            class: 'pf-bin'}, strip).appendChild(\n"
    "                    document.createElementNS(NS, 'title')).textContent =\n"
    "                    binTime(b) + ': ' + w + ' samples' + (v ? ' ' + prefix + v : '');\n"
    "            });\n"
    "        });\n"
    "        if (range)\n"
    "            el('rect', {id: 'pf-sel', x: range[0] * bw, y: 0, width: (range[1] - range[0]) * bw,\n"
    "                        height: STRIP_H, fill: 'rgba(26,85,168,0.18)',\n"
    "                        stroke: '#1a55a8'}, strip);\n"
    "        rangeText.textContent = range ? rangeLabel() + ' of ' + binTime(D.n_bins) +\n"
    "            ' \\u00b7 a click on the strip: the whole run' :\n"
    "            'the whole run, ' + binTime(D.n_bins) + ' \\u00b7 drag on the strip to choose ' +\n"
    "            'a time range';\n"
    "    }\n"
    "\n"
    "    function binAt(ev) {\n"
    "        var r = strip.getBoundingClientRect();\n"
    "        var b = Math.floor((ev.clientX - r.left) / r.width * D.n_bins);\n"
    "        return Math.max(0, Math.min(D.n_bins, b));\n"
    "    }\n"
    "\n"
    "    /* A drag on the strip chooses a time range; a click without one, the whole run. */\n"
    "    if (strip) {\n"
    "        strip.addEventListener('mousedown', function (ev) {\n"
    "            drag = binAt(ev);\n"
    "            dragX = ev.clientX;\n"
    "            ev.preventDefault();\n"
    "        });\n"
    "        strip.addEventListener('mousemove', function (ev) {\n"
    "            if (drag === null || Math.abs(ev.clientX - dragX) < 3)\n"
    "                return;\n"
    "            var b = binAt(ev);\n"
    "            range = [Math.min(drag, b), Math.min(D.n_bins, Math.max(drag, b) + 1)];\n"
    "            drawStrip();\n"
    "        });\n"
    "        window.addEventListener('mouseup', function (ev) {\n"
    "            if (drag === null)\n"
    "                return;\n"
    "            var b = binAt(ev);\n"
    "            range = Math.abs(ev.clientX - dragX) < 3 ? null :\n"
    "                [Math.min(drag, b), Math.min(D.n_bins, Math.max(drag, b) + 1)];\n"
    "            drag = null;\n"
    "            redraw();\n"
    "        });\n"
    "    }\n"
    "\n"
    "    redraw();\n"
    "    window.addEventListener('load', function () {\n"
    "        view.scrollTop = D.icicle ? 0 : view.scrollHeight;\n"
    "    });\n"
    "})();\n";

/* Stack ticks in order of stack, then time. */
static int cmp_tick(const void *va, const void *vb)
{
    const struct rep_agg_tick *a = va, *b = vb;
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

/* The names the stacks use, a compact index each (index_of, by name id), and their colours. */
static uint32_t put_names(FILE *out, const struct rep_agg *a, const struct rep_names *names,
                          uint32_t *index_of)
{
    uint32_t n = 0;
    fputs("\"names\":[", out);
    for (size_t i = 0; i < a->n_ids; i++) {
        uint32_t id = a->ids[i];
        if (index_of[id] != NO_INDEX)
            continue;
        index_of[id] = n;
        if (n++ > 0)
            fputc(',', out);
        rep_escape_json_script(out, rep_names_get(names, id));
    }
    fputs("]", out);
    for (int cool = 0; cool < 2; cool++) {
        fputs(cool ? ",\"cool\":[" : ",\"warm\":[", out);
        uint32_t k = 0;
        for (size_t i = 0; i < a->n_ids; i++) {
            uint32_t id = a->ids[i];
            if (index_of[id] != k)
                continue; /* a name's first use: in index order */
            const char *name = rep_names_get(names, id);
            fprintf(out, "%s\"%06" PRIx32 "\"", k++ > 0 ? "," : "",
                    (cool ? rep_svg_cool_color(name) : rep_svg_warm_color(name)) & 0xffffff);
        }
        fputc(']', out);
    }
    return n;
}

/* Each stack's samples per interval: [bin, weight, bin, weight, ...] in bin order. A sample
 * that stands for a long time (a wait in a wall profile, written when it ends) is spread
 * over the intervals its time covers, from its time on. */
static int put_series(FILE *out, const struct rep_agg *a, uint64_t t0, uint32_t n_bins,
                      uint64_t bin_ns)
{
    struct rep_agg_tick *tl = malloc((a->n_timeline ? a->n_timeline : 1) * sizeof(*tl));
    uint64_t *per = calloc(n_bins, sizeof(*per));
    if (tl == NULL || per == NULL) {
        free(tl);
        free(per);
        return CMN_E_NOMEM;
    }
    if (a->n_timeline > 0)
        memcpy(tl, a->timeline, a->n_timeline * sizeof(*tl));
    qsort(tl, a->n_timeline, sizeof(*tl), cmp_tick);
    fputs(",\"series\":[", out);
    size_t k = 0;
    for (size_t s = 0; s < a->n_stacks; s++) {
        for (; k < a->n_timeline && tl[k].stack == s; k++) {
            /* Times and spans come from the file: a sample before t0 goes to the first
             * interval, one past the end or spanning past it to the last. */
            uint64_t from = tl[k].time_ns > t0 ? tl[k].time_ns - t0 : 0, b0 = from / bin_ns;
            uint64_t span = tl[k].span_ns ? tl[k].span_ns - 1 : 0;
            uint64_t b1 = (span > UINT64_MAX - from ? UINT64_MAX : from + span) / bin_ns;
            b1 = b1 < n_bins ? b1 : n_bins - 1;
            b0 = b0 < n_bins ? b0 : n_bins - 1;
            uint64_t w = tl[k].weight, each = w / (b1 - b0 + 1);
            for (uint64_t b = b0; b < b1; b++, w -= each)
                per[b] += each;
            per[b1] += w;
        }
        fputs(s > 0 ? ",[" : "[", out);
        bool first = true;
        for (uint32_t b = 0; b < n_bins; b++) {
            if (per[b] == 0)
                continue;
            fprintf(out, "%s%" PRIu32 ",%" PRIu64, first ? "" : ",", b, per[b]);
            first = false;
            per[b] = 0;
        }
        fputc(']', out);
    }
    fputc(']', out);
    free(tl);
    free(per);
    return CMN_OK;
}

/* The data the script draws from (see the file comment). */
static int put_data(FILE *out, const struct rep_agg *a, const struct rep_names *names,
                    const struct rep_flame_opts *o, const char *label_key)
{
    uint32_t *index_of = malloc((names->n_names ? names->n_names : 1) * sizeof(*index_of));
    if (index_of == NULL)
        return CMN_E_NOMEM;
    for (uint32_t i = 0; i < names->n_names; i++)
        index_of[i] = NO_INDEX;
    fputs("{", out);
    put_names(out, a, names, index_of);
    uint64_t stacked = 0;
    fputs(",\"stacks\":[", out);
    for (size_t s = 0; s < a->n_stacks; s++) {
        const uint32_t *ids = rep_agg_stack_ids(a, s);
        fputs(s > 0 ? ",[" : "[", out);
        for (uint32_t f = 0; f < a->stacks[s].n_ids; f++)
            fprintf(out, f > 0 ? ",%" PRIu32 : "%" PRIu32, index_of[ids[f]]);
        fputc(']', out);
        stacked += a->stacks[s].weight;
    }
    fputs("],\"weights\":[", out);
    for (size_t s = 0; s < a->n_stacks; s++)
        fprintf(out, s > 0 ? ",%" PRIu64 : "%" PRIu64, a->stacks[s].weight);
    fputs("],\"off\":[", out);
    for (size_t s = 0; s < a->n_stacks; s++)
        fprintf(out, s > 0 ? ",%d" : "%d",
                a->stacks[s].off_weight > 0 && a->stacks[s].off_weight == a->stacks[s].weight);
    free(index_of);
    /* The run from its first sample to the end of its last, in HTML_BINS intervals. */
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (size_t k = 0; k < a->n_timeline; k++) {
        uint64_t time = a->timeline[k].time_ns, span = a->timeline[k].span_ns;
        uint64_t end = span > UINT64_MAX - time ? UINT64_MAX : time + span;
        t0 = a->timeline[k].time_ns < t0 ? a->timeline[k].time_ns : t0;
        t1 = end > t1 ? end : t1;
    }
    uint32_t n_bins = a->n_timeline > 0 && t1 > t0 ? HTML_BINS : 1;
    uint64_t bin_ns = n_bins > 1 ? (t1 - t0) / n_bins + 1 : 1;
    if (a->n_timeline == 0)
        t0 = 0;
    fprintf(out, "],\"n_bins\":%" PRIu32 ",\"bin_ns\":%" PRIu64, n_bins, bin_ns);
    if (put_series(out, a, t0, n_bins, bin_ns) != CMN_OK)
        return CMN_E_NOMEM;
    uint64_t total = a->total_weight;
    fprintf(out, ",\"total\":%" PRIu64 ",\"empty\":%" PRIu64 ",\"icicle\":%s", total,
            total > stacked ? total - stacked : 0, o->is_icicle ? "true" : "false");
    double per = a->timed_weight > 0 && !a->is_time_partial ? a->seconds / (double)a->timed_weight
                                                             : 0;
    fprintf(out, ",\"seconds_per_unit\":%.9g,\"time_kind\":\"%s\",\"label_key\":", per,
            a->is_wall ? "wall time" : "CPU time");
    if (label_key != NULL)
        rep_escape_json_script(out, label_key);
    else
        fputs("null", out);
    fputs("}", out);
    return CMN_OK;
}

int rep_out_html(FILE *out, const struct rep_agg *a, const struct rep_names *names,
                 const struct rep_flame_opts *o, const char *label_key)
{
    const char *title = o->title != NULL ? o->title : "Flame graph";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          out);
    rep_escape_xml(out, title, SIZE_MAX);
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<div id=\"pf-head\">\n"
                 "<div id=\"pf-bar\"><h1>", page_css);
    rep_escape_xml(out, title, SIZE_MAX);
    fputs("</h1><label for=\"pf-search-input\">Search</label>"
          "<input id=\"pf-search-input\" type=\"search\" autocomplete=\"off\" "
          "placeholder=\"regular expression or text\">",
          out);
    if (label_key != NULL) {
        fputs("<label for=\"pf-label\">", out);
        rep_escape_xml(out, label_key, SIZE_MAX);
        fputs("</label><select id=\"pf-label\"><option value=\"\">all</option></select>", out);
    }
    fputs("<button id=\"pf-reset\" style=\"display:none\">Reset zoom</button>"
          "<button id=\"pf-clear\" style=\"display:none\">Clear search</button>"
          "<span id=\"pf-hint\">click a frame to zoom; Esc resets</span></div>\n"
          "<div id=\"pf-sub\"></div>\n",
          out);
    if (a->n_timeline > 0)
        fputs("<svg id=\"pf-strip\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1200 48\" "
              "preserveAspectRatio=\"none\"></svg>\n<div id=\"pf-range\"></div>\n",
              out);
    fputs("</div>\n<div id=\"pf-view\"><svg id=\"pf-svg\" xmlns=\"http://www.w3.org/2000/svg\" "
          "data-pad=\"10\" data-width=\"1180\" data-charw=\"7.25\"></svg></div>\n"
          "<div id=\"pf-foot\"><span id=\"pf-details\">Click a frame to zoom, search to "
          "highlight</span><span id=\"pf-matched\"></span></div>\n"
          "<script type=\"application/json\" id=\"pf-data\">",
          out);
    int rc = put_data(out, a, names, o, label_key);
    if (rc != CMN_OK)
        return rc;
    fprintf(out, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", page_js);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
