// SPDX-License-Identifier: GPL-3.0-or-later
//
// Opens a flame graph written by `prof report --format svg` or `--format html` in headless
// Chromium (the Debian package, driven by playwright-core) from file://, offline, and checks
// what a user would see: every expected frame is drawn with its label, the page loads no
// external resource and throws no error, searching highlights exactly the matching frames
// and shows their share, clicking a frame zooms it to the full width (its callers stay,
// other frames hide) and resetting restores it. Run by tests/e2e/test_browser.c.
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
        await checkDrawn(page, a.names);
        if (a.shot) {
            await page.screenshot({ path: a.shot, fullPage: isHtml });
            console.log('screenshot: ' + a.shot);
        }
        await checkSearch(page, isHtml, a.search, geo);
        await checkZoom(page, a.zoom, geo);
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
