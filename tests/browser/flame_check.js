// SPDX-License-Identifier: GPL-3.0-or-later
//
// Opens a flame graph written by `prof report --format svg` or `--format html` in headless
// Chromium (the Debian package, driven by playwright-core) from file://, offline, and checks
// what a user would see: every expected frame is drawn with its label, the page loads no
// external resource and throws no error, searching highlights exactly the matching frames
// and shows their share, clicking a frame zooms it to the full width (its callers stay,
// other frames hide) and resetting restores it. The HTML page also: opens with the root in
// the 900-pixel window, draws every frame's weight at every depth (frames down to a tenth
// of a pixel, narrower ones in a marked box per caller), and draws again for a time range
// dragged on its strip of the run and for a label value chosen. Run by
// tests/e2e/test_browser.c.
//
//   node flame_check.js FILE.svg|FILE.html SEARCH_REGEX ZOOM_FRAME NAME... [--shot OUT.png]
//
// Prints one line per check; exits 0 when all pass, 1 on a failed check, 2 on bad usage or
// when the browser cannot be started.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.PROF_CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'];

class CheckError extends Error {}

function check(cond, msg) {
    if (!cond)
        throw new CheckError(msg);
    console.log('ok: ' + msg);
}

function parseArgs(argv) {
    const a = { names: [] };
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === '--shot')
            a.shot = argv[++i];
        else if (a.file === undefined)
            a.file = argv[i];
        else if (a.search === undefined)
            a.search = argv[i];
        else if (a.zoom === undefined)
            a.zoom = argv[i];
        else
            a.names.push(argv[i]);
    }
    if (!a.file || !a.search || !a.zoom || a.names.length === 0) {
        console.error('usage: node flame_check.js FILE SEARCH_REGEX ZOOM_FRAME NAME... ' +
            '[--shot OUT.png]');
        process.exit(2);
    }
    return a;
}

// Every frame as the page shows it: name, data, visibility, geometry, classes, fill.
function readFrames(page) {
    return page.$$eval('g.f', (gs) => gs.map((g) => {
        const rect = g.querySelector('rect');
        const box = rect.getBoundingClientRect();
        return {
            name: g.querySelector('title').textContent.split('\n')[0],
            s: Number(g.getAttribute('data-s')),
            t: Number(g.getAttribute('data-t')),
            d: Number(g.getAttribute('data-d')),
            shown: getComputedStyle(g).display !== 'none' && box.width > 0,
            x: Number(rect.getAttribute('x')),
            w: Number(rect.getAttribute('width')),
            label: g.querySelector('text').textContent,
            hit: g.classList.contains('pf-hit'),
            fill: getComputedStyle(rect).fill,
        };
    }));
}

async function svgGeometry(page) {
    return page.$eval('#pf-svg', (svg) => ({
        total: Number(svg.getAttribute('data-total')),
        pad: Number(svg.getAttribute('data-pad')),
        width: Number(svg.getAttribute('data-width')),
    }));
}

// The share of the total that frames matching re cover, each sample once.
function expectedShare(frames, re, total) {
    const hits = frames.filter((f) => f.d > 0 && re.test(f.name));
    hits.sort((a, b) => a.s - b.s || b.t - a.t);
    let sum = 0;
    let end = -1;
    for (const f of hits) {
        if (f.s >= end) {
            sum += f.t;
            end = f.s + f.t;
        }
    }
    return { sum, pct: (100 * sum / total).toFixed(2) };
}

async function checkDrawn(page, names) {
    const frames = await readFrames(page);
    check(frames.length > 0, `${frames.length} frames drawn`);
    for (const name of names) {
        /* The widest frame of that name: a stack cut short (the first sample in a module,
         * before its unwind table was built) draws a narrow one of its own. */
        const f = frames.filter((x) => x.name === name && x.shown)
            .reduce((a, b) => (a === undefined || b.w > a.w ? b : a), undefined);
        check(f !== undefined, `frame ${name} is drawn`);
        check(f.w >= 20 && f.label.length > 0, `frame ${name} is ${f.w} wide with label ` +
            `"${f.label}"`);
    }
    const warm = frames.filter((f) => f.d > 0).every((f) => {
        const m = /rgb\((\d+), (\d+), (\d+)\)/.exec(f.fill);
        return m && Number(m[1]) >= Number(m[2]) && Number(m[2]) >= Number(m[3]);
    });
    check(warm, 'every frame has a warm colour (red >= green >= blue)');
    return frames;
}

async function search(page, isHtml, term) {
    if (isHtml) {
        await page.fill('#pf-search-input', term);
    } else {
        page.once('dialog', (d) => d.accept(term));
        await page.click('#pf-search');
    }
    await page.waitForFunction(() => document.getElementById('pf-matched').textContent !== '',
        null, { timeout: 5000 });
}

async function checkSearch(page, isHtml, term, geo) {
    await search(page, isHtml, term);
    const re = new RegExp(term);
    const frames = await readFrames(page);
    const wrong = frames.filter((f) => f.hit !== (f.d > 0 && re.test(f.name)));
    check(frames.some((f) => f.hit), `search /${term}/ highlights frames`);
    check(wrong.length === 0, `search /${term}/ highlights exactly the matching frames` +
        (wrong.length ? ` (wrong: ${wrong.map((f) => f.name).join(', ')})` : ''));
    const hitFill = frames.find((f) => f.hit).fill;
    check(frames.filter((f) => !f.hit && f.d > 0).every((f) => f.fill !== hitFill),
        `highlighted frames have their own colour (${hitFill})`);
    const want = expectedShare(frames, re, geo.total);
    const text = await page.textContent('#pf-matched');
    check(text.includes(want.pct + ' %') && text.includes(`(${want.sum} of ${geo.total}`),
        `matched share "${text}" is ${want.pct} %`);
    await page.keyboard.press('Escape');
    const after = await readFrames(page);
    check(after.every((f) => !f.hit), 'Esc clears the search');
}

async function checkZoom(page, name, geo) {
    const before = await readFrames(page);
    const target = before.find((f) => f.name === name && f.shown);
    check(target !== undefined, `frame ${name} to zoom into is drawn`);
    const index = before.indexOf(target);
    await page.locator('g.f').nth(index).click();
    const after = await readFrames(page);
    const z = after[index];
    check(Math.abs(z.w - geo.width) < 0.01 && Math.abs(z.x - geo.pad) < 0.01,
        `after a click ${name} is full width (${z.w} of ${geo.width}, was ${target.w})`);
    const outside = after.filter((f) => f.s + f.t <= target.s || f.s >= target.s + target.t);
    check(outside.length > 0 && outside.every((f) => !f.shown),
        `the ${outside.length} frames beside ${name} are hidden`);
    const callers = after.filter((f) => f.d < target.d && f.s <= target.s &&
        f.s + f.t >= target.s + target.t);
    check(callers.length === target.d && callers.every((f) => f.shown && f.w === geo.width),
        `its ${callers.length} callers stay, full width`);
    check(await page.isVisible('#pf-reset'), 'Reset zoom is offered');
    await page.click('#pf-reset');
    const reset = await readFrames(page);
    check(Math.abs(reset[index].w - target.w) < 0.01 && reset.every((f) => f.shown),
        `Reset zoom restores every frame (${name} ${reset[index].w} wide again)`);
}

// The root is in the window as the page opens (the screenshot shows it).
async function checkRootInView(page) {
    const box = await page.$eval('g.f[data-d="0"] rect', (r) => {
        const b = r.getBoundingClientRect();
        return { top: b.top, bottom: b.bottom, height: window.innerHeight };
    });
    check(box.top >= 0 && box.bottom <= box.height,
        `the root is in view as the page opens (${box.top.toFixed(0)}-` +
        `${box.bottom.toFixed(0)} of ${box.height} pixels)`);
}

// At every depth the frames drawn and the marked boxes of narrow ones cover the weight of
// every frame at that depth: nothing is left out.
async function checkCoverage(page, geo) {
    const rows = await page.evaluate(() => {
        const byDepth = {};
        const add = (d, key, v) => {
            byDepth[d] = byDepth[d] || { all: 0, drawn: 0 };
            byDepth[d][key] += v;
        };
        document.querySelectorAll('g.f').forEach((g) => {
            const d = Number(g.getAttribute('data-d'));
            const w = Number(g.querySelector('rect').getAttribute('width'));
            add(d, 'all', w);
            if (getComputedStyle(g).display !== 'none')
                add(d, 'drawn', w);
        });
        document.querySelectorAll('g.pf-narrow').forEach((g) => {
            if (getComputedStyle(g).display === 'none')
                return;
            const r = g.querySelector('rect');
            const y = Number(r.getAttribute('y'));
            const row = Array.from(document.querySelectorAll('g.f rect'))
                .find((x) => Math.abs(Number(x.getAttribute('y')) - y) < 0.5);
            if (row)
                add(Number(row.parentNode.getAttribute('data-d')), 'drawn',
                    Number(r.getAttribute('width')));
        });
        return byDepth;
    });
    let worst = 0;
    let hidden = 0;
    for (const d of Object.keys(rows)) {
        worst = Math.max(worst, rows[d].all - rows[d].drawn);
        hidden += rows[d].all - rows[d].drawn;
    }
    const n = await page.$$eval('g.pf-narrow', (gs) =>
        gs.filter((g) => getComputedStyle(g).display !== 'none').length);
    check(worst < 0.5, `every depth's weight is drawn (at worst ${worst.toFixed(3)} of ` +
        `${geo.width} units missing; ${n} marked boxes of narrow frames)`);
}

async function total(page) {
    return Number(await page.getAttribute('#pf-svg', 'data-total'));
}

// A drag on the strip of the run draws the graph of that time range; a click the whole run
// again.
async function checkTimeRange(page) {
    if (await page.$('#pf-strip') === null)
        return;
    const all = await total(page);
    const box = await page.$eval('#pf-strip', (s) => {
        const b = s.getBoundingClientRect();
        return { x: b.x, y: b.y, w: b.width, h: b.height };
    });
    await page.mouse.move(box.x + box.w * 0.25, box.y + box.h / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.w * 0.5, box.y + box.h / 2, { steps: 4 });
    await page.mouse.up();
    const part = await total(page);
    const text = await page.textContent('#pf-range');
    check(part > 0 && part < all && /time .* \u2013 /.test(text),
        `a drag over a quarter of the strip draws ${part} of ${all} samples ("${text}")`);
    await page.click('#pf-strip');
    check(await total(page) === all, 'a click on the strip draws the whole run again');
}

// Choosing a value of the label draws its samples only; "all" draws every one again.
async function checkLabelChoice(page) {
    if (await page.$('#pf-label') === null)
        return;
    const all = await total(page);
    const values = await page.$$eval('#pf-label option', (os) => os.map((o) => o.value));
    check(values.length > 2, `the label offers ${values.length - 1} values`);
    await page.selectOption('#pf-label', values[1]);
    const part = await total(page);
    const roots = await page.$$eval('g.f[data-d="1"]', (gs) => gs
        .filter((g) => getComputedStyle(g).display !== 'none')
        .map((g) => g.querySelector('title').textContent.split('\n')[0]));
    check(part > 0 && part < all && roots.length === 1 && roots[0].endsWith('=' + values[1]),
        `value ${values[1]} draws ${part} of ${all} samples, under ${roots.join(', ')}`);
    await page.selectOption('#pf-label', '');
    check(await total(page) === all, '"all" draws every sample again');
}

async function main() {
    const a = parseArgs(process.argv.slice(2));
    const file = path.resolve(a.file);
    const isHtml = /\.html?$/.test(file);
    const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prof-chromium-'));
    let context;
    try {
        context = await chromium.launchPersistentContext(profileDir, {
            executablePath: CHROMIUM, headless: true, args: ARGS,
            viewport: { width: 1280, height: 900 },
        });
    } catch (e) {
        console.error('browser: cannot start ' + CHROMIUM + ': ' + e.message.split('\n')[0]);
        fs.rmSync(profileDir, { recursive: true, force: true });
        process.exit(2);
    }
    let status = 0;
    try {
        const page = context.pages()[0] || await context.newPage();
        const external = [];
        const errors = [];
        await page.route('**/*', (route) => {
            const url = route.request().url();
            if (url.startsWith('file:'))
                return route.continue();
            external.push(url);
            return route.abort();
        });
        page.on('pageerror', (e) => errors.push(e.message));
        page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
        await page.goto('file://' + file, { waitUntil: 'load' });
        check(true, `opened ${path.basename(file)} from file://`);
        const geo = await svgGeometry(page);
        if (isHtml)
            await checkRootInView(page);
        await checkDrawn(page, a.names);
        if (a.shot) {
            await page.screenshot({ path: a.shot });
            console.log('screenshot: ' + a.shot);
        }
        await checkSearch(page, isHtml, a.search, geo);
        await checkZoom(page, a.zoom, geo);
        if (isHtml) {
            await checkCoverage(page, geo);
            await checkTimeRange(page);
            await checkLabelChoice(page);
        }
        check(external.length === 0, 'no external resource was requested' +
            (external.length ? ': ' + external.join(' ') : ''));
        check(errors.length === 0, 'no script error' + (errors.length ? ': ' + errors[0] : ''));
    } catch (e) {
        console.error(e instanceof CheckError ? 'FAILED: ' + e.message : 'ERROR: ' + e.stack);
        status = 1;
    } finally {
        await context.close();
        fs.rmSync(profileDir, { recursive: true, force: true });
    }
    process.exit(status);
}

main();
