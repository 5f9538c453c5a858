/**
 * `xrate plot`: an SVG drawn from the demo log (the same bytes twice, and from its replay
 * database), a PNG drawn by headless Chromium (the Debian package `chromium`: `.ci/run`
 * installs it), and the exit codes and messages of bad usage and bad input; charts of 30 days
 * (and of 4 hours) by period from a generated 30-day log replayed (own metrics stored), to SVG and
 * PNG, with the weight-share panel; several pairs compared.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../../src/cli/plot/png.js';
import { writeLog } from '../../scripts/gen-log.js';
import { cli, DEMO } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-plot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string): string => join(dir, name);
const RANGE = ['--pair', 'BTC/USD', '--from', '2024-03-01T04:10:00Z', '--to', '2024-03-01T04:40:00Z'];

beforeAll(async () => {
  expect((await cli('replay', DEMO, '--db', p('demo.sqlite'), '--quiet')).code).toBe(0);
  // 30 days at a low rate (about 40,000 events over four exchanges), with xrate's own metrics.
  await writeLog(p('month.ndjson'), { seed: 5, events: 40_000, rate: 0.015, exchanges: 4, assets: 5, start: '2024-03-01T00:00:00Z' });
  expect((await cli('replay', p('month.ndjson'), '--db', p('month.sqlite'), '--quiet')).code).toBe(0);
}, 180_000);

describe('xrate plot', () => {
  it('writes an SVG with axes, UTC labels, legend, lines, markers and candles: the same bytes each time, and from the database', async () => {
    const a = await cli('plot', DEMO, ...RANGE, '--period', '5MIN', '--out', p('a.svg'));
    expect(a.code).toBe(0);
    expect(a.err).toBe(`xrate plot: wrote ${p('a.svg')} (1801 ticks at tick resolution, 1 market, 1062 points left out, 6 candles)\n`);
    const svg = readFileSync(p('a.svg'), 'utf8');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="960" height="540"')).toBe(true);
    expect(svg).toContain('>BTC/USD, 2024-03-01 04:10:00 to 04:40:00 UTC</text>');
    for (const label of [
      '04:10',
      '04:20',
      '04:30',
      '04:40',
      'time (UTC)',
      'USD per BTC',
      'BTC/USD rate',
      'KRAKEN_SPOT_BTC_USD',
      'left out: rank',
      'left out: not_legitimate',
      '5MIN candles',
    ])
      expect(svg).toContain(`>${label}</text>`);
    expect(await cli('plot', DEMO, ...RANGE, '--period', '5MIN', '--out', p('b.svg'))).toMatchObject({ code: 0 });
    expect(readFileSync(p('b.svg'), 'utf8')).toBe(svg);
    expect(await cli('plot', p('demo.sqlite'), ...RANGE, '--period', '5MIN', '--out', p('c.svg'))).toMatchObject({ code: 0 });
    expect(readFileSync(p('c.svg'), 'utf8')).toBe(svg);
  });

  it('writes a PNG of the chart through headless Chromium', async () => {
    if (!findChromium()) throw new Error('headless Chromium is needed: install the Debian package "chromium" (.ci/run does)');
    const r = await cli('plot', DEMO, ...RANGE, '--out', p('d/chart.png'), '--width', '640', '--height', '400');
    expect(r.code).toBe(0);
    const png = readFileSync(p('d/chart.png'));
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.readUInt32BE(16)).toBe(640); // IHDR width
    expect(png.readUInt32BE(20)).toBe(400); // IHDR height
  });

  it('refuses bad usage (exit 2) and data it cannot chart (exit 1), with a message', async () => {
    const cases: [string[], number, string][] = [
      [[DEMO, ...RANGE], 2, 'xrate: missing --out FILE.svg or FILE.png\n'],
      [[DEMO, ...RANGE, '--out', p('x.pdf')], 2, `xrate: --out: "${p('x.pdf')}" must end in .svg or .png\n`],
      [
        [DEMO, '--pair', 'BTC', '--from', '2024-03-01T04:10:00Z', '--to', '2024-03-01T04:40:00Z', '--out', p('x.svg')],
        2,
        'xrate: --pair: "BTC" is not BASE/QUOTE (e.g. BTC/USD)\n',
      ],
      [
        [DEMO, '--pair', 'BTC/USD', '--from', 'noon', '--to', '2024-03-01T04:40:00Z', '--out', p('x.svg')],
        2,
        'xrate: --from: not an ISO 8601 time: "noon" (e.g. 2024-03-02T04:30:20.5Z)\n',
      ],
      [
        [
          p('month.sqlite'),
          '--pair',
          'BTC/USD',
          '--from',
          '2014-01-01T00:00:00Z',
          '--to',
          '2024-03-02T00:00:00Z',
          '--width',
          '320',
          '--out',
          p('x.svg'),
        ],
        2,
        'xrate: --width 320: the range needs 372 points even at 10DAY',
      ],
      [[DEMO, ...RANGE, '--period', '7MIN', '--out', p('x.svg')], 2, 'xrate: unknown period_id "7MIN"'],
      [
        [DEMO, '--pair', 'FOO/USD', '--from', '2024-03-01T04:10:00Z', '--to', '2024-03-01T04:40:00Z', '--out', p('x.svg')],
        1,
        'xrate: no rate for FOO/USD between 2024-03-01T04:10:00.0000000Z and 2024-03-01T04:40:00.0000000Z\n',
      ],
      [[p('missing.ndjson'), ...RANGE, '--out', p('x.svg')], 1, `xrate: cannot open "${p('missing.ndjson')}": no such file\n`],
    ];
    for (const [args, code, message] of cases) {
      const r = await cli('plot', ...args);
      expect({ args, code: r.code }).toEqual({ args, code });
      expect(r.err.startsWith(message)).toBe(true);
    }
    expect(existsSync(p('x.svg'))).toBe(false);
  });
});

describe('xrate plot over 30 days', () => {
  const MONTH = ['--pair', 'BTC/USD', '--from', '2024-03-01T00:00:00Z', '--to', '2024-03-31T00:00:00Z'];

  it('draws by period: the closes, and under them the weight shares and the markets used; the line says the resolution', async () => {
    const r = await cli('plot', p('month.sqlite'), ...MONTH, '--out', p('month.svg'));
    expect(r.code).toBe(0);
    // 960 px: 720 hourly points (1440 half-hours would not fit).
    expect(r.err).toMatch(/xrate plot: wrote .*month\.svg \(720 points at 1HRS resolution, \d+ candles, weight shares of 3 markets\)\n$/);
    expect(r.err).toContain('xrate plot: note: the range holds 2592001 ticks, more than the 7200 charted one by one');
    const svg = readFileSync(p('month.svg'), 'utf8');
    for (const label of [
      'BTC/USD, 2024-03-01 00:00:00 to 2024-03-31 00:00:00 UTC, 1HRS buckets',
      'BTC/USD rate',
      'weight share',
      'markets used (right)',
    ])
      expect(svg).toContain(`${label}</text>`);
    expect(svg).toContain('_SPOT_BTC_USD share</text>');
    expect((await cli('plot', p('month.sqlite'), ...MONTH, '--out', p('month2.svg'))).code).toBe(0);
    expect(readFileSync(p('month2.svg'), 'utf8')).toBe(svg);
    // Fewer pixels, longer buckets.
    const narrow = await cli('plot', p('month.sqlite'), ...MONTH, '--width', '400', '--out', p('narrow.svg'));
    expect(narrow.err).toContain('(360 points at 2HRS resolution');
  });

  it('draws it as a PNG through headless Chromium', async () => {
    if (!findChromium()) throw new Error('headless Chromium is needed: install the Debian package "chromium" (.ci/run does)');
    const r = await cli('plot', p('month.sqlite'), ...MONTH, '--out', p('month.png'), '--width', '800', '--height', '500');
    expect(r.code).toBe(0);
    expect(r.err).toContain('points at 1HRS resolution');
    const png = readFileSync(p('month.png'));
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([800, 500]);
  });

  it('draws four hours at 5MIN, no longer refused, and compares pairs as % changes', async () => {
    const four = await cli(
      'plot',
      p('month.sqlite'),
      '--pair',
      'BTC/USD',
      '--from',
      '2024-03-02T00:00:00Z',
      '--to',
      '2024-03-02T04:00:00Z',
      '--period',
      '5MIN',
      '--out',
      p('four.svg'),
    );
    expect(four.code).toBe(0);
    expect(four.err).toMatch(/\(48 points at 5MIN resolution, \d+ candles, weight shares of 3 markets\)\n$/);
    const two = await cli('plot', p('month.sqlite'), '--pair', 'BTC/USD', '--pair', 'ETH/USD', ...MONTH.slice(2), '--out', p('two.svg'));
    expect(two.code).toBe(0);
    expect(two.err).toMatch(/\(BTC\/USD: 720 points at 1HRS resolution, .*; ETH\/USD: 720 points at 1HRS resolution, .*\)\n$/);
    const svg = readFileSync(p('two.svg'), 'utf8');
    for (const label of [
      'BTC/USD, ETH/USD: % change',
      'BTC/USD (% change from its first value)',
      'ETH/USD (% change from its first value)',
    ])
      expect(svg).toContain(`${label}</text>`);
  });
});
