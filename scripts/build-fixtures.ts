/**
 * Rebuilds everything in `fixtures/` and recomputes `fixtures/metadata.json`.
 *
 * ```
 * npx tsx scripts/build-fixtures.ts --data DIR [--out fixtures]
 * ```
 *
 * - `binance-btcusdt-2021-01-08.ndjson`: the 2,452 real Binance BTC/USDT spot quotes and trades of
 *   nautilus_trader's test data (LGPL-3.0), mapped to
 *   xrate's event format and preceded by one `exchange` and one `symbol` event.
 * - `demo/demo.ndjson.gz`: a generated 3-hour log (scripts/gen-log.ts, fixed seed) for the README
 *   quick start; it crosses the 04:00 UTC eligibility refresh.
 * - `tardis/binance-futures/{quotes,trades}/2020-02-22_BTCUSDT.csv`: the first 400 rows of the real
 *   tardis.dev CSV files of nautilus_trader's test data (LGPL-3.0), unchanged.
 *
 * `--data DIR` is the folder that holds `nautilus_binance_spot_btcusdt_2021-01-08/events.ndjson`
 * (nautilus_trader's parquet test files dumped to one JSON object per line) and
 * `nautilus_tardis_binancefutures_btcusdt_2020-02-22/tardis_{quotes,trades}.csv`. Only
 * licence-compatible data may be copied here (MPL-2.0, LGPL-3.0, XFree86 and the like).
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { writeLog, type GenOptions } from './gen-log.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The generator options of the demo log (recorded in metadata.json). */
export const DEMO_OPTIONS: Required<Omit<GenOptions, 'rate' | 'stringRate'>> & { rate: number } = {
  seed: 20240301,
  events: 160_000,
  exchanges: 6,
  assets: 10,
  start: '2024-03-01T02:30:00Z',
  rate: 160_000 / (3 * 3600),
  badRate: 0.0005,
  lateRate: 0.0002,
};

const DEMO_COMMAND =
  'npx tsx scripts/gen-log.ts --seed 20240301 --events 160000 --exchanges 6 --assets 10 ' +
  '--start 2024-03-01T02:30:00Z --duration 3h --bad-rate 0.0005 --late-rate 0.0002 ' +
  '--out fixtures/demo/demo.ndjson.gz';

const NAUTILUS = {
  dir: 'nautilus_binance_spot_btcusdt_2021-01-08',
  repository: 'https://github.com/nautechsystems/nautilus_trader',
  commit: 'c6e89755193cd6ac6df7f05174df911bb31a324b',
  paths: [
    'tests/test_kit/data/binance-btcusdt-quotes.parquet',
    'tests/test_kit/data/binance-btcusdt-trades.parquet',
    'tests/test_kit/data/binance-btcusdt-instrument.txt',
  ],
};

const TARDIS = { dir: 'nautilus_tardis_binancefutures_btcusdt_2020-02-22', rows: 400 };

/** The header and first rows of nautilus_trader's tardis CSV test file of `data` under `dataDir`, verbatim. */
export function buildTardis(dataDir: string, data: 'quotes' | 'trades'): { text: string; first: string; last: string } {
  const lines = readFileSync(join(dataDir, TARDIS.dir, `tardis_${data}.csv`), 'utf8').split('\n');
  const kept = lines.slice(0, TARDIS.rows + 1);
  if (kept.length !== TARDIS.rows + 1 || !kept[0].startsWith('exchange,symbol,timestamp,local_timestamp,'))
    throw new Error(`build-fixtures: unexpected tardis ${data} file`);
  const local = kept.slice(1).map((l) => Number(l.split(',')[3]));
  const iso = (us: number): string => new Date(us / 1000).toISOString();
  return { text: `${kept.join('\n')}\n`, first: iso(Math.min(...local)), last: iso(Math.max(...local)) };
}

/** sha256 hex of a buffer. */
export function sha256(buf: Buffer | string): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** Rounds a float from the source to `d` decimals, checking that only float noise is removed. */
function clean(x: unknown, d: number, what: string): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error(`build-fixtures: ${what} is not a number: ${String(x)}`);
  const r = Number(x.toFixed(d));
  if (Math.abs(r - x) > 1e-9 * Math.max(1, Math.abs(x))) {
    throw new Error(`build-fixtures: ${what} ${x} does not fit ${d} decimals`);
  }
  return r;
}

/** Maps the dumped Binance events under `dataDir` to xrate lines. */
export function buildBinance(dataDir: string): {
  text: string;
  events: number;
  first: string;
  last: string;
  counts: Record<string, number>;
} {
  const src = readFileSync(join(dataDir, NAUTILUS.dir, 'events.ndjson'), 'utf8');
  const inLines = src.split('\n').filter((l) => l.trim().length > 0);
  const out: string[] = [];
  const counts: Record<string, number> = { exchange: 0, symbol: 0, quote: 0, trade: 0 };
  const first = (JSON.parse(inLines[0]) as { time: string }).time;
  let last = first;
  out.push(JSON.stringify({ type: 'exchange', time: first, exchange_id: 'BINANCE', legitimate: true, rank: 0 }));
  out.push(
    JSON.stringify({
      type: 'symbol',
      time: first,
      symbol_id: 'BINANCE_SPOT_BTC_USDT',
      exchange_id: 'BINANCE',
      symbol_type: 'SPOT',
      asset_id_base: 'BTC',
      asset_id_quote: 'USDT',
      price_precision: 2,
      size_precision: 6,
      symbol_id_exchange: 'BTCUSDT',
    }),
  );
  counts.exchange++;
  counts.symbol++;
  inLines.forEach((l, i) => {
    const e = JSON.parse(l) as Record<string, unknown>;
    const where = `line ${i + 1}`;
    if (e.exchange !== 'BINANCE' || e.symbol !== 'BINANCE_SPOT_BTC_USDT') throw new Error(`build-fixtures: unexpected market at ${where}`);
    const time = e.time as string;
    if (time < last) throw new Error(`build-fixtures: times go back at ${where}`);
    last = time;
    if (e.type === 'quote') {
      out.push(
        JSON.stringify({
          type: 'quote',
          time,
          symbol_id: e.symbol,
          bid_price: clean(e.bid, 2, `${where} bid`),
          bid_size: clean(e.bid_size, 6, `${where} bid_size`),
          ask_price: clean(e.ask, 2, `${where} ask`),
          ask_size: clean(e.ask_size, 6, `${where} ask_size`),
        }),
      );
      counts.quote++;
    } else if (e.type === 'trade') {
      const side = e.side === 'buy' ? 'BUY' : e.side === 'sell' ? 'SELL' : undefined;
      if (side === undefined) throw new Error(`build-fixtures: unexpected side at ${where}`);
      out.push(
        JSON.stringify({
          type: 'trade',
          time,
          symbol_id: e.symbol,
          price: clean(e.price, 2, `${where} price`),
          size: clean(e.size, 6, `${where} size`),
          taker_side: side,
        }),
      );
      counts.trade++;
    } else {
      throw new Error(`build-fixtures: unexpected type ${String(e.type)} at ${where}`);
    }
  });
  return { text: `${out.join('\n')}\n`, events: out.length, first, last, counts };
}

function countTypes(text: string): { counts: Record<string, number>; first: string; last: string; lines: number } {
  const counts: Record<string, number> = {};
  let first = '';
  let last = '';
  let lines = 0;
  for (const l of text.split('\n')) {
    if (l.length === 0) continue;
    lines++;
    let type = 'invalid_json';
    try {
      const o = JSON.parse(l) as { type?: unknown; time?: unknown };
      type = typeof o.type === 'string' ? o.type : 'no_type';
      if (typeof o.time === 'string' && /^\d{4}-\d\d-\d\dT/.test(o.time) && Number.isFinite(Date.parse(o.time))) {
        if (first === '' || o.time < first) first = o.time;
        if (o.time > last) last = o.time;
      }
    } catch {
      /* counted as invalid_json */
    }
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return { counts, first, last, lines };
}

/** Builds all fixtures into `outDir` and writes `metadata.json`; returns the metadata. */
export async function buildFixtures(dataDir: string, outDir: string): Promise<unknown> {
  mkdirSync(join(outDir, 'demo'), { recursive: true });
  const rel = (p: string): string => relative(ROOT, p).split('\\').join('/');
  const files: unknown[] = [];

  // 1. Real Binance spot data (nautilus_trader, LGPL-3.0).
  const bin = buildBinance(dataDir);
  const binPath = join(outDir, 'binance-btcusdt-2021-01-08.ndjson');
  writeFileSync(binPath, bin.text);
  files.push({
    path: rel(binPath),
    kind: 'real',
    description:
      'Binance BTC/USDT spot top-of-book quotes and trades, 2021-01-08 00:00:00.278Z to 00:00:46.674Z (one exchange, one market).',
    source: {
      repository: NAUTILUS.repository,
      commit: NAUTILUS.commit,
      paths: NAUTILUS.paths,
      via: `${NAUTILUS.dir}/events.ndjson (the parquet files dumped to one JSON object per line)`,
    },
    licence: 'LGPL-3.0',
    attribution: 'nautilus_trader, Nautech Systems Pty Ltd (https://github.com/nautechsystems/nautilus_trader); market data by Binance',
    sha256: sha256(bin.text),
    bytes: statSync(binPath).size,
    events: bin.events,
    counts: bin.counts,
    time_first: bin.first,
    time_last: bin.last,
    changes: [
      'mapped to the xrate event format: exchange -> exchange_id (exchange events only), symbol -> symbol_id, bid -> bid_price, ask -> ask_price, side buy/sell -> taker_side BUY/SELL',
      'dropped the fields id, exchange (on quotes and trades) and side',
      'prices rounded to 2 and sizes to 6 decimals (the instrument precision of binance-btcusdt-instrument.txt) to remove float noise such as 0.00031099999999999997; no value moved by more than 1e-9',
      'added one exchange event (BINANCE, legitimate, rank 0) and one symbol event (BINANCE_SPOT_BTC_USDT, SPOT, BTC/USDT, price_precision 2, size_precision 6, symbol_id_exchange BTCUSDT) at the first event time',
      'times kept as in the source (millisecond precision, UTC)',
    ],
  });

  // 2. Generated demo log.
  const demoPath = join(outDir, 'demo', 'demo.ndjson.gz');
  await writeLog(demoPath, { ...DEMO_OPTIONS, format: 'ndjson' });
  const gz = readFileSync(demoPath);
  const plain = gunzipSync(gz);
  const demo = countTypes(plain.toString('utf8'));
  files.push({
    path: rel(demoPath),
    kind: 'generated',
    description:
      `Synthetic log for the quick start, ${demo.first} to ${demo.last} (about ` +
      `${((Date.parse(demo.last) - Date.parse(demo.first)) / 3_600_000).toFixed(1)} hours; it crosses the 04:00 UTC eligibility refresh): ` +
      '6 exchanges (ranks 0-2), 10 assets, spot and perpetual markets, a biased exchange (OKX, quotes about 2% high), ' +
      'a non-legitimate exchange (BYBIT), a 15-minute kill switch on BITSTAMP, markets known only from their symbol_id, ' +
      'one listing partway through, stale stretches, and a few bad and late lines.',
    source: `generated by ${DEMO_COMMAND}`,
    generator: { script: 'scripts/gen-log.ts', options: DEMO_OPTIONS },
    licence: 'MIT (part of xrate)',
    sha256: sha256(gz),
    bytes: gz.length,
    sha256_uncompressed: sha256(plain),
    bytes_uncompressed: plain.length,
    events: demo.lines,
    counts: demo.counts,
    time_first: demo.first,
    time_last: demo.last,
    changes: [],
  });

  // 3. Real tardis.dev CSV files (nautilus_trader's test data, LGPL-3.0), the first rows verbatim.
  for (const data of ['quotes', 'trades'] as const) {
    const t = buildTardis(dataDir, data);
    const path = join(outDir, 'tardis', 'binance-futures', data, '2020-02-22_BTCUSDT.csv');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, t.text);
    files.push({
      path: rel(path),
      kind: 'real',
      description: `The first ${TARDIS.rows} rows of a tardis.dev CSV ${data} file: Binance USDT-margined futures BTCUSDT, ${t.first} to ${t.last}, as downloaded (header line, times in microseconds since the epoch).`,
      source: {
        repository: NAUTILUS.repository,
        commit: NAUTILUS.commit,
        paths: [`tests/test_kit/data/tardis_${data}.csv`],
        via: `${TARDIS.dir}/tardis_${data}.csv`,
      },
      licence: 'LGPL-3.0',
      attribution:
        'nautilus_trader, Nautech Systems Pty Ltd (https://github.com/nautechsystems/nautilus_trader); data by Tardis.dev, market data by Binance',
      sha256: sha256(t.text),
      bytes: statSync(path).size,
      events: TARDIS.rows,
      header_lines: 1,
      time_first: t.first,
      time_last: t.last,
      changes: [`kept the header and the first ${TARDIS.rows} rows, unchanged`],
    });
  }

  const meta = {
    about:
      'Fixtures of xrate. Rebuild with `npx tsx scripts/build-fixtures.ts --data DIR`; test/unit/scripts/fixtures.test.ts checks the sha256 sums. Only licence-compatible data is copied here (see fixtures/README.md).',
    files,
  };
  writeFileSync(join(outDir, 'metadata.json'), `${JSON.stringify(meta, null, 2)}\n`);
  return meta;
}

const USAGE = 'usage: npx tsx scripts/build-fixtures.ts --data DIR [--out DIR]';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let data: string | undefined;
  let out = join(ROOT, 'fixtures');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--data') data = argv[++i];
    else if (argv[i] === '--out') out = resolve(argv[++i]);
    else throw new Error(USAGE);
  }
  if (data === undefined) throw new Error(USAGE);
  const meta = (await buildFixtures(data, out)) as { files: { path: string; bytes: number; events: number }[] };
  for (const f of meta.files) process.stderr.write(`build-fixtures: ${f.path}: ${f.bytes} bytes, ${f.events} events\n`);
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
