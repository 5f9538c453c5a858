/**
 * Checks on real data that a partitioned replay equals a serial one, row for row
 * (docs/parallel.md, "Checked on real data"):
 *
 * ```
 * npx tsx scripts/check-partitions.ts --coinapi-ohlcv DIR [--workers 2,3,4] [--keep OUTDIR] [--shift SECONDS] [--no-own-metrics] [--trades-only]
 * ```
 *
 * DIR holds `coinapi_ohlcv_1h.csv.gz`, a CoinAPI OHLCV dump (your own copy; none ships with xrate).
 * It is converted to an event log (scripts/coinapi-ohlcv.ts: each bar a trade and a quote at its
 * end, after the exchanges' and symbols' events), replayed serially and then with
 * `replayParallel` in 2, 3 and 4 partitions (in this process, `run: runPartitionHere`: no build
 * needed), then again with each of those plans' cuts moved by `--shift` seconds (default 1817,
 * 30 min 17 s; 0: not), with the default configuration and xrate's own metrics on (`--no-own-metrics`: off;
 * they take the serial replay from about 2 s to 9 s on the 2018 dump). `--trades-only` leaves the
 * bars' quotes out (then no rate is written: xrate prices markets from quotes). Each partitioned database is compared with the serial
 * one by `compareReplays` (every output table, row for row, and the outputs' run counts) and by the
 * final engines' symbol records. Prints a table of the rows compared; exits 1 on any difference
 * (2 on a usage error). The log and databases go to a temporary directory, removed at the end,
 * or to `--keep OUTDIR`, kept.
 *
 * @module
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { restoreEngine } from '../src/core/engine.js';
import { formatTime } from '../src/core/time.js';
import { COMPARED_TABLES, compareReplays, type TableComparison } from '../src/io/compareReplays.js';
import { ReplayStore } from '../src/io/store.js';
import { replayParallel, runPartitionHere } from '../src/replay/parallel.js';
import { replay } from '../src/replay/replay.js';
import { convertOhlcv } from './coinapi-ohlcv.js';

const USAGE =
  'usage: npx tsx scripts/check-partitions.ts --coinapi-ohlcv DIR [--workers 2,3,4] [--keep OUTDIR] [--shift SECONDS] [--no-own-metrics] [--trades-only]';

/** The CSV file looked for in the `--coinapi-ohlcv` directory. */
export const OHLCV_FILE = 'coinapi_ohlcv_1h.csv.gz';

/** The script's options. */
export interface CheckArgs {
  dir: string;
  workers: number[];
  keep?: string;
  ownMetrics: boolean;
  tradesOnly: boolean;
  /** Seconds the planner's cuts are moved by for a second run each (0: none). */
  shift: number;
}

/** Parses the command line (without `node` and the script). @throws on a usage error. */
export function parseArgs(argv: readonly string[]): CheckArgs {
  let dir: string | undefined;
  let workers = [2, 3, 4];
  let keep: string | undefined;
  let ownMetrics = true;
  let tradesOnly = false;
  let shift = 1817;
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${k} needs a value\n${USAGE}`);
      return v;
    };
    if (k === '--coinapi-ohlcv') dir = value();
    else if (k === '--keep') keep = value();
    else if (k === '--no-own-metrics') ownMetrics = false;
    else if (k === '--trades-only') tradesOnly = true;
    else if (k === '--shift') {
      const v = value();
      shift = Number(v);
      if (!Number.isInteger(shift) || shift < 0) throw new Error(`--shift takes whole seconds, 0 or more, got "${v}"\n${USAGE}`);
    } else if (k === '--workers') {
      const v = value();
      workers = v.split(',').map(Number);
      if (workers.some((n) => !Number.isInteger(n) || n < 2 || n > 64))
        throw new Error(`--workers takes whole numbers from 2 to 64, comma-separated, got "${v}"\n${USAGE}`);
    } else throw new Error(`unknown argument "${k}"\n${USAGE}`);
  }
  if (dir === undefined) throw new Error(`--coinapi-ohlcv DIR is required\n${USAGE}`);
  return { dir, workers, keep, ownMetrics, tradesOnly, shift };
}

/** The final engine's symbol records of a replay database, compared like a table. */
function compareSymbols(a: string, b: string): TableComparison {
  const symbols = (db: string) => {
    const store = ReplayStore.open(db, { readonly: true });
    try {
      const cp = store.latestSnapshot();
      return cp ? restoreEngine(cp.engine).symbols() : [];
    } finally {
      store.close();
    }
  };
  const [x, y] = [symbols(a), symbols(b)];
  const table = 'symbols (final engine)';
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (!isDeepStrictEqual(x[i], y[i])) {
      const keys = [...new Set([...Object.keys(x[i] ?? {}), ...Object.keys(y[i] ?? {})])];
      const columns = keys.filter((k) => !isDeepStrictEqual((x[i] as never)?.[k], (y[i] as never)?.[k]));
      return { table, rows: [x.length, y.length], difference: { index: i, a: x[i] as never, b: y[i] as never, columns } };
    }
  }
  return { table, rows: [x.length, y.length] };
}

/** The comparison as a text table: one row per output table, one column per partition count. */
export function formatTable(results: readonly { label: string; tables: readonly TableComparison[] }[]): string {
  const names = results[0]?.tables.map((t) => t.table) ?? [];
  const head = ['table', 'serial rows', ...results.map((r) => r.label)];
  const rows = names.map((name, i) => [
    name,
    String(results[0].tables[i].rows[0]),
    ...results.map((r) => {
      const t = r.tables[i];
      return t.difference ? `DIFFERS at row ${t.difference.index} (${t.rows[1]} rows)` : `equal (${t.rows[1]} rows)`;
    }),
  ]);
  const widths = head.map((h, j) => Math.max(h.length, ...rows.map((r) => r[j].length)));
  const line = (cells: string[]) => cells.map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  let args: CheckArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`check-partitions: ${(e as Error).message}`);
    return 2;
  }
  const csv = join(args.dir, OHLCV_FILE);
  if (!existsSync(csv)) {
    console.error(`check-partitions: no ${OHLCV_FILE} in "${args.dir}"`);
    return 2;
  }
  const out = args.keep ?? mkdtempSync(join(tmpdir(), 'xrate-check-partitions-'));
  mkdirSync(out, { recursive: true });
  try {
    const secs = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;
    let t = Date.now();
    const log = join(out, 'log.ndjson');
    const stats = await convertOhlcv(csv, log, { quotes: !args.tradesOnly });
    console.log(
      `log: ${stats.bars} bars (${stats.skipped} with volume 0 left out), ${stats.exchanges} exchanges, ${stats.symbols} symbols, ` +
        `${stats.events} events, ${stats.first} to ${stats.last} (${secs(t)})`,
    );
    const opts = { inputs: [log], ownMetrics: args.ownMetrics };
    const serialDb = join(out, 'serial.sqlite');
    for (const f of [serialDb, `${serialDb}-wal`, `${serialDb}-shm`]) rmSync(f, { force: true });
    t = Date.now();
    const serial = await replay({ ...opts, db: serialDb });
    console.log(
      `serial: ${serial.eventsRead} events read, ${serial.eventsAccepted} accepted, ${serial.eventsRejected} rejected, ` +
        `${serial.ticks} ticks, ${serial.rateChanges} rate changes, ${serial.pairsWithRate} pairs with a rate at the end (${secs(t)})`,
    );
    const results: { label: string; tables: TableComparison[] }[] = [];
    /** One partitioned replay (at the planner's cuts, or at `given` ones), compared with the serial one; its cuts. */
    const check = async (label: string, workers: number, given?: number[]): Promise<number[]> => {
      const db = join(out, `partitioned-${label.replaceAll(' ', '-')}.sqlite`);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
      t = Date.now();
      let partitions = 0;
      const cuts = new Set<number>();
      await replayParallel({
        ...opts,
        db,
        workers,
        cuts: given,
        run: runPartitionHere,
        onPartitionDone: (job) => {
          partitions++;
          if (job.from !== undefined) cuts.add(job.from);
        },
      });
      results.push({ label, tables: [...compareReplays(serialDb, db), compareSymbols(serialDb, db)] });
      const sorted = [...cuts].sort((x, y) => x - y);
      console.log(
        `${label}: ${partitions} partition runs (second phase included), cut at ${sorted.map((c) => formatTime(c)).join(', ')} (${secs(t)})`,
      );
      return sorted;
    };
    for (const workers of args.workers) {
      const cuts = await check(`${workers} partitions`, workers);
      // The planner cuts at minutes with events: with hourly bars, at a bar's end, where every
      // fresh pair changes anyway. The same cuts moved off the hour test what is trimmed there.
      if (args.shift > 0)
        await check(
          `${workers} partitions +${args.shift} s`,
          workers,
          cuts.map((c) => c + args.shift * 1_000_000),
        );
    }
    console.log(`\n${formatTable(results)}\n`);
    let differs = false;
    for (const r of results)
      for (const x of r.tables) {
        if (!x.difference) continue;
        differs = true;
        const d = x.difference;
        console.log(`${r.label}, ${x.table}: first difference at row ${d.index}, columns ${d.columns.join(', ')}`);
        console.log(`  serial:      ${JSON.stringify(d.a)}`);
        console.log(`  partitioned: ${JSON.stringify(d.b)}`);
      }
    console.log(
      differs ? 'RESULT: the partitioned replays DIFFER from the serial one' : 'RESULT: every partitioned replay equals the serial one',
    );
    return differs ? 1 : 0;
  } finally {
    if (args.keep === undefined) rmSync(out, { recursive: true, force: true });
  }
}

/** The tables compared, besides the final engine's symbol records (for the docs and tests). */
export const CHECKED = [...COMPARED_TABLES, 'symbols (final engine)'];

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(`check-partitions: ${(e as Error).stack ?? e}`);
      process.exitCode = 1;
    },
  );
}
