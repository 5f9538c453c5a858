/**
 * CoinAPI OHLCV bars (the CSV of CoinAPI's `/v1/ohlcv/{symbol_id}/history` dumps) turned into an
 * xrate event log (docs/methodology.md section 1), for scripts/check-partitions.ts.
 *
 * The CSV has a header naming at least `symbol_id, exchange, base, quote, time_period_end,
 * price_close, volume_traded`; fields are plain (no quoting), numbers may be in exponent form
 * (`8.927e-05`). Each bar with a positive volume becomes, at its end (`time_period_end`):
 *
 * - a pseudo-trade: price = the bar's close, size = its volume (base units); and
 * - unless `quotes` is false, a pseudo-quote at the close with bid = ask = close and both sizes 0.
 *   xrate prices a market from its quotes only (rule 6): a log of trades alone writes no rate at
 *   all. A locked book passes the spread filter, and a size of 0 means "unknown", so every pair
 *   falls back to w = V (its markets weighted by traded volume). The quote is fresh for
 *   `staleAfterSeconds` (301 s) after the bar's end; the rate is then carried, stale, as rule 13 says.
 *
 * The close is taken rather than the typical price (h + l + c) / 3: it is the source's own decimal,
 * with no rounding to choose. Numbers are written as plain decimal strings, exactly
 * (`8.927e-05` becomes `"0.00008927"`).
 *
 * Before the first bar come one `exchange` event per exchange (legitimate, rank 0, as an exchange
 * with no event would be) and one `symbol` event per symbol (SPOT, base and quote from the CSV),
 * sorted by id, all at the first bar's time. The bars' events follow sorted by time, then
 * symbol_id, the trade before the quote: the log is in time order, ties in a fixed order.
 *
 * @module
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { Decimal } from 'decimal.js';
import { parseTime } from '../src/core/time.js';

/** One bar as the conversion needs it. */
export interface OhlcvBar {
  symbolId: string;
  exchange: string;
  base: string;
  quote: string;
  /** The bar's end, as written, and in µs. */
  end: string;
  endUs: number;
  /** Close and volume as plain decimal strings. */
  close: string;
  volume: string;
}

/** The columns read from the CSV. */
const NEEDED = ['symbol_id', 'exchange', 'base', 'quote', 'time_period_end', 'price_close', 'volume_traded'] as const;

/** A number of the CSV as a plain decimal string (exponent form expanded, exactly). */
function plain(text: string, what: string, line: number): string {
  let d: Decimal;
  try {
    d = new Decimal(text);
  } catch {
    throw new Error(`line ${line}: ${what} "${text}" is not a number`);
  }
  if (!d.isFinite()) throw new Error(`line ${line}: ${what} "${text}" is not a finite number`);
  return d.toFixed();
}

/**
 * A reader of the CSV's rows: give it the header line, then each row; it answers the row's bar
 * (undefined for an empty line).
 * @throws on a header without a needed column, a row with another number of fields, or a bad time or number.
 */
export function barReader(header: string): (row: string, line: number) => OhlcvBar | undefined {
  const names = header.trim().split(',');
  const at = Object.fromEntries(
    NEEDED.map((n) => {
      const i = names.indexOf(n);
      if (i < 0) throw new Error(`the header has no column "${n}": ${header}`);
      return [n, i];
    }),
  ) as Record<(typeof NEEDED)[number], number>;
  return (row, line) => {
    if (row.trim() === '') return undefined;
    const f = row.trim().split(',');
    if (f.length !== names.length) throw new Error(`line ${line}: ${f.length} fields where the header has ${names.length}`);
    const end = f[at.time_period_end];
    const endUs = parseTime(end);
    if (endUs === undefined) throw new Error(`line ${line}: time_period_end "${end}" is not a time`);
    return {
      symbolId: f[at.symbol_id],
      exchange: f[at.exchange],
      base: f[at.base],
      quote: f[at.quote],
      end,
      endUs,
      close: plain(f[at.price_close], 'price_close', line),
      volume: plain(f[at.volume_traded], 'volume_traded', line),
    };
  };
}

/** What {@link barsToEvents} made. */
export interface ConversionStats {
  bars: number;
  /** Bars with volume 0, left out. */
  skipped: number;
  events: number;
  exchanges: number;
  symbols: number;
  /** First and last bar end kept, as written. */
  first?: string;
  last?: string;
}

/**
 * The event log of `bars` (see the module description), in order, and its counts.
 *
 * @example
 * ```ts
 * const { events } = barsToEvents(bars);
 * writeFileSync('log.ndjson', events.map((e) => JSON.stringify(e)).join('\n'));
 * ```
 */
export function barsToEvents(
  bars: readonly OhlcvBar[],
  opts: { quotes?: boolean } = {},
): { events: Record<string, unknown>[]; stats: ConversionStats } {
  const quotes = opts.quotes ?? true;
  const kept = bars.filter((b) => !new Decimal(b.volume).isZero());
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  kept.sort((a, b) => a.endUs - b.endUs || cmp(a.symbolId, b.symbolId));
  const events: Record<string, unknown>[] = [];
  const stats: ConversionStats = { bars: bars.length, skipped: bars.length - kept.length, events: 0, exchanges: 0, symbols: 0 };
  if (kept.length > 0) {
    const t0 = kept[0].end;
    const exchanges = [...new Set(kept.map((b) => b.exchange))].sort(cmp);
    for (const exchange_id of exchanges) events.push({ type: 'exchange', time: t0, exchange_id, legitimate: true, rank: 0 });
    const symbols = new Map<string, OhlcvBar>();
    for (const b of kept) if (!symbols.has(b.symbolId)) symbols.set(b.symbolId, b);
    for (const id of [...symbols.keys()].sort(cmp)) {
      const b = symbols.get(id)!;
      events.push({
        type: 'symbol',
        time: t0,
        symbol_id: id,
        exchange_id: b.exchange,
        symbol_type: 'SPOT',
        asset_id_base: b.base,
        asset_id_quote: b.quote,
      });
    }
    for (const b of kept) {
      events.push({ type: 'trade', time: b.end, symbol_id: b.symbolId, price: b.close, size: b.volume });
      if (quotes)
        events.push({
          type: 'quote',
          time: b.end,
          symbol_id: b.symbolId,
          bid_price: b.close,
          bid_size: '0',
          ask_price: b.close,
          ask_size: '0',
        });
    }
    Object.assign(stats, { exchanges: exchanges.length, symbols: symbols.size, first: t0, last: kept[kept.length - 1].end });
  }
  stats.events = events.length;
  return { events, stats };
}

/** Reads the bars of a CoinAPI OHLCV CSV file (gzipped when its name ends in `.gz`). */
export async function readBars(path: string): Promise<OhlcvBar[]> {
  const input = createReadStream(path);
  const lines = createInterface({ input: path.endsWith('.gz') ? input.pipe(createGunzip()) : input, crlfDelay: Number.POSITIVE_INFINITY });
  let read: ((row: string, line: number) => OhlcvBar | undefined) | undefined;
  const bars: OhlcvBar[] = [];
  let n = 0;
  for await (const l of lines) {
    n++;
    if (read === undefined) {
      read = barReader(l);
      continue;
    }
    const b = read(l, n);
    if (b) bars.push(b);
  }
  if (read === undefined) throw new Error(`"${path}" is empty`);
  return bars;
}

/** Converts a CoinAPI OHLCV CSV into an NDJSON event log at `out`; its counts. */
export async function convertOhlcv(csv: string, out: string, opts: { quotes?: boolean } = {}): Promise<ConversionStats> {
  const { events, stats } = barsToEvents(await readBars(csv), opts);
  const w = createWriteStream(out);
  for (const e of events) if (!w.write(`${JSON.stringify(e)}\n`)) await once(w, 'drain');
  w.end();
  await once(w, 'finish');
  return stats;
}
