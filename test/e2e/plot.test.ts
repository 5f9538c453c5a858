/**
 * `xrate plot`: an SVG drawn from the demo log (the same bytes twice, and from its replay
 * database), a PNG drawn by headless Chromium (the Debian package `chromium`: `.ci/run`
 * installs it), and the exit codes and messages of bad usage and bad input.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../../src/cli/plot/png.js';
import { cli, DEMO } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-plot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string): string => join(dir, name);
const RANGE = ['--pair', 'BTC/USD', '--from', '2024-03-01T04:10:00Z', '--to', '2024-03-01T04:40:00Z'];

beforeAll(async () => {
  expect((await cli('replay', DEMO, '--db', p('demo.sqlite'), '--quiet')).code).toBe(0);
}, 120_000);

describe('xrate plot', () => {
  it('writes an SVG with axes, UTC labels, legend, lines, markers and candles: the same bytes each time, and from the database', async () => {
    const a = await cli('plot', DEMO, ...RANGE, '--period', '5MIN', '--out', p('a.svg'));
    expect(a.code).toBe(0);
    expect(a.err).toBe(`xrate plot: wrote ${p('a.svg')} (1801 ticks, 1 markets, 1062 points left out, 6 candles)\n`);
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
        [DEMO, '--pair', 'BTC/USD', '--from', '2024-03-01T02:00:00Z', '--to', '2024-03-01T05:00:00Z', '--out', p('x.svg')],
        2,
        'xrate: the range holds 10801 ticks, more than the 7200 (2 hours) a chart may span: narrow it\n',
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
