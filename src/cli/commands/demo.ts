/**
 * `xrate demo` (`npm start`): replays the bundled example log and prints the summary and rates.
 *
 * @module
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTime } from '../../core/time.js';
import { wireText } from '../../core/wire.js';
import { replay } from '../../replay/replay.js';
import { HELP_OPTION, parseFlags, type Io } from '../args.js';
import { help } from '../help.js';
import { progressLine, ratesTable, summaryTable } from '../progress.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The bundled example log replayed by `xrate demo` (`npm start`). */
export const DEMO_LOG = resolve(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz');

const OPTIONS = { ...HELP_OPTION, db: { type: 'string' } } as const;

/** Runs `xrate demo` with `args` (after the command name); returns the exit code. */
export async function cmdDemo(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, OPTIONS);
  if (values.help) return help('demo', io);
  const db = values.db ?? 'out/xrate.sqlite';
  mkdirSync(dirname(resolve(db)), { recursive: true });
  io.out(`replaying the bundled example ${DEMO_LOG}\n`);
  const summary = await replay({
    inputs: [DEMO_LOG],
    db,
    onProgress: io.isTTY ? (p) => io.err(`\r${progressLine(p, Math.max(40, io.columns - 1))}`) : undefined,
  });
  if (io.isTTY) io.err('\r\x1b[K');
  io.out(`${summaryTable(summary)}\n\n`);
  const rows = summary.engine
    .pairs()
    .map((p) => ({ pair: `${p.base}/${p.quote}`, rate: p.rate, time: p.time, used: p.used, fresh: p.fresh }));
  io.out(`current rates at ${summary.lastTick !== undefined ? formatTime(summary.lastTick) : '--'} (direct pairs)\n`);
  io.out(`${ratesTable(rows)}\n\n`);
  const cross = summary.engine.rate('SOL', 'BTC');
  if (cross) io.out(`a cross rate (no SOL/BTC market): SOL/BTC = ${wireText(cross.rate)} via ${cross.path.join(' -> ')}\n`);
  io.out(`output: ${db}   try: npx xrate rate ${db} --at <time> --pair BTC/USD\n`);
  return 0;
}
