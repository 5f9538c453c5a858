/**
 * `xrate plot LOG|DB --pair B/Q --from T1 --to T2 [--period P] --out FILE.svg|.png`: a chart of a
 * pair's rate, its markets' prices and the markets left out (src/replay/chart.ts), drawn as SVG
 * (plot/svg.ts) or, for .png, rasterized by headless Chromium (plot/png.ts).
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { chartData } from '../../replay/chart.js';
import { XrateError } from '../../core/errors.js';
import { COMMON, int, pairList, parse, querySource, time, type Io } from '../args.js';
import { help } from '../help.js';
import { svgToPng } from '../plot/png.js';
import { renderSvg } from '../plot/svg.js';

const OPTIONS = {
  ...COMMON,
  pair: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  period: { type: 'string' },
  out: { type: 'string' },
  width: { type: 'string' },
  height: { type: 'string' },
} as const;

/** Runs `xrate plot` with `args` (after the command name); returns the exit code. */
export async function cmdPlot(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (values.help) return help('plot', io);
  const [[base, quote]] = pairList(values.pair === undefined ? undefined : [values.pair], true);
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
  const chart = await chartData(src, { base, quote, from, to, periodId: values.period?.toUpperCase() });
  const svg = renderSvg(chart, { width, height });
  const bytes = kind === '.svg' ? svg : await svgToPng(svg, width, height);
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, bytes);
  if (chart.note) io.err(`xrate plot: note: ${chart.note}\n`);
  io.err(
    `xrate plot: wrote ${out} (${chart.ticks.length} ticks, ${chart.markets.length} markets, ${chart.exclusions.length} points left out` +
      `${chart.candles ? `, ${chart.candles.length} candles` : ''})\n`,
  );
  return 0;
}
