// Shared by the console's browser tests (console.mjs, fork.mjs): the
// input, failures, polling, the API, the browser, and the checks every
// page passes (button label contrast, no sideways scroll).
import { chromium } from 'playwright-core';

// readInput reads the test's input, JSON on stdin.
export async function readInput() {
  return JSON.parse(await new Promise((resolve) => {
    let s = '';
    process.stdin.on('data', (c) => (s += c));
    process.stdin.on('end', () => resolve(s));
  }));
}

export class Failure extends Error {}
export const fail = (msg) => {
  throw new Failure(msg);
};

// until polls f until it returns a truthy value or timeout ms pass.
export async function until(what, f, timeout = 15000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await f();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  fail(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// apiOf calls baton dev's public API directly, to set runs up.
export function apiOf(base, token) {
  return async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await res.json();
    if (!res.ok) fail(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  };
}

// launch starts headless Chromium with one 1,280 × 800 page; problems
// collects CSP violations and page errors, dialogs the dialogs opened
// (and dismissed).
export async function launch(executablePath) {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const dialogs = [];
  const problems = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('dialog', async (d) => {
    dialogs.push(d.message());
    await d.dismiss();
  });
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { browser, page, dialogs, problems };
}

// buttonContrasts measures each visible button's label against what is
// behind it: the computed colours, the backgrounds of the button and its
// ancestors composited over white, and the opacity of each, as WCAG's
// contrast ratio. (Accessible names and axe do not see a label painted
// in its own background's colour.)
export const buttonContrasts = (page) => page.evaluate(() => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a), b: top.b * top.a + bottom.b * (1 - top.a), a: 1,
  });
  const white = { r: 255, g: 255, b: 255, a: 1 };
  const backdrop = (el) => {
    const chain = [];
    for (let n = el; n; n = n.parentElement) chain.push(parse(getComputedStyle(n).backgroundColor));
    return chain.reverse().reduce((c, bg) => (bg ? over(bg, c) : c), white);
  };
  const lum = (c) => {
    const f = (v) => {
      const x = v / 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  return [...document.querySelectorAll('button')].filter((b) => b.getClientRects().length > 0).map((b) => {
    const cs = getComputedStyle(b);
    const bg = backdrop(b);
    const fg = over(parse(cs.color), bg);
    let opacity = 1;
    for (let n = b; n; n = n.parentElement) opacity *= Number(getComputedStyle(n).opacity);
    const behind = b.parentElement ? backdrop(b.parentElement) : white;
    const seen = (c) => over({ ...c, a: opacity }, behind);
    const [l1, l2] = [lum(seen(fg)), lum(seen(bg))];
    return { label: b.textContent.trim().replace(/\s+/g, ' '), color: cs.color, background: cs.backgroundColor, ratio: (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05) };
  });
});

// checkContrast fails unless every visible button's label reaches
// 4.5:1, and returns the labels measured.
export async function checkContrast(page, where) {
  const buttons = await buttonContrasts(page);
  if (buttons.length === 0) fail(`no button on ${where}`);
  for (const b of buttons) {
    if (!(b.ratio >= 4.5)) fail(`on ${where}, the label of button "${b.label}" has contrast ${b.ratio.toFixed(2)}:1 (${b.color} on ${b.background}), below 4.5:1`);
  }
  return buttons.map((b) => b.label);
}

// checkWidth fails when the page scrolls sideways at the viewport's
// width, or (unless tablesMayScroll: a narrow window, where the steps
// table scrolls in its column by design) a table scrolls inside its
// column (its last columns hidden).
export async function checkWidth(page, where, { tablesMayScroll = false } = {}) {
  const { scroll, width, inner } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
    inner: [...document.querySelectorAll('.scroll')].filter((e) => e.scrollWidth > e.clientWidth).map((e) => `${e.scrollWidth} > ${e.clientWidth}`),
  }));
  if (scroll > width) fail(`${where} is ${scroll} px wide at a ${width} px viewport`);
  if (inner.length && !tablesMayScroll) fail(`on ${where}, a table is wider than its column: ${inner.join(', ')}`);
}
