/**
 * Rates between any two assets as of one tick, with their answers cached: a {@link PairTable}
 * (the pair rows a replay database holds for that tick, searched by the engine's graph, rule 12)
 * or an {@link EngineSource} (an engine's state at its last tick). The CLI and the service answer
 * from these.
 *
 * @module
 */
import type { CrossMethod } from '../core/config.js';
import type { Engine } from '../core/engine.js';
import { RateGraph, type PairView } from '../core/graph.js';
import { formatTime } from '../core/time.js';
import { wireNumber } from '../core/wire.js';

/** The interface's ExchangeRate (field order of the schema). */
export interface ExchangeRate {
  time: string;
  asset_id_base: string;
  asset_id_quote: string;
  rate: number;
}

/** A rate answer with its JSON text, cached per tick. */
export interface CachedRate {
  /** The answer as written: its rate rounded for output (wireNumber, docs/methodology.md section 7). */
  readonly value: ExchangeRate;
  /** `JSON.stringify(value)`, computed once. */
  readonly json: string;
  /** The rate as computed (not rounded), for arithmetic on it (an inverse, a P&L). */
  readonly raw: number;
  /** µs time of the rate (unformatted). */
  readonly timeUs: number;
}

/** A cached rate answer of the interface's ExchangeRate shape (its rate as written, {@link CachedRate.value}). */
export function makeRate(base: string, quote: string, rate: number, timeUs: number): CachedRate {
  const value: ExchangeRate = { time: formatTime(timeUs), asset_id_base: base, asset_id_quote: quote, rate: wireNumber(rate) };
  return { value, json: JSON.stringify(value), raw: rate, timeUs };
}

/** Row of a pair's state at a tick (the `rates` table's columns). */
export interface PairRow {
  base: string;
  quote: string;
  rate: number;
  time: number;
  rank: number | null;
  used: number;
  fresh: number;
  /** Sum of V of the markets used (the layered cross method weighs by it). */
  volume: number;
}

/**
 * The pair table as of one tick with its graph: rates between any two assets by the engine's
 * BFS search (rule 12), answers cached.
 */
export class PairTable {
  private readonly names: string[] = [];
  private readonly ids = new Map<string, number>();
  private readonly view: PairView;
  private readonly graph: RateGraph;
  private readonly cache = new Map<string, CachedRate | null>();
  private sortedAssets: string[] | undefined;

  /**
   * @param tick - the tick (µs) the rows describe; identity rates carry it as their time
   * @param rows - one row per pair with a rate (not expired)
   * @param method - the cross-rate method of the run (rule 12)
   */
  constructor(
    readonly tick: number,
    rows: readonly PairRow[],
    private readonly method: CrossMethod = 'bfs',
  ) {
    const id = (a: string): number => {
      let i = this.ids.get(a);
      if (i === undefined) {
        i = this.names.length;
        this.ids.set(a, i);
        this.names.push(a);
      }
      return i;
    };
    const n = rows.length;
    this.view = {
      count: n,
      base: Int32Array.from(rows, (r) => id(r.base)),
      quote: Int32Array.from(rows, (r) => id(r.quote)),
      rate: Float64Array.from(rows, (r) => r.rate),
      time: Float64Array.from(rows, (r) => r.time),
      rank: Float64Array.from(rows, (r) => r.rank ?? 0),
      used: Int32Array.from(rows, (r) => r.used),
      volume: Float64Array.from(rows, (r) => r.volume),
      fresh: Uint8Array.from(rows, (r) => r.fresh),
    };
    this.graph = new RateGraph((i) => this.names[i]);
    this.graph.sync(this.view, this.names.length, 1);
  }

  /** Assets with at least one rate at this tick, sorted. */
  assets(): string[] {
    if (!this.sortedAssets) this.sortedAssets = [...this.names].sort();
    return this.sortedAssets;
  }

  /** rate(base, quote) for resolved asset ids, or undefined when there is no path. */
  rate(base: string, quote: string): CachedRate | undefined {
    const key = `${base}/${quote}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit ?? undefined;
    let out: CachedRate | null = null;
    if (base === quote) out = makeRate(base, quote, 1, this.tick);
    else {
      const b = this.ids.get(base);
      const q = this.ids.get(quote);
      if (b !== undefined && q !== undefined) {
        const r = this.graph.cross(b, q, this.view, this.method, 1);
        if (r) out = makeRate(base, quote, r.rate, r.time);
      }
    }
    this.cache.set(key, out);
    return out ?? undefined;
  }
}

/** Rates between any two assets at one tick: a {@link PairTable}, or an engine's state. */
export interface RateSource {
  readonly tick: number;
  /** rate(base, quote) of resolved ids, or undefined when there is no path. */
  rate(base: string, quote: string): CachedRate | undefined;
  /** The assets with a rate here, sorted: the ids asked-for assets resolve to, and the candidate quote assets of "all rates". */
  assets(): string[];
}

/** An engine's state at its last tick as a {@link RateSource} (answers cached). */
export class EngineSource implements RateSource {
  readonly tick: number;
  private readonly sorted: string[];
  private readonly cache = new Map<string, CachedRate | null>();

  constructor(private readonly engine: Engine) {
    this.tick = engine.lastTickTime!;
    this.sorted = engine.assetIds();
  }

  rate(base: string, quote: string): CachedRate | undefined {
    const key = `${base}/${quote}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const r = this.engine.rate(base, quote);
    const out = r ? makeRate(r.base, r.quote, r.rate, r.time) : null;
    this.cache.set(key, out);
    return out ?? undefined;
  }

  assets(): string[] {
    return this.sorted;
  }
}
