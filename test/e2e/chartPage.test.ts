/**
 * The chart page of `xrate serve` in a real browser: headless Chromium (the Debian package
 * `chromium`, which `.ci/run` installs) driven by puppeteer-core loads `/` from the built
 * `xrate serve` over a replayed demo database, waits for the chart, and checks that what it plots
 * is the chart API's answer, that hovering a point shows that point's provenance, and that
 * without `?apikey=` the page prompts for the key. Screenshots go to out/e2e/ (git-ignored).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../../src/cli/plot/png.js';
import type { RateExplanation } from '../../src/core/provenance.js';
import type { ChartData } from '../../src/replay/chart.js';
import { type BinProcess, binStart, cli, DEMO, ensureBuilt, ROOT } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-page-'));
const SHOTS = join(ROOT, 'out', 'e2e');
let server: BinProcess;
let url: string;
let key: string;
let browser: Browser;

/** What the page exposes as `window.xrateChart`. */
interface PageState {
  ready: boolean;
  error: string | null;
  data: ChartData;
  plotted: (number | null)[][];
  hoverIndex: number | null;
  shown: RateExplanation | null;
}

beforeAll(async () => {
  const chromium = findChromium();
  if (!chromium)
    throw new Error('these tests need headless Chromium: install the Debian package "chromium" (.ci/run does), or set XRATE_CHROMIUM');
  ensureBuilt();
  const db = join(dir, 'demo.sqlite');
  expect((await cli('replay', DEMO, '--db', db, '--quiet')).code).toBe(0);
  server = binStart(['serve', '--db', db, '--keys', join(dir, 'keys.sqlite'), '--port', '0']);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on (http:\/\/\S+)[\s\S]*^([0-9A-F]{8}-[0-9A-F-]{27})$/m.exec(server.out());
    if (m) {
      [, url, key] = m;
      break;
    }
    if (Date.now() > deadline) throw new Error(`xrate serve did not start:\n${server.out()}\n${server.err()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  mkdirSync(SHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  server?.proc.kill('SIGTERM');
  if (server) await server.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function api(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}${path}`, { headers: { 'X-CoinAPI-Key': key } });
  return { status: res.status, body: await res.json() };
}

async function open(path: string, onDialog?: (message: string) => string): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1600, height: 800 });
  if (onDialog) page.on('dialog', (d) => void d.accept(onDialog(d.type() === 'prompt' ? d.message() : `not a prompt: ${d.type()}`)));
  await page.goto(`${url}${path}`);
  await page.waitForFunction('window.xrateChart && (window.xrateChart.ready || window.xrateChart.error)', { timeout: 60_000 });
  return page;
}

const state = (page: Page): Promise<PageState> =>
  page.evaluate(() => {
    const s = (globalThis as unknown as { xrateChart: PageState }).xrateChart;
    return { ready: s.ready, error: s.error, data: s.data, plotted: s.plotted, hoverIndex: s.hoverIndex, shown: s.shown };
  });

const RANGE = 'time_start=2024-03-01T04:20:00Z&time_end=2024-03-01T04:40:00Z&period_id=5MIN';

describe('the chart page', () => {
  it('serves the page and its assets without a key, from the installed uplot package', async () => {
    for (const [path, type] of [
      ['/', 'text/html; charset=utf-8'],
      ['/ui/chart.js', 'text/javascript; charset=utf-8'],
      ['/ui/chart.css', 'text/css; charset=utf-8'],
      ['/ui/uPlot.iife.min.js', 'text/javascript; charset=utf-8'],
      ['/ui/uPlot.min.css', 'text/css; charset=utf-8'],
    ]) {
      const res = await fetch(`${url}${path}`);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 200, type });
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
    expect(await (await fetch(`${url}/ui/uPlot.iife.min.js`)).text()).toContain('uPlot');
  });

  it('plots what the chart API answers: rate, markets, markers left out, candles', async () => {
    const want = (await api(`/v1/exchangerate/BTC/USD/chart?${RANGE}`)).body as ChartData;
    const page = await open(`/?apikey=${key}&pair=BTC/USD&${RANGE}`);
    const s = await state(page);
    expect(s.error).toBe(null);
    expect(s.data).toEqual(want);
    expect(s.plotted[0]).toEqual(want.ticks);
    expect(s.plotted[1]).toEqual(want.rate);
    for (const [i, m] of want.markets.entries()) expect(s.plotted[2 + i]).toEqual(m.price);
    const markers = s.plotted.slice(2 + want.markets.length);
    expect(markers.length).toBe(new Set(want.exclusions.map((x) => `${x.reason} ${x.symbol_id}`)).size);
    expect(markers.flat().filter((v) => v !== null).length).toBe(want.exclusions.length);
    expect(want.candles!.length).toBe(4);
    // The key left the address once kept for the tab.
    expect(page.url()).not.toContain('apikey');
    expect(await page.$eval('#status', (e) => e.textContent)).toBe(
      `1201 ticks, 1 markets, ${want.exclusions.length} points left out, 4 candles.`,
    );
    // The pair's inputs offer every asset with a rate from the base.
    await page.waitForFunction("document.querySelectorAll('#assets option').length > 0");
    const offered = await page.$$eval('#assets option', (os) => os.map((o) => o.getAttribute('value')));
    const all = (await api('/v1/exchangerate/BTC')).body as { rates: { asset_id_quote: string }[] };
    expect(offered).toEqual(['BTC', ...all.rates.map((r) => r.asset_id_quote)].sort());
    expect(offered).toContain('ETH');
    await page.screenshot({ path: join(SHOTS, 'chart-page.png') });
    await page.close();
  });

  it('shows the provenance of the hovered point', async () => {
    const want = (await api(`/v1/exchangerate/BTC/USD/chart?${RANGE}`)).body as ChartData;
    const page = await open(`/?apikey=${key}&pair=BTC/USD&${RANGE}`);
    const target = 700;
    const at = await page.evaluate((i) => {
      type Plot = { over: { getBoundingClientRect(): { left: number; top: number } }; valToPos(v: number, s: string): number };
      const s = (globalThis as unknown as { xrateChart: { plot: Plot; data: ChartData } }).xrateChart;
      const box = s.plot.over.getBoundingClientRect();
      return { x: box.left + s.plot.valToPos(s.data.ticks[i], 'x'), y: box.top + s.plot.valToPos(s.data.rate[i]!, 'y') };
    }, target);
    await page.mouse.move(at.x, at.y);
    await page.waitForFunction('window.xrateChart.hoverIndex !== null');
    const s = await state(page);
    const i = s.hoverIndex!;
    expect(Math.abs(i - target)).toBeLessThanOrEqual(3);
    const e = want.provenance[want.point_provenance[i]];
    expect(s.shown).toEqual(e);
    const panel = await page.$eval('#provenance', (p) => ({
      index: (p as unknown as { dataset: Record<string, string> }).dataset.index,
      text: p.textContent ?? '',
    }));
    expect(panel.index).toBe(String(i));
    expect(panel.text).toContain(`as of tick ${e.tick}`);
    const leg = e.legs[0].explanation;
    expect(leg.used.length).toBeGreaterThan(0);
    expect(leg.excluded.length).toBeGreaterThan(0);
    for (const m of leg.used) expect(panel.text).toContain(m.symbol_id);
    for (const m of leg.excluded) expect(panel.text).toContain(`${m.symbol_id}${m.reason}${m.detail ?? ''}`);
    await page.screenshot({ path: join(SHOTS, 'chart-page-hover.png') });
    await page.close();
  });

  it('prompts for the key when the address has none, and says when the key is refused', async () => {
    const asked: string[] = [];
    const page = await open('/?pair=BTC/USD', (m) => {
      asked.push(m);
      return key;
    });
    expect(asked).toEqual(['API key of this xrate service (sent as the X-CoinAPI-Key header):']);
    const s = await state(page);
    expect(s.error).toBe(null);
    // The default range: the hour before the last tick.
    expect(s.data.time_start).toBe('2024-03-01T04:54:11.0000000Z');
    expect(s.data.time_end).toBe('2024-03-01T05:54:11.0000000Z');
    expect(s.plotted[1]).toEqual(((await api('/v1/exchangerate/BTC/USD/chart')).body as ChartData).rate);
    await page.close();

    const wrong = await open('/', () => 'not-a-key');
    expect((await state(wrong)).error).toMatch(/key/i);
    expect(await wrong.$eval('#status', (e) => e.textContent)).toMatch(/^401: /);
    await wrong.close();
  });
});
