/**
 * The pair table: one row per direct SPOT pair B/Q with its markets and its rate at the last tick
 * (rules 1, 9, 13), plus the bookkeeping that lets a tick recompute only the pairs that can change.
 *
 * @module
 */
import type { PairView } from '../../graph.js';
import { floatColumn, growF64, growI32, growU8, nullableColumn } from './columns.js';

/**
 * Multiplier of the base asset id in a numeric pair key, 2^21: keys are distinct while quote
 * asset ids stay below 2^21 (two million assets), and exact in float64 for any int32 base id.
 */
export const PAIR_KEY_STRIDE = 0x200000;

/** Numeric key of the ordered pair (base, quote) of asset ids (see {@link PAIR_KEY_STRIDE}). */
export function pairKey(base: number, quote: number): number {
  return base * PAIR_KEY_STRIDE + quote;
}

/** Snapshot of a {@link PairTable} (the `pairs` part of the engine snapshot; key order is part of the format). */
export interface PairTableJSON {
  base: number[];
  quote: number[];
  markets: number[][];
  rate: (number | null)[];
  time: (number | null)[];
  rank: (number | null)[];
  used: number[];
  volume: number[];
  fresh: number[];
}

/**
 * Typed-array columns indexed by pair id (ids in order of first sight). `rate`, `time` and `rank`
 * are NaN while the pair has no rate.
 */
export class PairTable {
  private readonly ids = new Map<number, number>();
  /** Markets of each pair, sorted by symbol id (the float sums of rules 1 and 11 run in that order). */
  readonly markets: number[][] = [];
  /** Number of pairs. */
  count = 0;
  /** Base asset id. */
  base = new Int32Array(0);
  /** Quote asset id. */
  quote = new Int32Array(0);
  /** Rate at the last tick (fresh or carried, rule 13), NaN when none. */
  rate = new Float64Array(0);
  /** Time of the rate (newest quote used), µs. */
  time = new Float64Array(0);
  /** Rank the rate was computed at (rule 9). */
  rank = new Float64Array(0);
  /** Markets used at the last computation. */
  used = new Int32Array(0);
  /** Sum of V of the markets used. */
  volume = new Float64Array(0);
  /** 1 when markets contributed at the last tick. */
  fresh = new Uint8Array(0);
  /** The pair is known to be tracked (auto-tracking checks this instead of its name). */
  tracked = new Uint8Array(0);
  /** A pair changed at this tick and is to be reported (pass 2 of a tick). */
  changed = new Uint8Array(0);
  /** A pair must be recomputed at the next tick (an input changed). */
  dirty = new Uint8Array(0);
  /** First tick at which time alone can change the pair (a candidate goes stale, or the carried rate expires). */
  nextCheck = new Float64Array(0);
  /** Pair ids sorted by (base, quote) asset id, cached until a pair is added. */
  private order: Int32Array | undefined;
  private viewCache: PairView | undefined;

  /** The id of the pair (base, quote) of asset ids, or undefined. */
  find(base: number, quote: number): number | undefined {
    return this.ids.get(pairKey(base, quote));
  }

  /** The id of the pair (base, quote), creating it (no rate, dirty) on first sight. */
  ensure(base: number, quote: number): number {
    const key = pairKey(base, quote);
    let id = this.ids.get(key);
    if (id !== undefined) return id;
    id = this.count++;
    this.ids.set(key, id);
    this.markets.push([]);
    const n = this.count;
    this.base = growI32(this.base, n);
    this.quote = growI32(this.quote, n);
    this.rate = growF64(this.rate, n, NaN);
    this.time = growF64(this.time, n, NaN);
    this.rank = growF64(this.rank, n, NaN);
    this.used = growI32(this.used, n);
    this.volume = growF64(this.volume, n);
    this.fresh = growU8(this.fresh, n);
    this.dirty = growU8(this.dirty, n);
    this.changed = growU8(this.changed, n);
    this.tracked = growU8(this.tracked, n);
    this.nextCheck = growF64(this.nextCheck, n, Infinity);
    this.dirty[id] = 1;
    this.order = undefined;
    this.base[id] = base;
    this.quote[id] = quote;
    return id;
  }

  /** `BASE/QUOTE` of pair pr, given the asset names. */
  label(pr: number, assetNames: readonly string[]): string {
    return `${assetNames[this.base[pr]]}/${assetNames[this.quote[pr]]}`;
  }

  /** Pair ids sorted by (base, quote) asset id string: the order changes are reported in within a tick. */
  sorted(assetNames: readonly string[]): Int32Array {
    if (this.order) return this.order;
    const ids = Array.from({ length: this.count }, (_, i) => i);
    ids.sort((a, b) => {
      const ba = assetNames[this.base[a]];
      const bb = assetNames[this.base[b]];
      if (ba !== bb) return ba < bb ? -1 : 1;
      const qa = assetNames[this.quote[a]];
      const qb = assetNames[this.quote[b]];
      return qa < qb ? -1 : qa > qb ? 1 : 0;
    });
    this.order = Int32Array.from(ids);
    return this.order;
  }

  /** The columns as a {@link PairView} (cached; rebuilt when a column is reallocated). */
  view(): PairView {
    if (this.viewCache && this.viewCache.count === this.count && this.viewCache.rate === this.rate) return this.viewCache;
    this.viewCache = {
      count: this.count,
      base: this.base,
      quote: this.quote,
      rate: this.rate,
      time: this.time,
      rank: this.rank,
      used: this.used,
      volume: this.volume,
      fresh: this.fresh,
    };
    return this.viewCache;
  }

  /** The table as plain JSON (see {@link PairTableJSON}). */
  toJSON(): PairTableJSON {
    const n = this.count;
    return {
      base: Array.from(this.base.subarray(0, n)),
      quote: Array.from(this.quote.subarray(0, n)),
      markets: this.markets.map((l) => [...l]),
      rate: nullableColumn(this.rate, n),
      time: nullableColumn(this.time, n),
      rank: nullableColumn(this.rank, n),
      used: Array.from(this.used.subarray(0, n)),
      volume: Array.from(this.volume.subarray(0, n)),
      fresh: Array.from(this.fresh.subarray(0, n)),
    };
  }

  /** Loads the market lists and rates of {@link toJSON} output; the rows must already exist ({@link ensure}). */
  restore(json: PairTableJSON): void {
    for (let pr = 0; pr < json.base.length; pr++) this.markets[pr] = [...json.markets[pr]];
    this.rate.set(floatColumn(json.rate));
    this.time.set(floatColumn(json.time));
    this.rank.set(floatColumn(json.rank));
    this.used.set(json.used);
    this.volume.set(json.volume);
    this.fresh.set(json.fresh);
  }
}
