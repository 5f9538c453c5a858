/**
 * Symbol records (docs/methodology.md section 10): per market, the union of its `symbol` events
 * and the values derived from its accepted quotes and trades as of a tick T: the first and last
 * quote and trade times, the traded volume of the last hour and day (exact), their value in USD,
 * and the price.
 *
 * Applying a quote costs two writes to a log, folded into the quote column in bulk; a trade a few
 * typed-array writes and one exact addition into its second's bin (tradeBins.ts, which keeps each
 * market's running hour and day totals). The values as of T are read when asked, always at the
 * engine's last tick: every event applied since that tick has a time in (T, T + 1 s], so per
 * market the latest time of the newest such second (`cur`) and the latest of the earlier seconds
 * (`prev`) are enough to answer "the last at or before T".
 *
 * @module
 */
import { ExactDecimal } from '../decimal.js';
import { parseSymbolId } from '../symbols.js';
import type { SymbolEvent, SymbolType, TimeUs } from '../types.js';
import type { EngineState } from './state.js';
import { floatColumn, growF64, nullableColumn } from './tables/columns.js';
import { FLOAT64_EXACT_CHARS } from './tables/markets.js';
import { US_PER_SECOND } from '../time.js';
import type { ChunkSpill } from './coldBins.js';
import { binOf, DAY_SECONDS, type LegacyTradeBinsJSON, TradeBins, type TradeBinsJSON } from './tradeBins.js';
/** Quotes logged before they are folded into the quote column. */
const LOG_LENGTH = 4096;

/** Which records {@link SymbolRecords.records} returns (every list matched case-insensitively). */
export interface SymbolFilter {
  /** Symbol id prefixes (`BITSTAMP_`, `BINANCE_SPOT_`): a record matches one of them. */
  symbolIds?: readonly string[];
  /** Exchange ids: a record of one of them. */
  exchangeIds?: readonly string[];
  /** Asset ids: a record whose base or quote is one of them. */
  assetIds?: readonly string[];
  /** Only the active (listed) symbols. */
  activeOnly?: boolean;
}

/**
 * A symbol record at a tick: the fields of its `symbol` events (later fields win; from its id
 * when it has none) and the values derived at the tick. Times in µs; volumes and price exact
 * decimal texts; absent = unknown or none.
 */
export interface SymbolRecord {
  symbolId: string;
  exchangeId: string;
  symbolType: SymbolType;
  assetIdBase?: string;
  assetIdQuote?: string;
  futureDeliveryTime?: TimeUs;
  optionTypeIsCall?: boolean;
  /** Exact decimal text. */
  optionStrikePrice?: string;
  optionExpirationTime?: TimeUs;
  dataStart?: TimeUs;
  dataEnd?: TimeUs;
  dataQuoteStart?: TimeUs;
  dataQuoteEnd?: TimeUs;
  dataTradeStart?: TimeUs;
  dataTradeEnd?: TimeUs;
  /** Base units traded in (T - 1 h, T], exact. */
  volume1hrs?: string;
  volume1hrsUsd?: number;
  /** Base units traded in (T - 24 h, T], exact. */
  volume1day?: string;
  volume1dayUsd?: number;
  /** The last trade's price at or before T, else the midpoint of the last quote rule 5 kept, exact. */
  price?: string;
  symbolIdExchange?: string;
  assetIdBaseExchange?: string;
  assetIdQuoteExchange?: string;
  pricePrecision?: number;
  sizePrecision?: number;
  /** False when its latest `symbol` event says `active: false` (delisted). */
  active: boolean;
}

/** Snapshot of {@link SymbolRecords} (the `symbols` part of the engine snapshot; key order is part of the format). */
export interface SymbolRecordsJSON {
  /** Per market: time of its first `symbol` event (NaN as null). */
  declared_since: (number | null)[];
  /** Per market: first, cur and prev quote times. */
  quote: (number | null)[];
  /** Per market: first, cur and prev trade times, the end of cur's second, and cur's and prev's prices. */
  trade: (number | null)[];
  /** The exact texts of those prices that a double does not hold exactly, by 2 × market (+ 1 for prev). */
  long_prices: [number, string][];
  /** The union of each market's `symbol` events at or before the last settled tick. */
  declared: (Declared | null)[];
  /** `symbol` events after it, with their market ids, by market (each market's in log order). */
  pending: [number, SymbolEvent][];
  /**
   * The traded size of each market and second a later tick can ask for (tradeBins.ts); a
   * snapshot written before the running totals has each market's chain instead (still restored).
   */
  bins: TradeBinsJSON | (LegacyTradeBinsJSON | null)[];
}

/** The fields of a `symbol` event a record keeps (its time and type are not record fields; an id may not name the assets). */
export type Declared = Omit<SymbolEvent, 'type' | 'time' | 'assetIdBase' | 'assetIdQuote'> & {
  assetIdBase?: string;
  assetIdQuote?: string;
};

/** The union of two declarations: `next`'s fields win; `active` is `next`'s (absent = listed). */
function mergeDeclared(prev: Declared | undefined, next: SymbolEvent): Declared {
  const { type: _type, time: _time, active, ...fields } = next;
  const { active: _was, ...kept }: Declared = prev ?? fields;
  return active === undefined ? { ...kept, ...fields } : { ...kept, ...fields, active };
}

/** Per-market fields of the quote column `q`: first, cur and prev quote times, and the end of cur's second. */
const Q_STRIDE = 4;
/** Per-market fields of the trade column `t`: those of `q`, cur's and prev's prices. */
const T_STRIDE = 6;
const FIRST = 0;
const CUR = 1;
const PREV = 2;
const CUR_END = 3;
const P_CUR = 4;
const P_PREV = 5;
/** The fields of `t` a snapshot keeps (all of them, in this order). */
const T_KEPT = [FIRST, CUR, PREV, CUR_END, P_CUR, P_PREV];

/**
 * Notes time `t` in a (cur, prev) pair at `col[o + CUR]`, `col[o + PREV]`: cur is the latest time
 * of the newest second seen, prev the latest of the earlier seconds. Returns 2 when `t` became cur
 * and the old cur moved to prev, 1 when `t` replaced cur, -1 when it became prev, 0 otherwise.
 * Ties: the later event wins. Also keeps `col[o + FIRST]` the earliest time.
 */
function noteTime(col: Float64Array, o: number, t: number): number {
  if (!(col[o + FIRST] <= t)) col[o + FIRST] = t;
  const c = col[o + CUR];
  const end = col[o + CUR_END]; // whole second ending cur's: t is in cur's second iff end - 1 s < t <= end
  if (!(t <= end)) {
    // a later second (or the first time): one division per second, none per event within it
    col[o + CUR_END] = binOf(t) * US_PER_SECOND;
    col[o + CUR] = t;
    if (Number.isNaN(c)) return 1;
    col[o + PREV] = c;
    return 2;
  }
  if (t > end - US_PER_SECOND) {
    if (t < c) return 0;
    col[o + CUR] = t;
    return 1;
  }
  if (t < col[o + PREV]) return 0; // false for a NaN prev
  col[o + PREV] = t;
  return -1;
}

/** The latest of a (cur, prev) pair at or before T (T the last tick), NaN when none. */
function latestAt(col: Float64Array, o: number, T: number): number {
  if (col[o + CUR] <= T) return col[o + CUR];
  return col[o + PREV] <= T ? col[o + PREV] : Number.NaN;
}

/** A time column value at or before T, else undefined. */
function timeAt(v: number, T: number): TimeUs | undefined {
  return v <= T ? v : undefined;
}

/** The exact midpoint of two decimal texts. */
function midpointText(bid: string, ask: string): string {
  return new ExactDecimal(bid).plus(ask).div(2).toString();
}

/** `volume * rate` rounded once to a float64, or undefined without a rate. */
function usdValue(volume: string, rate: number | undefined): number | undefined {
  return rate === undefined ? undefined : new ExactDecimal(volume).times(rate).toNumber();
}

/** Whether `v` equals one of `list` ignoring case (true without a list). */
function inList(v: string | undefined, list: readonly string[] | undefined): boolean {
  if (list === undefined) return true;
  if (v === undefined) return false;
  const u = v.toUpperCase();
  return list.some((x) => x.toUpperCase() === u);
}

/**
 * Whether a record passes a filter (symbol id prefixes, exchange ids, asset ids, active only).
 *
 * @example
 * ```ts
 * matchesSymbolFilter(record, { symbolIds: ['BITSTAMP_'], assetIds: ['BTC'] });
 * ```
 */
export function matchesSymbolFilter(r: SymbolRecord, f: SymbolFilter): boolean {
  if (f.activeOnly && !r.active) return false;
  if (!inList(r.exchangeId, f.exchangeIds)) return false;
  if (f.assetIds !== undefined && !inList(r.assetIdBase, f.assetIds) && !inList(r.assetIdQuote, f.assetIds)) return false;
  if (f.symbolIds === undefined) return true;
  const id = r.symbolId.toUpperCase();
  return f.symbolIds.some((p) => id.startsWith(p.toUpperCase()));
}

/** The record fields of a declaration (or of what the market table knows), in {@link SymbolRecord} order. */
function identity(symbolId: string, d: Declared): SymbolRecord {
  const r: SymbolRecord = { symbolId, exchangeId: d.exchangeId, symbolType: d.symbolType, active: d.active !== false };
  if (d.assetIdBase !== undefined) r.assetIdBase = d.assetIdBase;
  if (d.assetIdQuote !== undefined) r.assetIdQuote = d.assetIdQuote;
  if (d.futureDeliveryTime !== undefined) r.futureDeliveryTime = d.futureDeliveryTime;
  if (d.optionTypeIsCall !== undefined) r.optionTypeIsCall = d.optionTypeIsCall;
  if (d.optionStrikePrice !== undefined) r.optionStrikePrice = d.optionStrikePrice.text;
  if (d.optionExpirationTime !== undefined) r.optionExpirationTime = d.optionExpirationTime;
  return r;
}

/** Adds the exchange-side ids and precisions of a declaration to a record (after its derived values). */
function exchangeSide(r: SymbolRecord, d: Declared): void {
  if (d.symbolIdExchange !== undefined) r.symbolIdExchange = d.symbolIdExchange;
  if (d.assetIdBaseExchange !== undefined) r.assetIdBaseExchange = d.assetIdBaseExchange;
  if (d.assetIdQuoteExchange !== undefined) r.assetIdQuoteExchange = d.assetIdQuoteExchange;
  if (d.pricePrecision !== undefined) r.pricePrecision = d.pricePrecision;
  if (d.sizePrecision !== undefined) r.sizePrecision = d.sizePrecision;
}

/**
 * The symbol records of an engine's markets (see the module description). Indexed by market id;
 * the columns grow with the market table. Per market, the quote times and the trade times share
 * one stride of a column each, so applying an event touches one place per column.
 */
export class SymbolRecords {
  /** Time of the first `symbol` event per market (NaN: none; -Infinity: restored from a snapshot without records). */
  private declaredSince = new Float64Array(0);
  private q = new Float64Array(0);
  private t = new Float64Array(0);
  /** Exact texts of the trade prices a double does not hold exactly (rare), by 2 m (cur) and 2 m + 1 (prev). */
  private longPrices = new Map<number, string>();
  private bins = new TradeBins();
  /** Where the bins' older chunks go (TradeBins.useSpill), kept for the bins restored. */
  private spill: ChunkSpill | undefined;
  private declared: (Declared | undefined)[] = [];
  private pending: [number, SymbolEvent][] = [];
  /** Quotes applied since the last fold: market ids and times. */
  private readonly quoteLogM = new Int32Array(LOG_LENGTH);
  private readonly quoteLogT = new Float64Array(LOG_LENGTH);
  private quoteLogLength = 0;

  /** Makes room for market ids < n. */
  private ensure(n: number): void {
    if (n <= this.declaredSince.length) return;
    this.declaredSince = growF64(this.declaredSince, n, NaN);
    const cap = this.declaredSince.length;
    this.q = growF64(this.q, Q_STRIDE * cap, NaN);
    this.t = growF64(this.t, T_STRIDE * cap, NaN);
    // Dense from the start (never holey by writes past the end), for fast indexed writes.
    while (this.declared.length < cap) this.declared.push(undefined);
  }

  /**
   * An accepted quote of market m (kept or discarded by rule 5: both are accepted events). Only
   * logged here (two writes in sequence); the log is folded into `q` when full and before any read
   * (a fold touches each market's memory in a tight loop, cheaper than once per event among the
   * rest of the event's work).
   */
  onQuote(m: number, t: number): void {
    const n = this.quoteLogLength;
    this.quoteLogM[n] = m;
    this.quoteLogT[n] = t;
    this.quoteLogLength = n + 1;
    if (n + 1 === LOG_LENGTH) this.foldQuotes();
  }

  /** Applies the logged quotes to `q`, in log order. */
  private foldQuotes(): void {
    const n = this.quoteLogLength;
    for (let i = 0; i < n; i++) {
      const m = this.quoteLogM[i];
      if (m >= this.declaredSince.length) this.ensure(m + 1);
      noteTime(this.q, Q_STRIDE * m, this.quoteLogT[i]);
    }
    this.quoteLogLength = 0;
  }

  /**
   * An accepted trade of market m; `oldestTick` is the earliest tick still to be asked for (the
   * last tick, or T0 before it): trades a day or more before it count for the times and price only.
   * `price`: its float; `longPrice`: its exact text when longer than {@link FLOAT64_EXACT_CHARS}
   * characters, else undefined; `size`: its size, `sizeText` its exact text when that is not
   * `String(size)` (else undefined or that).
   */
  onTrade(
    m: number,
    t: number,
    price: number,
    longPrice: string | undefined,
    size: number,
    sizeText: string | undefined,
    oldestTick: number,
  ): void {
    if (m >= this.declaredSince.length) this.ensure(m + 1);
    const col = this.t;
    const o = T_STRIDE * m;
    const r = noteTime(col, o, t);
    if (r === 2) this.movePrice(m);
    if (r > 0) this.setPrice(m, 0, price, longPrice);
    else if (r < 0) this.setPrice(m, 1, price, longPrice);
    const k = oldestTick / US_PER_SECOND;
    const b = binOf(t);
    if (b <= k - DAY_SECONDS) return;
    this.bins.add(m, b, sizeText, k, size);
  }

  /** Sets market m's cur (`which` 0) or prev (1) trade price: a float, and its text when the float is not exact. */
  private setPrice(m: number, which: number, price: number, longPrice: string | undefined): void {
    this.t[T_STRIDE * m + P_CUR + which] = price;
    const key = 2 * m + which;
    if (longPrice !== undefined) this.longPrices.set(key, longPrice);
    else if (this.longPrices.size !== 0) this.longPrices.delete(key);
  }

  /** Market m's cur trade price becomes its prev one. */
  private movePrice(m: number): void {
    this.t[T_STRIDE * m + P_PREV] = this.t[T_STRIDE * m + P_CUR];
    if (this.longPrices.size === 0) return;
    const text = this.longPrices.get(2 * m);
    if (text === undefined) this.longPrices.delete(2 * m + 1);
    else this.longPrices.set(2 * m + 1, text);
  }

  /** The exact text of market m's cur (0) or prev (1) trade price. */
  private priceText(m: number, which: number): string {
    return this.longPrices.get(2 * m + which) ?? new ExactDecimal(this.t[T_STRIDE * m + P_CUR + which]).toString();
  }

  /** A `symbol` event of market m; `lastTick` is the engine's (the events at or before it are settled first). */
  onSymbol(m: number, e: SymbolEvent, lastTick: number | undefined): void {
    if (m >= this.declaredSince.length) this.ensure(m + 1);
    if (!(this.declaredSince[m] <= e.time)) this.declaredSince[m] = e.time;
    if (lastTick !== undefined) this.settle(lastTick);
    this.pending.push([m, e]);
  }

  /** Folds the pending `symbol` events at or before T into the declarations, in log order. */
  private settle(T: number): void {
    if (this.pending.length === 0) return;
    const later: [number, SymbolEvent][] = [];
    for (const p of this.pending) {
      if (p[1].time > T) later.push(p);
      else this.declared[p[0]] = mergeDeclared(this.declared[p[0]], p[1]);
    }
    this.pending = later;
  }

  /** Whether market m had an accepted event (symbol, quote or trade) at or before T. */
  private knownAt(m: number, T: number): boolean {
    return this.declaredSince[m] <= T || this.q[Q_STRIDE * m] <= T || this.t[T_STRIDE * m] <= T;
  }

  /**
   * The records at tick T (the engine's last tick) that pass `filter`, sorted by symbol id.
   * `usdRate(asset)` is rate(asset, USD) at T, fresh or carried, undefined when there is none.
   */
  records(s: EngineState, T: number | undefined, filter: SymbolFilter, usdRate: (asset: string) => number | undefined): SymbolRecord[] {
    if (T === undefined) return [];
    this.settle(T);
    this.foldQuotes();
    const out: SymbolRecord[] = [];
    const names = s.markets.index.names;
    for (let m = 0; m < names.length && m < this.declaredSince.length; m++) {
      if (!this.knownAt(m, T)) continue;
      const d = this.declared[m] ?? this.fromId(s, m);
      const r = identity(names[m], d);
      if (!matchesSymbolFilter(r, filter)) continue;
      this.derive(s, m, T, r, usdRate);
      exchangeSide(r, d);
      out.push(r);
    }
    return out.sort((a, b) => (a.symbolId < b.symbolId ? -1 : a.symbolId > b.symbolId ? 1 : 0));
  }

  /** What a market with no `symbol` event at or before T is: its id's pattern, else the market table's row. */
  private fromId(s: EngineState, m: number): Declared {
    const symbolId = s.markets.index.names[m];
    const info = parseSymbolId(symbolId);
    if (info)
      return {
        symbolId,
        exchangeId: info.exchangeId,
        symbolType: info.symbolType,
        assetIdBase: info.assetIdBase,
        assetIdQuote: info.assetIdQuote,
      };
    const M = s.markets;
    const asset = (a: number) => (a >= 0 ? s.assets.names[a] : undefined);
    return {
      symbolId,
      exchangeId: s.exchanges.index.names[M.exchange[m]] ?? '',
      symbolType: M.type[m],
      assetIdBase: asset(M.base[m]),
      assetIdQuote: asset(M.quote[m]),
    };
  }

  /** The values of market m derived at T, into `r` (section 10's table). */
  private derive(s: EngineState, m: number, T: number, r: SymbolRecord, usdRate: (asset: string) => number | undefined): void {
    const qs = timeAt(this.q[Q_STRIDE * m + FIRST], T);
    const qe = timeAt(latestAt(this.q, Q_STRIDE * m, T), T);
    const ts = timeAt(this.t[T_STRIDE * m + FIRST], T);
    const te = timeAt(latestAt(this.t, T_STRIDE * m, T), T);
    const starts = [qs, ts].filter((v): v is number => v !== undefined);
    const ends = [qe, te].filter((v): v is number => v !== undefined);
    if (starts.length > 0) r.dataStart = Math.min(...starts);
    if (ends.length > 0) r.dataEnd = Math.max(...ends);
    if (qs !== undefined) r.dataQuoteStart = qs;
    if (qe !== undefined) r.dataQuoteEnd = qe;
    if (ts !== undefined) r.dataTradeStart = ts;
    if (te !== undefined) r.dataTradeEnd = te;
    this.volumes(m, T, r, r.assetIdBase === undefined ? undefined : usdRate(r.assetIdBase));
    const price = this.priceAt(s, m, T, te);
    if (price !== undefined) r.price = price;
  }

  /** volume_1hrs, volume_1day and their USD values at T. */
  private volumes(m: number, T: number, r: SymbolRecord, rate: number | undefined): void {
    const K = T / US_PER_SECOND;
    r.volume1hrs = this.bins.hourText(m, K);
    const h = usdValue(r.volume1hrs, rate);
    if (h !== undefined) r.volume1hrsUsd = h;
    r.volume1day = this.bins.dayText(m, K);
    const d = usdValue(r.volume1day, rate);
    if (d !== undefined) r.volume1dayUsd = d;
  }

  /** The last trade's price at or before T (`te` its time), else the committed quote's exact midpoint. */
  private priceAt(s: EngineState, m: number, T: number, te: number | undefined): string | undefined {
    if (te !== undefined) return this.priceText(m, this.t[T_STRIDE * m + CUR] <= T ? 0 : 1);
    if (Number.isNaN(s.markets.quoteTime(m))) return undefined;
    const [bid, ask] = s.markets.exactTexts(m);
    return midpointText(bid, ask);
  }

  /** Puts the older trade bins' chunks in `spill` (TradeBins.useSpill), now and after a restore. */
  spillBins(spill: ChunkSpill): void {
    this.spill = spill;
    this.bins.useSpill(spill);
  }

  /**
   * Plain-JSON state (see {@link SymbolRecordsJSON}) of markets < n, canonical: the logs folded
   * and the `symbol` events at or before `lastTick` (the last tick, or T0 before it) settled.
   */
  toJSON(n: number, lastTick: number | undefined, packed = false): SymbolRecordsJSON {
    this.ensure(n);
    if (lastTick !== undefined) this.settle(lastTick);
    this.foldQuotes();
    const trade = nullableColumn(this.t, T_STRIDE * n).filter((_, k) => T_KEPT.includes(k % T_STRIDE));
    return {
      declared_since: nullableColumn(this.declaredSince, n),
      quote: nullableColumn(this.q, Q_STRIDE * n),
      trade,
      long_prices: [...this.longPrices].sort((a, b) => a[0] - b[0]),
      declared: this.declared.slice(0, n).map((d) => (d === undefined ? null : structuredClone(d))),
      pending: structuredClone(this.pending).sort((a, b) => a[0] - b[0]),
      bins: this.bins.toJSON(lastTick === undefined ? -Infinity : lastTick / US_PER_SECOND, packed),
    };
  }

  /** Loads {@link toJSON} output; without one (a snapshot written before records existed), every market is a record with no data. */
  restore(json: SymbolRecordsJSON | undefined, n: number, lastTick: number | undefined): void {
    this.ensure(n);
    if (json === undefined) {
      this.declaredSince.fill(-Infinity, 0, n);
      return;
    }
    this.declaredSince.set(floatColumn(json.declared_since));
    this.q.set(floatColumn(json.quote));
    floatColumn(json.trade).forEach((v, k) => {
      this.t[T_STRIDE * Math.floor(k / T_KEPT.length) + T_KEPT[k % T_KEPT.length]] = v;
    });
    this.longPrices = new Map(json.long_prices);
    json.declared.forEach((d, m) => {
      this.declared[m] = d === null ? undefined : structuredClone(d);
    });
    this.pending = structuredClone(json.pending);
    this.bins = TradeBins.fromJSON(json.bins, lastTick === undefined ? undefined : lastTick / US_PER_SECOND, undefined, this.spill);
  }
}
