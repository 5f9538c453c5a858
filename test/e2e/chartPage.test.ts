/**
 * The chart page of `xrate serve` in a real browser: headless Chromium (the Debian package
 * `chromium`, which `.ci/run` installs) driven by puppeteer-core loads `/` from the built
 * `xrate serve` over two generated logs replayed with their own metrics (two days, and a year at a
 * low rate), and checks that the address draws its range and follows every zoom and pan (keys,
 * drag, wheel; back and forward), that what is plotted is the chart route's answer, that markets
 * have distinct colours which the screenshots show, that a year draws at a period resolution with
 * the weight shares below, that the layout fits 1280 px to a phone's 390 px, that hovering shows a
 * point's provenance, and that without `?apikey=` the page prompts for the key. Screenshots go to
 * out/e2e/ (git-ignored).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChartData } from '../../src/replay/chart.js';
import {
  addressOf,
  boxOf,
  DAYS,
  drawn,
  launch,
  open,
  type PageState,
  replayed,
  type Served,
  serve,
  SHOTS,
  shotColors,
  state,
  stop,
  YEAR,
} from './chartPageKit.js';
import { ensureBuilt } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-page-'));
let days: Served;
let year: Served;
let browser: Browser;

beforeAll(async () => {
  ensureBuilt();
  const [d, y] = await Promise.all([replayed(dir, 'days', DAYS), replayed(dir, 'year', YEAR)]);
  [days, year] = await Promise.all([serve(d, join(dir, 'keys-days.sqlite')), serve(y, join(dir, 'keys-year.sqlite'))]);
  browser = await launch();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([stop(days), stop(year)]);
  rmSync(dir, { recursive: true, force: true });
});

async function api(s: Served, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${s.url}${path}`, { headers: { 'X-CoinAPI-Key': s.key } });
  return { status: res.status, body: await res.json() };
}

const seconds = (iso: string): number => Date.parse(iso) / 1000;
const spanOf = (q: Record<string, string>): number => seconds(q.to) - seconds(q.from);
/** Seconds of a resolution: 1 for `tick`, else the period's. */
const lengthOf = (r: string): number => {
  if (r === 'tick') return 1;
  const m = /^(\d+)(SEC|MIN|HRS|DAY)$/.exec(r);
  if (!m) throw new Error(`not a resolution: ${r}`);
  return Number(m[1]) * { SEC: 1, MIN: 60, HRS: 3600, DAY: 86400 }[m[2] as 'SEC'];
};

const RANGE = 'from=2024-03-01T12:00:00Z&to=2024-03-01T12:20:00Z';
const API_RANGE = 'time_start=2024-03-01T12:00:00Z&time_end=2024-03-01T12:20:00Z';

describe('the chart page', () => {
  it('serves the page, its assets and a favicon without a key, and asks for nothing that is not there', async () => {
    for (const [path, type] of [
      ['/', 'text/html; charset=utf-8'],
      ['/ui/chart.js', 'text/javascript; charset=utf-8'],
      ['/ui/helpers.js', 'text/javascript; charset=utf-8'],
      ['/ui/panel.js', 'text/javascript; charset=utf-8'],
      ['/ui/chart.css', 'text/css; charset=utf-8'],
      ['/ui/favicon.svg', 'image/svg+xml'],
      ['/ui/uPlot.iife.min.js', 'text/javascript; charset=utf-8'],
      ['/ui/uPlot.min.css', 'text/css; charset=utf-8'],
    ]) {
      const res = await fetch(`${days.url}${path}`);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 200, type });
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
    expect(await (await fetch(`${days.url}/ui/favicon.svg`)).text()).toMatch(/^<svg /);
    const failed: string[] = [];
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USD&${RANGE}`, { failed });
    expect(await page.$eval('link[rel=icon]', (l) => l.getAttribute('href'))).toBe('/ui/favicon.svg');
    // the favicon is fetched by the browser on its own time
    await page.waitForNetworkIdle({ idleTime: 300 });
    expect(failed).toEqual([]);
    await page.close();
  });

  it('draws the range of the address and plots the route answer: rate, markets, markers left out, candles', async () => {
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USDT&${RANGE}&period=5MIN`);
    const s = await state(page);
    expect(s.error).toBe(null);
    const want = (await api(days, `/v1/exchangerate/BTC/USDT/chart?${API_RANGE}&period_id=5MIN&points=${s.points}`))
      .body as PageState['data'];
    expect(s.points).toBe(Math.round((await boxOf(page, '#plots')).width));
    expect(s.data).toEqual(want);
    expect(want.time_start).toBe('2024-03-01T12:00:00.0000000Z');
    expect(want.time_end).toBe('2024-03-01T12:20:00.0000000Z');
    expect(want.resolution).toBe('tick');
    expect(s.plotted[0]).toEqual(want.ticks);
    expect(s.plotted[1]).toEqual(want.rate);
    expect(want.markets.length).toBe(3);
    for (const [i, m] of want.markets.entries()) expect(s.plotted[2 + i]).toEqual(m.price);
    expect(s.markers.length).toBe(want.exclusions.length);
    expect(s.markers.map((m) => m.color)).toEqual(want.exclusions.map((x) => s.colors[x.symbol_id]));
    expect(want.candles!.length).toBe(4);
    expect(s.candlesDrawn).toBe(true);
    // The key left the address once kept for the tab; the address holds the range drawn.
    expect(page.url()).not.toContain('apikey');
    expect(addressOf(page)).toEqual({ pair: 'BTC/USDT', from: '2024-03-01T12:00:00Z', to: '2024-03-01T12:20:00Z', period: '5MIN' });
    expect(await page.$eval('#status', (e) => e.textContent)).toBe(
      `1,201 ticks, 3 markets, ${want.exclusions.length.toLocaleString('en-US')} points left out, 4 candles.`,
    );
    expect(await page.$eval('#resolution', (e) => e.textContent)).toBe('Resolution: tick (1 s), 20 minutes');
    // The pair's inputs offer every asset with a rate from the base.
    await page.waitForFunction("document.querySelectorAll('#assets option').length > 0");
    const offered = await page.$$eval('#assets option', (os) => os.map((o) => o.getAttribute('value')));
    const all = (await api(days, '/v1/exchangerate/BTC')).body as { rates: { asset_id_quote: string }[] };
    expect(offered).toEqual(['BTC', ...all.rates.map((r) => r.asset_id_quote)].sort());
    await page.close();
  });

  it('says "1 market" for one', async () => {
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USD&${RANGE}`);
    const s = await state(page);
    expect(s.data.markets.length).toBe(1);
    expect(await page.$eval('#status', (e) => e.textContent)).toMatch(/^1,201 ticks, 1 market, /);
    await page.close();
  });

  it('gives each market its own colour, kept from draw to draw, and the screenshot shows each', async () => {
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USDT&${RANGE}`);
    const s = await state(page);
    const symbols = s.data.markets.map((m) => m.symbol_id);
    const colors = symbols.map((m) => s.colors[m]);
    expect(new Set(colors).size).toBe(symbols.length);
    const strokes = await page.evaluate(() =>
      (globalThis as unknown as { xrateChart: { plot: { series: { stroke: () => string }[] } } }).xrateChart.plot.series
        .slice(1)
        .map((x) => x.stroke()),
    );
    expect(strokes).toEqual(['#000', ...colors]);
    // the key under the plots names each market in its colour
    const key = await page.$$eval('#legend [data-symbol]', (es) =>
      es.map((e) => [e.getAttribute('data-symbol'), e.getAttribute('data-color')]),
    );
    for (const [i, m] of symbols.entries()) expect(key).toContainEqual([m, colors[i]]);
    const counts = await shotColors(page, 'chart-page-markets', await boxOf(page, '#chart .u-over'), ['#000000', ...colors]);
    for (const [i, c] of counts.entries()) expect(c, ['rate', ...symbols][i]).toBeGreaterThan(20);
    // zoomed: the same markets keep their colours
    const n = s.draws;
    await page.keyboard.press('+');
    const z = await drawn(page, n);
    for (const m of symbols) expect(z.colors[m]).toBe(s.colors[m]);
    await page.close();
  });

  it('zooms by keys: each step asks the route again, changes the resolution and the address; back and forward redraw', async () => {
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USDT&from=2024-03-01T06:00:00Z&to=2024-03-02T06:00:00Z`);
    let s = await state(page);
    expect(s.data.resolution).not.toBe('tick');
    const seen = [{ span: spanOf(addressOf(page)), resolution: s.data.resolution, address: page.url() }];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('+');
      s = await drawn(page, s.draws);
      expect(s.error).toBe(null);
      seen.push({ span: spanOf(addressOf(page)), resolution: s.data.resolution, address: page.url() });
      expect(await page.$eval('#resolution', (e) => e.getAttribute('data-resolution'))).toBe(s.data.resolution);
    }
    // halved each time, about the middle, each at the shortest resolution that fits the plot
    expect(seen.map((x) => x.span)).toEqual([86400, 43200, 21600, 10800, 5400]);
    expect(seen.at(-1)!.resolution).toBe('tick');
    const lengths = seen.map((x) => lengthOf(x.resolution));
    for (let i = 1; i < lengths.length; i++) expect(lengths[i]).toBeLessThanOrEqual(lengths[i - 1]);
    expect(new Set(lengths).size).toBeGreaterThanOrEqual(3);
    for (const x of seen.slice(0, -1)) expect(x.span / lengthOf(x.resolution)).toBeLessThanOrEqual(s.points);
    expect(new Set(seen.map((x) => x.address)).size).toBe(5);
    expect(addressOf(page)).toEqual({ pair: 'BTC/USDT', from: '2024-03-01T17:15:00Z', to: '2024-03-01T18:45:00Z' });
    // out, and a pan by the arrows
    await page.keyboard.press('-');
    s = await drawn(page, s.draws);
    expect(spanOf(addressOf(page))).toBe(10800);
    await page.keyboard.press('ArrowRight');
    s = await drawn(page, s.draws);
    expect(addressOf(page)).toEqual({ pair: 'BTC/USDT', from: '2024-03-01T17:15:00Z', to: '2024-03-01T20:15:00Z' });
    // back: the range before the pan, drawn again; forward: the pan again
    await page.goBack();
    s = await drawn(page, s.draws);
    expect(addressOf(page)).toMatchObject({ from: '2024-03-01T16:30:00Z', to: '2024-03-01T19:30:00Z' });
    expect(s.data.time_start).toBe('2024-03-01T16:30:00.0000000Z');
    await page.goForward();
    s = await drawn(page, s.draws);
    expect(s.data.time_start).toBe('2024-03-01T17:15:00.0000000Z');
    // reset: the range first drawn
    await page.keyboard.press('0');
    s = await drawn(page, s.draws);
    expect(addressOf(page)).toMatchObject({ from: '2024-03-01T06:00:00Z', to: '2024-03-02T06:00:00Z' });
    await page.close();
  });

  it('zooms by mouse: a drag across the chart zooms to it, the wheel zooms out, a shift-drag pans', async () => {
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USDT&from=2024-03-01T06:00:00Z&to=2024-03-01T12:00:00Z`);
    let s = await state(page);
    expect(s.data.resolution).not.toBe('tick');
    const over = await boxOf(page, '#chart .u-over');
    const y = over.y + over.height / 2;
    // drag across the second quarter of the plot: 07:30 to 09:00, which ticks can draw
    await page.mouse.move(over.x + over.width * 0.25, y);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.4, y, { steps: 4 });
    await page.mouse.move(over.x + over.width * 0.5, y, { steps: 4 });
    await page.mouse.up();
    s = await drawn(page, s.draws);
    let q = addressOf(page);
    expect(Math.abs(seconds(q.from) - seconds('2024-03-01T07:30:00Z'))).toBeLessThanOrEqual(120);
    expect(Math.abs(seconds(q.to) - seconds('2024-03-01T09:00:00Z'))).toBeLessThanOrEqual(120);
    expect(s.data.resolution).toBe('tick');
    const before = spanOf(q);
    // three notches of the wheel out, about the middle: one request once the wheel stops
    await page.mouse.move(over.x + over.width / 2, y);
    for (let i = 0; i < 3; i++) await page.mouse.wheel({ deltaY: 100 });
    s = await drawn(page, s.draws);
    q = addressOf(page);
    expect(spanOf(q) / before).toBeCloseTo(1.25 ** 3, 1);
    expect(s.data.resolution).not.toBe('tick');
    // shift-drag a fifth of the plot to the left: the range moves a fifth later
    const from = seconds(q.from);
    const span = spanOf(q);
    await page.keyboard.down('Shift');
    await page.mouse.move(over.x + over.width * 0.6, y);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.4, y, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    s = await drawn(page, s.draws);
    q = addressOf(page);
    expect(spanOf(q)).toBe(span);
    expect(Math.abs(seconds(q.from) - from - span / 5)).toBeLessThanOrEqual(span / 50);
    await page.close();
  });

  it('draws a year at a period resolution, with the weight-share panel below', async () => {
    const page = await open(browser, year.url, `/?apikey=${year.key}&pair=BTC/USD&from=2023-03-02T00:00:00Z&to=2024-03-01T00:00:00Z`);
    const s = await state(page);
    expect(s.error).toBe(null);
    const d = s.data;
    expect(d.resolution).not.toBe('tick');
    expect(d.ticks.length).toBeLessThanOrEqual(s.points);
    expect((366 * 86400) / lengthOf(d.resolution)).toBeLessThanOrEqual(s.points);
    expect(d.rate.filter((v) => v !== null).length).toBeGreaterThan(d.ticks.length / 2);
    expect(d.weight_share).not.toBe(null);
    const markets = d.weight_share!.map((m) => m.symbol_id);
    expect(markets.length).toBeGreaterThanOrEqual(2);
    const colors = markets.map((m) => s.colors[m]);
    expect(new Set(colors).size).toBe(markets.length);
    expect(await page.$eval('#resolution', (e) => e.textContent)).toContain(d.resolution);
    expect(await page.$eval('#shares canvas', (c) => c.getAttribute('width'))).not.toBe(null);
    const rate = await shotColors(page, 'chart-page-year', await boxOf(page, '#chart .u-over'), ['#000000']);
    expect(rate[0]).toBeGreaterThan(200);
    await page.close();
  });

  it('stacks the weight shares below the rate at a period resolution, each market in its colour, the two plots lined up', async () => {
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USDT&from=2024-03-01T06:00:00Z&to=2024-03-02T06:00:00Z`);
    const s = await state(page);
    expect(s.data.resolution).not.toBe('tick');
    expect(s.data.markets).toEqual([]);
    expect(s.data.weight_share!.length).toBeGreaterThanOrEqual(3);
    expect(s.data.markets_used!.length).toBe(s.data.ticks.length);
    // the markets with the largest shares over the day: each found in the screenshot's shares plot
    const total = (m: { share: (number | null)[] }): number => m.share.reduce<number>((a, v) => a + (v ?? 0), 0);
    const main = s.data.weight_share!.filter((m) => total(m) > s.data.ticks.length * 0.05);
    expect(main.length).toBeGreaterThanOrEqual(2);
    const colors = main.map((m) => s.colors[m.symbol_id]);
    expect(new Set(Object.values(s.colors)).size).toBe(Object.keys(s.colors).length);
    const plot = await boxOf(page, '#chart .u-over');
    const shares = await boxOf(page, '#shares .u-over');
    expect(shares.x).toBeCloseTo(plot.x, 0);
    expect(shares.width).toBeCloseTo(plot.width, 0);
    const counts = await shotColors(page, 'chart-page-shares', shares, colors);
    for (const [i, c] of counts.entries()) expect(c, main[i].symbol_id).toBeGreaterThan(200);
    expect(await page.$eval('#shares-note', (e) => e.textContent)).toBe('');
    await page.close();
  });

  it('fits the window from 1600 px to a phone: no horizontal overflow, the panel scrolls inside, stacked on a phone', async () => {
    for (const [width, height] of [
      [1600, 900],
      [1280, 800],
      [1024, 768],
      [390, 844],
    ]) {
      const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USDT&${RANGE}`, { width, height });
      // hover a point so that the panel holds a provenance
      const over = await boxOf(page, '#chart .u-over');
      await page.mouse.move(over.x + over.width / 2, over.y + over.height / 2);
      await page.waitForFunction('window.xrateChart.hoverIndex !== null');
      const fit = (await page.evaluate(`(() => {
        const panel = document.getElementById('provenance').getBoundingClientRect();
        const plots = document.getElementById('plots').getBoundingClientRect();
        return {
          overflow: document.documentElement.scrollWidth - window.innerWidth,
          panelRight: panel.right,
          plotsRight: plots.right,
          stacked: panel.top >= plots.bottom,
          scrolls: getComputedStyle(document.getElementById('provenance')).overflow,
        };
      })()`)) as { overflow: number; panelRight: number; plotsRight: number; stacked: boolean; scrolls: string };
      expect({ width, ...fit }).toEqual({
        width,
        overflow: 0,
        panelRight: fit.panelRight,
        plotsRight: fit.plotsRight,
        stacked: width < 800,
        scrolls: 'auto',
      });
      expect(fit.panelRight).toBeLessThanOrEqual(width);
      expect(fit.plotsRight).toBeLessThanOrEqual(width);
      await page.screenshot({ path: join(SHOTS, `chart-page-${width}.png`), fullPage: true });
      await page.close();
    }
  });

  it('shows the provenance of the hovered point', async () => {
    const page = await open(browser, days.url, `/?apikey=${days.key}&pair=BTC/USDT&${RANGE}`);
    const s0 = await state(page);
    const want = s0.data as ChartData;
    const target = want.point_provenance.findIndex((p, i) => i > 600 && p >= 0 && want.rate[i] !== null);
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
    for (const m of leg.used) expect(panel.text).toContain(m.symbol_id);
    for (const m of leg.excluded) expect(panel.text).toContain(`${m.symbol_id}${m.reason}${m.detail ?? ''}`);
    await page.screenshot({ path: join(SHOTS, 'chart-page-hover.png') });
    await page.close();
  });

  it('prompts for the key when the address has none, and says when the key is refused', async () => {
    const asked: string[] = [];
    const page = await open(browser, days.url, '/?pair=BTC/USD', {
      onDialog: (m) => {
        asked.push(m);
        return days.key;
      },
    });
    expect(asked).toEqual(['API key of this xrate service (sent as the X-CoinAPI-Key header):']);
    const s = await state(page);
    expect(s.error).toBe(null);
    // The default range: the hour before the last tick, written into the address.
    expect(s.data.time_start).toBe('2024-03-03T02:19:28.0000000Z');
    expect(s.data.time_end).toBe('2024-03-03T03:19:28.0000000Z');
    expect(addressOf(page)).toEqual({ pair: 'BTC/USD', from: '2024-03-03T02:19:28Z', to: '2024-03-03T03:19:28Z' });
    expect(s.plotted[1]).toEqual(((await api(days, `/v1/exchangerate/BTC/USD/chart?points=${s.points}`)).body as ChartData).rate);
    await page.close();

    const wrong = await open(browser, days.url, '/', { onDialog: () => 'not-a-key' });
    expect((await state(wrong)).error).toMatch(/key/i);
    expect(await wrong.$eval('#status', (e) => e.textContent)).toMatch(/^401: /);
    await wrong.close();
  });
});
