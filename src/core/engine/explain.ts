/**
 * Provenance (docs/methodology.md section 6): why a pair has the rate it has at the last tick
 * (markets used and left out, weights, outliers) and how a rate was reached (path and legs), or
 * why there is none (whyNoRate.ts).
 * Recomputes the pairs with a collector; never changes the engine's state or results.
 *
 * @module
 */
import type { MarketProvenance, PairExplanation, RateExplanation } from '../provenance.js';
import { formatTime, US_PER_SECOND } from '../time.js';
import type { PairComputer, ProvenanceCollector } from './pairCompute.js';
import type { RateQueries } from './queries.js';
import type { EngineState } from './state.js';
import { Q_ASK, Q_ASK_SIZE, Q_BID, Q_BID_SIZE, WhyNot } from './tables/markets.js';
import type { NoRateDiagnosis } from './whyNoRate.js';

/** Text of a market's {@link WhyNot} code, for the `not_eligible` exclusion. */
export function ineligibleDetail(whyNot: number): string {
  switch (whyNot) {
    case WhyNot.notLegitimate:
      return 'its exchange was not legitimate at the last eligibility refresh';
    case WhyNot.noVolume:
      return `no traded volume in the 24 h before the last eligibility refresh (V = 0)`;
    case WhyNot.assetsUnknown:
      return 'base or quote asset unknown';
    default:
      return 'listed after the last eligibility refresh: eligible from the next refresh if it trades';
  }
}

/** Provenance of market m at tick T: its ids and rank and, once it has a quote, the quote and V. */
export function marketProvenance(state: EngineState, m: number, T: number): MarketProvenance {
  const M = state.markets;
  const X = state.exchanges;
  const x = M.exchange[m];
  const prov: MarketProvenance = {
    symbol_id: M.index.names[m],
    exchange_id: X.index.names[x],
    rank: X.rank[x],
  };
  const tq = M.quoteTime(m);
  if (!Number.isNaN(tq)) {
    prov.bid_price = M.quoteAt(m, Q_BID);
    prov.ask_price = M.quoteAt(m, Q_ASK);
    prov.bid_size = M.quoteAt(m, Q_BID_SIZE);
    prov.ask_size = M.quoteAt(m, Q_ASK_SIZE);
    prov.quote_time = formatTime(tq);
    prov.quote_age_seconds = (T - tq) / US_PER_SECOND;
    prov.volume = M.volume[m];
  }
  return prov;
}

/** Builds pair and rate explanations from the committed state. */
export class Explainer {
  constructor(
    private readonly state: EngineState,
    private readonly computer: PairComputer,
    private readonly queries: RateQueries,
    private readonly diagnosis: NoRateDiagnosis,
  ) {}

  /** Explains one direct pair at the last tick, or undefined (unknown pair, or no tick yet). */
  explainPair(base: string, quote: string): PairExplanation | undefined {
    const s = this.state;
    const b = s.assets.get(base);
    const q = s.assets.get(quote);
    if (b === undefined || q === undefined || s.lastTick === undefined) return undefined;
    const pr = s.pairs.find(b, q);
    if (pr === undefined) return undefined;
    return this.explainPairId(pr);
  }

  private explainPairId(pr: number): PairExplanation {
    const s = this.state;
    const M = s.markets;
    const P = s.pairs;
    const cfg = s.config;
    const T = s.lastTick!;
    const collect: ProvenanceCollector = { used: [], excluded: [] };
    const res = this.computer.compute(pr, T, collect);
    const base = s.assets.names[P.base[pr]];
    const quote = s.assets.names[P.quote[pr]];
    // Non-SPOT markets of the same assets, for completeness.
    for (let m = 0; m < M.index.size; m++) {
      if (M.type[m] !== 'SPOT' && M.base[m] === P.base[pr] && M.quote[m] === P.quote[pr]) {
        collect.excluded.push({ ...marketProvenance(s, m, T), reason: 'not_spot', detail: `symbol type ${M.type[m]}` });
      }
    }
    const sc = this.computer.scratch;
    const st = res ? sc.stats : undefined;
    const rate = P.rate[pr];
    return {
      asset_id_base: base,
      asset_id_quote: quote,
      tick: formatTime(T),
      rate: Number.isNaN(rate) ? null : rate,
      time: Number.isNaN(rate) ? null : formatTime(P.time[pr]),
      fresh: P.fresh[pr] === 1,
      rank: res ? this.computer.rank : Number.isNaN(P.rank[pr]) ? null : P.rank[pr],
      weighting: cfg.weighting,
      passive_fallback: res ? sc.fallback : false,
      outliers: st
        ? {
            method: st.method,
            centre: Number.isNaN(st.centre) ? null : st.centre,
            scale: Number.isNaN(st.scale) ? null : st.scale,
            sigmas: cfg.outlierSigmas,
            dropped: st.dropped,
            exact: st.exact,
          }
        : null,
      used: collect.used,
      excluded: collect.excluded,
    };
  }

  /** Explains rate(base, quote) at the last tick: the path and, per leg, its pair explanation. */
  explain(base: string, quote: string): RateExplanation {
    const s = this.state;
    const T = s.lastTick;
    const r = T === undefined ? undefined : this.queries.rate(base, quote);
    if (T === undefined || !r) {
      // No rate: the first reason, in the order of the checks (whyNoRate.ts).
      const why = this.diagnosis.why(base, quote)!;
      return {
        asset_id_base: base,
        asset_id_quote: quote,
        tick: T === undefined ? null : formatTime(T),
        kind: 'none',
        rate: null,
        time: null,
        fresh: false,
        method: s.config.crossMethod,
        path: [],
        legs: [],
        ...why,
      };
    }
    const cr = this.queries.crossIds(base, quote)!;
    const names = s.assets.names;
    return {
      asset_id_base: base,
      asset_id_quote: quote,
      tick: formatTime(T),
      kind: r.kind,
      rate: r.rate,
      time: formatTime(r.time),
      fresh: r.fresh,
      method: cr.method,
      path: r.path,
      legs: cr.legs.map((l) => ({
        pair: s.pairs.label(l.pair, names),
        from: names[l.from],
        to: names[l.to],
        inverted: l.inverted,
        rate: l.rate,
        time: formatTime(l.time),
        rank: l.rank,
        fresh: l.fresh,
        explanation: this.explainPairId(l.pair),
      })),
    };
  }
}
