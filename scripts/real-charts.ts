/**
 * Charts of two real market-data sets that may not ship with xrate (their licences do not allow
 * it), drawn from your own copy: the USDC de-peg week of March 2023 (Binance.US and Kraken 5-minute
 * bars of BTC/USD, BTC/USDT and BTC/USDC) and the 60 days of October and November 2018 (CoinAPI
 * hourly bars of 105 markets on 13 exchanges: the USDT de-peg of 2018-10-15 and the November crash).
 *
 * ```
 * npx tsx scripts/real-charts.ts --data DIR [--out out/real-charts] [--width 1200] [--height 560]
 * ```
 *
 * DIR holds either set or both, as `bar` events (one JSON object a line: `symbol`, `exchange`,
 * `time` = the bar's end, `close`, `volume`), gzipped:
 *
 * - `iaqf_binanceus_kraken_btc_usd_usdt_usdc_2023-03/bars_5m_merged.ndjson.gz`
 * - `coinapi_ohlcv_1h_13exchanges_2018-10_2018-11/events_bars_1h.ndjson.gz`
 *
 * Each set's bars become an event log as `scripts/coinapi-ohlcv.ts` makes one (a trade and a
 * locked quote at each bar's close, at its end), which the built `xrate` replays with
 * its own metrics (tracking the stablecoins against USD), and `xrate plot` draws each chart of
 * {@link CHARTS} to `OUT/NAME.png` (the range long enough for a period resolution: the rate as a
 * period's close). Nothing is written into the repository: OUT defaults to the git-ignored `out/`.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createGunzip } from 'node:zlib';
import { Decimal } from 'decimal.js';
import { parseTime } from '../src/core/time.js';
import { barsToEvents, type OhlcvBar } from './coinapi-ohlcv.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'xrate.js');
const USAGE = 'usage: npx tsx scripts/real-charts.ts --data DIR [--out out/real-charts] [--width 1200] [--height 560]';

/** One data set: where its bars lie under DIR, and the pairs its replay tracks. */
export interface RealSet {
  name: string;
  file: string;
  what: string;
  track: string[];
}

/** One chart: its file name, set, pair and range, and what it should show. */
export interface RealChart {
  name: string;
  set: string;
  pair: string;
  from: string;
  to: string;
  /** The period of the points (candles), for data coarser than the shortest period that fits. */
  period?: string;
  shows: string;
}

export const SETS: RealSet[] = [
  {
    name: 'usdc-2023-03',
    file: 'iaqf_binanceus_kraken_btc_usd_usdt_usdc_2023-03/bars_5m_merged.ndjson.gz',
    what: 'Binance.US and Kraken 5-minute bars of BTC/USD, BTC/USDT and BTC/USDC, 2023-03-01 to 2023-03-21',
    track: ['USDC/USD', 'USDT/USD'],
  },
  {
    name: 'coinapi-2018',
    file: 'coinapi_ohlcv_1h_13exchanges_2018-10_2018-11/events_bars_1h.ndjson.gz',
    what: 'CoinAPI hourly bars of 105 markets on 13 exchanges, 2018-10-01 to 2018-12-01',
    track: ['USDT/USD'],
  },
];

export const CHARTS: RealChart[] = [
  {
    name: 'usdc-depeg-week-usdc-usd',
    set: 'usdc-2023-03',
    pair: 'USDC/USD',
    from: '2023-03-08T00:00:00Z',
    to: '2023-03-15T00:00:00Z',
    shows:
      'USDC against USD through BTC (a cross rate): 1.00 until the night of 03-10, a low near 0.88 on the morning of 03-11, 0.95-0.98 on 03-12, back to 0.99-1.00 from 03-13',
  },
  {
    name: 'usdc-depeg-week-btc-usdc',
    set: 'usdc-2023-03',
    pair: 'BTC/USDC',
    from: '2023-03-08T00:00:00Z',
    to: '2023-03-15T00:00:00Z',
    shows:
      'BTC priced in USDC: 22,000-22,800 on 03-11 while BTC/USD was near 20,500 (USDC worth less); Kraken takes most of the weight from 03-11',
  },
  {
    name: 'usdc-depeg-week-btc-usd',
    set: 'usdc-2023-03',
    pair: 'BTC/USD',
    from: '2023-03-08T00:00:00Z',
    to: '2023-03-15T00:00:00Z',
    shows: 'BTC/USD over the week: from 22,200 to a low near 19,600 on 03-10, past 24,000 on 03-13 and a spike near 26,400 on 03-14',
  },
  {
    name: 'y2018-60-days-btc-usd',
    set: 'coinapi-2018',
    pair: 'BTC/USD',
    from: '2018-10-01T00:00:00Z',
    to: '2018-11-30T00:00:00Z',
    shows:
      'BTC/USD over 60 days on eight exchanges: 6,200-6,600 (a spike near 7,000 on 10-15), then the crash from 11-14 to a low near 3,700 on 11-25',
  },
  {
    name: 'y2018-60-days-usdt-usd',
    set: 'coinapi-2018',
    pair: 'USDT/USD',
    from: '2018-10-01T00:00:00Z',
    to: '2018-11-30T00:00:00Z',
    shows:
      'USDT/USD: 0.98-0.99 in early October, the de-peg of 10-15 (a 2-hour close near 0.865, then 0.95-0.96), back near 0.99 by late October',
  },
  {
    name: 'y2018-depeg-days-usdt-usd',
    set: 'coinapi-2018',
    pair: 'USDT/USD',
    from: '2018-10-14T00:00:00Z',
    to: '2018-10-18T00:00:00Z',
    period: '1HRS',
    shows: 'USDT/USD over four days around the de-peg, in hourly candles (the data is hourly bars): the fall on 10-15 and the 0.95 after',
  },
];

/** The bars of a `bar`-event NDJSON file (gzipped when its name ends in `.gz`), as coinapi-ohlcv.ts reads them. */
export async function readBarEvents(path: string): Promise<OhlcvBar[]> {
  const input = createReadStream(path);
  const lines = createInterface({ input: path.endsWith('.gz') ? input.pipe(createGunzip()) : input, crlfDelay: Number.POSITIVE_INFINITY });
  const bars: OhlcvBar[] = [];
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    const b = JSON.parse(line) as { type: string; symbol: string; exchange: string; time: string; close: number; volume: number };
    if (b.type !== 'bar') continue;
    const m = /^([A-Z0-9]+)_SPOT_([A-Z0-9]+)_([A-Z0-9]+)$/.exec(b.symbol);
    if (!m) throw new Error(`${path} line ${n}: "${b.symbol}" is not an EXCHANGE_SPOT_BASE_QUOTE symbol id`);
    const endUs = parseTime(b.time);
    if (endUs === undefined) throw new Error(`${path} line ${n}: bad time "${b.time}"`);
    bars.push({
      symbolId: b.symbol,
      exchange: b.exchange,
      base: m[2],
      quote: m[3],
      end: b.time,
      endUs,
      close: new Decimal(b.close).toFixed(),
      volume: new Decimal(b.volume).toFixed(),
    });
  }
  return bars;
}

/** Runs the built xrate; its stdout and stderr together, or an error with them. */
function xrate(...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const said = `${r.stdout}${r.stderr}`.trim();
  if (r.status !== 0) throw new Error(`xrate ${args[0]} failed (exit ${r.status}): ${said}`);
  return said;
}

async function main(argv: string[]): Promise<void> {
  const opt = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (!['--data', '--out', '--width', '--height'].includes(k) || argv[i + 1] === undefined)
      throw new Error(`unexpected "${k}"\n${USAGE}`);
    opt.set(k.slice(2), argv[++i]);
  }
  const data = opt.get('data');
  if (!data) throw new Error(`--data DIR is required: the directory holding\n${SETS.map((s) => `  ${s.file}`).join('\n')}\n${USAGE}`);
  const out = resolve(opt.get('out') ?? join(ROOT, 'out', 'real-charts'));
  const size = ['--width', opt.get('width') ?? '1200', '--height', opt.get('height') ?? '560'];
  if (!existsSync(join(ROOT, 'dist'))) throw new Error('build xrate first: npm run build');
  mkdirSync(out, { recursive: true });
  const present = SETS.filter((s) => {
    const ok = existsSync(join(data, s.file));
    if (!ok) console.error(`real-charts: ${join(data, s.file)} is absent: ${s.what}; its charts are left out`);
    return ok;
  });
  if (present.length === 0) throw new Error(`no data set under ${data}: it needs\n${SETS.map((s) => `  ${s.file}`).join('\n')}`);
  for (const s of present) {
    const log = join(out, `${s.name}.ndjson`);
    const db = join(out, `${s.name}.sqlite`);
    const { events, stats } = barsToEvents(await readBarEvents(join(data, s.file)));
    const w = createWriteStream(log);
    for (const e of events) if (!w.write(`${JSON.stringify(e)}\n`)) await once(w, 'drain');
    w.end();
    await once(w, 'finish');
    console.log(
      `real-charts: ${s.name}: ${stats.bars} bars (${stats.skipped} without volume) -> ${stats.events} events, ${stats.first} to ${stats.last}`,
    );
    xrate('replay', log, '--db', db, '--quiet', ...s.track.flatMap((p) => ['--track', p]));
    for (const c of CHARTS.filter((c) => c.set === s.name)) {
      const png = join(out, `${c.name}.png`);
      try {
        const period = c.period ? ['--period', c.period] : [];
        const said = xrate('plot', db, '--pair', c.pair, '--from', c.from, '--to', c.to, ...period, ...size, '--out', png);
        console.log(`${said}\n  what it shows: ${c.shows}`);
      } catch (e) {
        console.error(`real-charts: ${c.name}: ${e instanceof Error ? e.message : String(e)}`);
        process.exitCode = 1;
      }
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(`real-charts: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  });
}
