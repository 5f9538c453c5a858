/**
 * Rate look-ups on the state as of the last tick (rules 1, 12, 13): one rate, every rate from an
 * asset, and the lists of pairs.
 *
 * @module
 */
import type { CrossResult } from '../graph.js';
import type { EngineState } from './state.js';
import type { RateResult, RatesOptions } from './types.js';

/** Columns filled by {@link RateQueries.ratesFrom}, indexed by asset id. */
export interface AllRates {
  rate: Float64Array;
  time: Float64Array;
  fresh: Uint8Array;
}

/** The engine's read-side: answers from the pair table and the graph, never changing results. */
export class RateQueries {
  private allOut: AllRates = { rate: new Float64Array(0), time: new Float64Array(0), fresh: new Uint8Array(0) };
  private toOut: AllRates = { rate: new Float64Array(0), time: new Float64Array(0), fresh: new Uint8Array(0) };

  constructor(private readonly state: EngineState) {}

  /** The graph's answer for (base, quote) at the last tick, in asset ids; identity for base = quote. */
  crossIds(base: string, quote: string): CrossResult | undefined {
    const s = this.state;
    if (s.lastTick === undefined) return undefined;
    if (base === quote)
      return { rate: 1, time: s.lastTick, fresh: true, path: [], legs: [], minRank: Infinity, method: s.config.crossMethod };
    const b = s.assets.get(base);
    const q = s.assets.get(quote);
    if (b === undefined || q === undefined) return undefined;
    return s.graph.cross(b, q, s.pairs.view(), s.config.crossMethod, s.tickCounter);
  }

  /** rate(base, quote) as of the last tick: identity, direct, inverse or cross; undefined when none. */
  rate(base: string, quote: string): RateResult | undefined {
    const r = this.crossIds(base, quote);
    if (!r) return undefined;
    if (base === quote) return { base, quote, rate: 1, time: this.state.lastTick!, kind: 'identity', fresh: true, path: [base] };
    const direct = r.legs.length === 1 && r.legs[0].from === r.path[0];
    const kind = direct ? (r.legs[0].inverted ? 'inverse' : 'direct') : 'cross';
    const names = this.state.assets.names;
    return { base, quote, rate: r.rate, time: r.time, kind, fresh: r.fresh, path: r.path.map((a) => names[a]) };
  }

  /** Cross rates of `base` against every asset (one search, rule 12), into reused columns; undefined when unknown or before the first tick. */
  ratesFrom(base: string): AllRates | undefined {
    return this.allRates(base, 'from');
  }

  /**
   * rate(asset, `quote`) of every asset at once (rule 12, the answers of {@link rate} for each),
   * into reused columns indexed by asset id (NaN: none; the identity at `quote` itself);
   * undefined when `quote` is unknown or before the first tick.
   */
  ratesTo(quote: string): AllRates | undefined {
    return this.allRates(quote, 'to');
  }

  /** {@link ratesFrom} (`from` the asset) or {@link ratesTo} (`to` it), each into its own columns. */
  private allRates(asset: string, way: 'from' | 'to'): AllRates | undefined {
    const s = this.state;
    const a = s.assets.get(asset);
    if (a === undefined || s.lastTick === undefined) return undefined;
    const n = s.assets.size;
    let out = way === 'from' ? this.allOut : this.toOut;
    if (out.rate.length !== n) {
      out = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
      if (way === 'from') this.allOut = out;
      else this.toOut = out;
    }
    const search = way === 'from' ? s.graph.crossAll : s.graph.crossAllTo;
    search.call(s.graph, a, s.pairs.view(), s.config.crossMethod, s.tickCounter, out);
    out.time[a] = s.lastTick;
    return out;
  }

  /** Rates of `base` against every asset it reaches (or `opts.filter`), sorted by asset id. */
  rates(base: string, opts: RatesOptions): RateResult[] {
    const s = this.state;
    const all = this.ratesFrom(base);
    if (!all) return opts.filter?.includes(base) && s.lastTick !== undefined ? [this.rate(base, base)!] : [];
    const targets = opts.filter ? [...new Set(opts.filter)] : [...s.assets.names].filter((a) => a !== base);
    targets.sort();
    const P = s.pairs;
    const out: RateResult[] = [];
    for (const q of targets) {
      const qi = s.assets.get(q);
      if (qi === undefined || Number.isNaN(all.rate[qi])) continue;
      let kind: RateResult['kind'] = q === base ? 'identity' : 'cross';
      if (kind === 'cross') {
        const direct = P.find(s.assets.get(base)!, qi);
        const inverse = P.find(qi, s.assets.get(base)!);
        if ((direct !== undefined && !Number.isNaN(P.rate[direct])) || (inverse !== undefined && !Number.isNaN(P.rate[inverse]))) {
          kind = this.rate(base, q)!.kind;
        }
      }
      const rate = opts.invert ? 1 / all.rate[qi] : all.rate[qi];
      out.push({
        base,
        quote: q,
        rate,
        time: all.time[qi],
        kind,
        fresh: all.fresh[qi] === 1,
        path: kind === 'cross' ? [] : kind === 'identity' ? [base] : [base, q],
      });
    }
    return out;
  }

  /** Direct pairs with a rate at the last tick, sorted by `BASE/QUOTE`. */
  pairs(): { base: string; quote: string; rate: number; time: number; rank: number; used: number; fresh: boolean }[] {
    const P = this.state.pairs;
    const names = this.state.assets.names;
    const out = [];
    for (let pr = 0; pr < P.count; pr++) {
      if (Number.isNaN(P.rate[pr])) continue;
      out.push({
        base: names[P.base[pr]],
        quote: names[P.quote[pr]],
        rate: P.rate[pr],
        time: P.time[pr],
        rank: P.rank[pr],
        used: P.used[pr],
        fresh: P.fresh[pr] === 1,
      });
    }
    return out.sort((a, b) => (`${a.base}/${a.quote}` < `${b.base}/${b.quote}` ? -1 : 1));
  }

  /** Every declared direct SPOT pair (with or without a rate), as sorted `BASE/QUOTE` strings. */
  listedPairs(): string[] {
    const P = this.state.pairs;
    const out: string[] = [];
    for (let pr = 0; pr < P.count; pr++) out.push(P.label(pr, this.state.assets.names));
    return out.sort();
  }
}
