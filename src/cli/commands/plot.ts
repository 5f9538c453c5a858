/**
 * `xrate plot LOG|DB --pair B/Q [--pair C/D ...] --from T1 --to T2 [--period P] --out FILE.svg|.png`:
 * a chart of a pair's rate over any range (src/answers/chart.ts, at the resolution of
 * src/answers/chartResolution.ts with `--width` as the points): up to 7200 ticks, its markets'
 * prices and the markets left out; a longer range by period, its closes, candles and the markets'
 * weight shares. Several pairs are compared as % changes (plot/compare.ts). Drawn as SVG
 * (plot/svg.ts) or, for .png, rasterized by headless Chromium (plot/png.ts).
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { chartData } from '../../answers/chart.js';
import { isXrateError, XrateError } from '../../core/errors.js';
import type { ChartData } from '../../replay/chart.js';
import { COMMON, int, pairList, parse, querySource, time, type Io } from '../args.js';
import { help } from '../help.js';
import { renderCompareSvg } from '../plot/compare.js';
import { svgToPng } from '../plot/png.js';
import { renderSvg } from '../plot/svg.js';

const OPTIONS = {
  ...COMMON,
  pair: { type: 'string', multiple: true },
  from: { type: 'string' },
  to: { type: 'string' },
  period: { type: 'string' },
  out: { type: 'string' },
  width: { type: 'string' },
  height: { type: 'string' },
} as const;

/** Most pairs one plot compares. */
const MAX_PAIRS = 8;

/** What the console line says of one chart: its points and resolution, and what else it drew. */
function summary(c: ChartData): string {
  const n = (k: number, one: string, many = `${one}s`): string => `${k} ${k === 1 ? one : many}`;
  const parts =
    c.resolution === 'tick'
      ? [`${n(c.ticks.length, 'tick')} at tick resolution`, n(c.markets.length, 'market'), `${n(c.exclusions.length, 'point')} left out`]
      : [`${n(c.ticks.length, 'point')} at ${c.resolution} resolution`];
  if (c.candles) parts.push(n(c.candles.length, 'candle'));
  if (c.resolution !== 'tick' && c.weight_share) parts.push(`weight shares of ${n(c.weight_share.length, 'market')}`);
  return parts.join(', ');
}

/** Runs `xrate plot` with `args` (after the command name); returns the exit code. */
export async function cmdPlot(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (values.help) return help('plot', io);
  const pairs = pairList(values.pair, true);
  if (pairs.length > MAX_PAIRS) throw new XrateError('usage', `--pair: at most ${MAX_PAIRS} pairs in one plot`, { field: '--pair' });
  const from = time('from', values.from, true);
  const to = time('to', values.to, true);
  if (!(to > from)) throw new XrateError('usage', '--to must be after --from', { field: '--to' });
  const out = values.out;
  if (!out) throw new XrateError('usage', 'missing --out FILE.svg or FILE.png');
  const kind = extname(out).toLowerCase();
  if (kind !== '.svg' && kind !== '.png') throw new XrateError('usage', `--out: "${out}" must end in .svg or .png`, { field: '--out' });
  const usage = (m: string): Error => new XrateError('usage', m);
  const width = int('width', values.width, 320, 4096, usage) ?? 960;
  const height = int('height', values.height, 320, 4096, usage) ?? 540;
  const src = querySource(values, positionals, 'plot');
  const charts: ChartData[] = [];
  for (const [base, quote] of pairs) {
    try {
      charts.push(await chartData(src, { base, quote, from, to, periodId: values.period?.toUpperCase(), points: width }));
    } catch (e) {
      // The chart's points are the plot's width: its errors name the flag.
      if (isXrateError(e, 'usage') && e.field === 'points')
        throw new XrateError('usage', `--width ${width}: ${e.message}`, { field: '--width' });
      throw e;
    }
  }
  const svg = charts.length === 1 ? renderSvg(charts[0], { width, height }) : renderCompareSvg(charts, { width, height });
  const bytes = kind === '.svg' ? svg : await svgToPng(svg, width, height);
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, bytes);
  for (const c of charts)
    if (c.note) io.err(`xrate plot: note${charts.length > 1 ? ` (${c.asset_id_base}/${c.asset_id_quote})` : ''}: ${c.note}\n`);
  const what =
    charts.length === 1 ? summary(charts[0]) : charts.map((c) => `${c.asset_id_base}/${c.asset_id_quote}: ${summary(c)}`).join('; ');
  io.err(`xrate plot: wrote ${out} (${what})\n`);
  return 0;
}
