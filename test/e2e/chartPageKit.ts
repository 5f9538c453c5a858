/**
 * What the chart page's browser tests share: generated logs replayed with their own metrics, a real
 * `xrate serve` over each database, headless Chromium (the Debian package `chromium`) driven by
 * puppeteer-core, the page's exposed state, and the colours counted in a screenshot.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { expect } from 'vitest';
import { writeLog, type GenOptions } from '../../scripts/gen-log.js';
import { findChromium } from '../../src/cli/plot/png.js';
import type { RateExplanation } from '../../src/core/provenance.js';
import type { ChartData } from '../../src/replay/chart.js';
import { type BinProcess, binStart, cli, ROOT } from './helpers.js';

/** Screenshots of the browser tests (git-ignored). */
export const SHOTS = join(ROOT, 'out', 'e2e');

/** Two days of six markets' quotes in three pairs (BTC/USDT has three markets at once). */
export const DAYS: GenOptions = {
  seed: 11,
  events: 80_000,
  exchanges: 5,
  assets: 4,
  start: '2024-03-01T00:00:00Z',
  rate: 80_000 / 172_800,
};

/** A year at a low rate (a few events an hour): BTC/USD has a rate on most days. */
export const YEAR: GenOptions = {
  seed: 12,
  events: 20_000,
  exchanges: 5,
  assets: 4,
  start: '2023-03-01T00:00:00Z',
  rate: 20_000 / 31_536_000,
};

/** Writes the log of `opts` and replays it (own metrics stored, as by default) into `dir/name.sqlite`. */
export async function replayed(dir: string, name: string, opts: GenOptions): Promise<string> {
  const log = join(dir, `${name}.ndjson`);
  const db = join(dir, `${name}.sqlite`);
  await writeLog(log, opts);
  const r = await cli('replay', log, '--db', db, '--quiet');
  expect(r.code, r.err).toBe(0);
  return db;
}

/** A running `xrate serve` over a database: its address and the key it made. */
export interface Served {
  server: BinProcess;
  url: string;
  key: string;
}

/** Starts `xrate serve` over `db` on a free port, with a development key. */
export async function serve(db: string, keys: string): Promise<Served> {
  const server = binStart(['serve', '--db', db, '--keys', keys, '--port', '0']);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on (http:\/\/\S+)[\s\S]*^([0-9A-F]{8}-[0-9A-F-]{27})$/m.exec(server.out());
    if (m) return { server, url: m[1], key: m[2] };
    if (Date.now() > deadline) throw new Error(`xrate serve did not start:\n${server.out()}\n${server.err()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops a server started by {@link serve}. */
export async function stop(s: Served | undefined): Promise<void> {
  if (!s) return;
  s.server.proc.kill('SIGTERM');
  await s.server.exited;
}

/** Headless Chromium, or a failure saying how to get it. */
export async function launch(): Promise<Browser> {
  const chromium = findChromium();
  if (!chromium)
    throw new Error('these tests need headless Chromium: install the Debian package "chromium" (.ci/run does), or set XRATE_CHROMIUM');
  mkdirSync(SHOTS, { recursive: true });
  return puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
}

/** What the page exposes as `window.xrateChart`. */
export interface PageState {
  ready: boolean;
  error: string | null;
  draws: number;
  data: ChartData & {
    resolution: string;
    weight_share: { symbol_id: string; exchange_id: string; share: (number | null)[] }[] | null;
    markets_used: (number | null)[] | null;
  };
  plotted: (number | null)[][];
  hoverIndex: number | null;
  shown: RateExplanation | null;
  query: { base: string; quote: string; from: string; to: string; period: string };
  points: number;
  colors: Record<string, string>;
  markers: { t: number; price: number; reason: string; symbol_id: string; color: string }[];
  candlesDrawn: boolean;
}

export const state = (page: Page): Promise<PageState> =>
  page.evaluate(() => {
    const s = (globalThis as unknown as { xrateChart: PageState & { plot: unknown; shares: unknown } }).xrateChart;
    const { plot: _p, shares: _s, ...rest } = s;
    return JSON.parse(JSON.stringify(rest)) as PageState;
  });

/** Waits until the page has drawn more than `n` times (or failed). */
export async function drawn(page: Page, n: number): Promise<PageState> {
  await page.waitForFunction(`window.xrateChart && (window.xrateChart.draws > ${n} || window.xrateChart.error)`, { timeout: 60_000 });
  return state(page);
}

/** Opens `path` of `url` at a window of `width` x `height`; `onDialog` answers prompts. */
export async function open(
  browser: Browser,
  url: string,
  path: string,
  opts: { width?: number; height?: number; onDialog?: (message: string) => string; failed?: string[] } = {},
): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: opts.width ?? 1280, height: opts.height ?? 800 });
  if (opts.onDialog) {
    const answer = opts.onDialog;
    page.on('dialog', (d) => void d.accept(answer(d.type() === 'prompt' ? d.message() : `not a prompt: ${d.type()}`)));
  }
  const failed = opts.failed;
  if (failed) page.on('response', (r) => void (r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`)));
  await page.goto(`${url}${path}`);
  await drawn(page, 0);
  return page;
}

/** The page's address as a query: pair, from, to, period. */
export function addressOf(page: Page): Record<string, string> {
  return Object.fromEntries(new URL(page.url()).searchParams);
}

/** Where an element lies in the page, CSS pixels. */
export async function boxOf(page: Page, selector: string): Promise<{ x: number; y: number; width: number; height: number }> {
  const box = await (await page.$(selector))?.boundingBox();
  if (!box) throw new Error(`no ${selector} on the page`);
  return box;
}

/**
 * Saves a screenshot as `SHOTS/name.png` and counts, in its part `box`, the pixels within a small
 * distance of each colour of `colors` (`#rrggbb`): the screenshot decoded by the browser itself.
 */
export async function shotColors(
  page: Page,
  name: string,
  box: { x: number; y: number; width: number; height: number },
  colors: string[],
): Promise<number[]> {
  const png = await page.screenshot({ path: join(SHOTS, `${name}.png`), encoding: 'base64' });
  const counts = await page.evaluate(`(${COUNT_COLORS})(${JSON.stringify([png, box, colors])})`);
  return counts as number[];
}

/** Run in the page: decodes the screenshot, and counts the pixels of `box` near each colour. */
const COUNT_COLORS = `async ([data, b, cs]) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + data;
  await img.decode();
  const k = window.devicePixelRatio;
  const c = document.createElement('canvas');
  c.width = img.width;
  c.height = img.height;
  const ctx = c.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(Math.round(b.x * k), Math.round(b.y * k), Math.round(b.width * k), Math.round(b.height * k)).data;
  const rgb = cs.map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
  const counts = cs.map(() => 0);
  for (let i = 0; i < px.length; i += 4) {
    rgb.forEach(([r, g, bl], j) => {
      if (Math.abs(px[i] - r) + Math.abs(px[i + 1] - g) + Math.abs(px[i + 2] - bl) <= 24) counts[j]++;
    });
  }
  return counts;
}`;
