/**
 * One pair at one tick (rules 3-9, 11, 1) on the committed state: picks the markets that may
 * contribute, keeps the highest rank, fills the {@link PairScratch} and hands it to
 * {@link computePairRateInto}. The tick pipeline calls it without provenance (nothing allocated
 * per market); explain calls it with a collector.
 *
 * @module
 */
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.js';
import type { ExclusionReason } from '../eligibility.js';
import { marketPrice, passiveVolume } from '../midpoint.js';
import { computePairRateInto, PairScratch } from '../pairRate.js';
import type { MarketProvenance } from '../provenance.js';
import { topRank, usesRank } from '../ranking.js';
import { isFresh } from '../staleness.js';
import { US_PER_SECOND } from '../time.js';
import { ineligibleDetail, marketProvenance } from './explain.js';
import type { EngineState } from './state.js';
import { Q_TIME, S_EXCHANGE, S_MARKET, S_VOLUME, SLOT_STRIDE } from './tables/markets.js';

/** Receives the markets used and left out when a pair is computed for explain (section 6 provenance). */
export interface ProvenanceCollector {
  used: MarketProvenance[];
  excluded: MarketProvenance[];
}

/** First whole-second tick strictly after `timeUs`: when a deadline at `timeUs` has passed (rules 7, 13). */
export function firstTickAfter(timeUs: number): number {
  return (Math.floor(timeUs / US_PER_SECOND) + 1) * US_PER_SECOND;
}

/**
 * Computes pair rates into a reusable scratch; after {@link compute} returns true the result is in
 * `scratch` (rate, time, used, volume) and {@link rank}.
 */
export class PairComputer {
  /** Per-market columns of the pair being computed, and its result. */
  readonly scratch = new PairScratch();
  /** Rank used by the last {@link compute} (rule 9), -Infinity when no market was a candidate. */
  rank = -Infinity;
  /** Set by {@link compute}: earliest staleness deadline of the candidates at the rank used. */
  candidateDeadline = Infinity;
  /** Set by {@link compute}: the candidates at the rank used, `scratch.market[0 .. candidates)`. */
  candidates = 0;
  /** Layout slot of each candidate of the pair being computed; after {@link compute}, `slots[0 .. candidates)` of the candidates at the rank used. */
  slots = new Int32Array(8);
  /** Exact inputs of the j-th scratch slot, for rule 11's boundary fall-back (bound once). */
  private readonly exactFor = (j: number): { p: Decimal; w: Decimal } =>
    this.exactPriceWeight(this.scratch.market[j], this.scratch.useVolume);

  constructor(private readonly state: EngineState) {}

  /**
   * Rules 3-9, 11, 1 for pair `pr` at tick T on the committed state; false when no market
   * contributes. With `collect`, also fills provenance (explain; the tick path passes undefined).
   */
  compute(pr: number, T: number, collect: ProvenanceCollector | undefined): boolean {
    const state = this.state;
    const M = state.markets;
    const X = state.exchanges;
    // The pair's markets in consecutive slots of the pair-major layout (same order as its list).
    if (!M.layoutValid || pr + 1 >= M.pStart.length) M.buildLayout(state.pairs.markets);
    const from = M.pStart[pr];
    const count = M.pStart[pr + 1] - from;
    const { pMarket, pExchange, pq } = M;
    const exLegit = X.legit;
    const exRank = X.rank;
    const s = this.scratch;
    s.ensure(count);
    if (this.slots.length < count) this.slots = new Int32Array(Math.max(count, 2 * this.slots.length));
    const slots = this.slots;
    const cfg = state.config;
    let n = 0;
    this.candidateDeadline = Infinity;
    for (let sl = from; sl < from + count; sl++) {
      const m = pMarket[sl];
      const x = pExchange[sl];
      const tq = pq[SLOT_STRIDE * sl + Q_TIME];
      let reason: ExclusionReason | undefined;
      let detail = '';
      if (pq[SLOT_STRIDE * sl + S_EXCHANGE] < 0) {
        reason = 'not_eligible';
        if (collect) detail = ineligibleDetail(M.whyNot[m]);
      } else if (!exLegit[x]) {
        reason = 'not_legitimate';
        if (collect) detail = `exchange ${X.index.names[x]} is not legitimate`;
      } else if (Number.isNaN(tq)) {
        reason = Number.isNaN(M.discardedAt[m]) ? 'no_quote' : 'spread';
        if (collect) detail = reason === 'spread' ? 'every quote so far had a spread outside [0, maxSpread]' : 'no quote yet';
      } else if (!isFresh(T, tq, cfg.staleAfterUs)) {
        reason = 'stale';
        if (collect) detail = `quote age ${(T - tq) / US_PER_SECOND} s > ${cfg.staleAfterSeconds} s`;
      }
      if (reason) {
        if (collect) collect.excluded.push({ ...marketProvenance(state, m, T), reason, detail });
        continue;
      }
      s.rank[n] = exRank[x];
      s.market[n] = m;
      slots[n++] = sl;
    }
    // Rule 9: only the highest rank among the fresh eligible markets.
    const maxRank = topRank(s.rank, n);
    let k = 0;
    for (let j = 0; j < n; j++) {
      const m = s.market[j];
      if (!usesRank(s.rank[j], maxRank)) {
        if (collect) collect.excluded.push({ ...marketProvenance(state, m, T), reason: 'rank', detail: `rank ${s.rank[j]} < ${maxRank}` });
        continue;
      }
      const sl = slots[j];
      const o = SLOT_STRIDE * sl;
      const tq = pq[o + Q_TIME];
      // First tick at which this candidate is stale: T > t_quote + staleAfter.
      const deadline = firstTickAfter(tq + cfg.staleAfterUs);
      if (deadline < this.candidateDeadline) this.candidateDeadline = deadline;
      s.market[k] = m;
      slots[k] = sl;
      s.p[k] = marketPrice(cfg.weighting, pq[o], pq[o + 1], pq[o + 2], pq[o + 3]);
      s.q[k] = passiveVolume(pq[o + 2], pq[o + 3]);
      s.v[k] = pq[o + S_VOLUME];
      s.t[k] = tq;
      k++;
    }
    this.rank = maxRank;
    this.candidates = k;
    if (k === 0) return false;
    if (!computePairRateInto(s, k, cfg, this.exactFor)) return false;
    if (collect) this.collectUsed(k, T, collect);
    return true;
  }

  /**
   * {@link compute} without provenance, for the tick pipeline: the same rules and results (the
   * same scratch, {@link rank}, {@link candidateDeadline}, {@link candidates} and `slots`), with
   * the top rank kept while the candidates are picked and nothing but columns read per market.
   */
  computeTick(pr: number, T: number): boolean {
    const state = this.state;
    const M = state.markets;
    if (!M.layoutValid || pr + 1 >= M.pStart.length) M.buildLayout(state.pairs.markets);
    const from = M.pStart[pr];
    const end = M.pStart[pr + 1];
    const s = this.scratch;
    if (s.capacity < end - from) s.ensure(end - from);
    if (this.slots.length < end - from) this.slots = new Int32Array(Math.max(end - from, 2 * this.slots.length));
    const slots = this.slots;
    const pq = M.pq;
    const exLegit = state.exchanges.legit;
    const exRank = state.exchanges.rank;
    const cfg = state.config;
    const staleAfterUs = cfg.staleAfterUs;
    const sRank = s.rank;
    // Rules 3-5, 7: eligible, legitimate, with a fresh accepted quote; rule 9's top rank alongside.
    // Everything read of a slot is in its record (SLOT_STRIDE values).
    let n = 0;
    let top = -Infinity;
    for (let sl = from; sl < end; sl++) {
      const o = SLOT_STRIDE * sl;
      const x = pq[o + S_EXCHANGE];
      if (x < 0 || !exLegit[x]) continue;
      const tq = pq[o + Q_TIME];
      if (Number.isNaN(tq) || !isFresh(T, tq, staleAfterUs)) continue;
      const r = exRank[x];
      if (r > top) top = r;
      sRank[n] = r;
      slots[n++] = sl;
    }
    const weighting = cfg.weighting;
    // The earliest staleness deadline is that of the oldest quote (firstTickAfter is monotone).
    let oldest = Infinity;
    let k = 0;
    for (let j = 0; j < n; j++) {
      if (!usesRank(sRank[j], top)) continue;
      const sl = slots[j];
      const o = SLOT_STRIDE * sl;
      const tq = pq[o + Q_TIME];
      if (tq < oldest) oldest = tq;
      s.market[k] = pq[o + S_MARKET];
      slots[k] = sl;
      s.p[k] = marketPrice(weighting, pq[o], pq[o + 1], pq[o + 2], pq[o + 3]);
      s.q[k] = passiveVolume(pq[o + 2], pq[o + 3]);
      s.v[k] = pq[o + S_VOLUME];
      s.t[k] = tq;
      k++;
    }
    // First tick at which a candidate is stale: T > t_quote + staleAfter.
    this.candidateDeadline = k === 0 ? Infinity : firstTickAfter(oldest + staleAfterUs);
    this.rank = top;
    this.candidates = k;
    if (k === 0) return false;
    return computePairRateInto(s, k, cfg, this.exactFor);
  }

  /** Provenance of the k candidates after rule 11: used (with weight share) or outliers. */
  private collectUsed(k: number, T: number, collect: ProvenanceCollector): void {
    const s = this.scratch;
    const cfg = this.state.config;
    let W = 0;
    for (let j = 0; j < k; j++) if (s.keep[j]) W += s.w[j];
    for (let j = 0; j < k; j++) {
      const prov: MarketProvenance = {
        ...marketProvenance(this.state, s.market[j], T),
        price: s.p[j],
        q: s.q[j],
        volume: s.v[j],
        weight: s.w[j],
      };
      if (s.keep[j]) collect.used.push({ ...prov, weight_share: s.w[j] / W });
      else {
        const st = s.stats!;
        const detail =
          st.method === 'leave_one_out'
            ? `|p - mean of the others| > ${cfg.outlierSigmas} x sigma of the others (leave_one_out)`
            : `|p - ${st.method === 'mad' ? 'median' : 'mean'}| = ${Math.abs(s.p[j] - st.centre)} > ${cfg.outlierSigmas} x ${st.scale}`;
        collect.excluded.push({ ...prov, reason: 'outlier', detail });
      }
    }
  }

  /** Exact p and w of market m for the outlier boundary fall-back (rules 6, 11). `useVolume`: the weight is V. */
  private exactPriceWeight(m: number, useVolume: boolean): { p: Decimal; w: Decimal } {
    const state = this.state;
    const [bt, at, bst, ast] = state.markets.exactTexts(m);
    const bid = new ExactDecimal(bt);
    const ask = new ExactDecimal(at);
    const bs = new ExactDecimal(bst);
    const as = new ExactDecimal(ast);
    const q = bs.plus(as);
    const V = new ExactDecimal(state.markets.window.exactSum(m, state.lastRefresh));
    const weighting = state.config.weighting;
    const p = weighting === 'microprice' && q.gt(0) ? bid.times(as).plus(ask.times(bs)).div(q) : bid.plus(ask).div(2);
    let w: Decimal;
    if (useVolume || weighting === 'trade' || weighting === 'microprice') w = V;
    else if (weighting === 'passive') w = q;
    else w = V.times(q);
    return { p, w };
  }
}
