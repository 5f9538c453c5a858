/**
 * Why a rate is missing (docs/methodology.md section 6, "When there is no rate"): for rate(base,
 * quote) with no value at the last tick, the first reason in the order of the checks
 * ({@link NoRateReason}). The pairs looked at are those that would give the rate: the direct pair
 * (either way) or, for two assets no pair links directly, the pairs without a rate on a path with
 * the fewest hops through the listed pairs. Each is diagnosed on the committed state as the tick
 * computed it (pairCompute.ts with a collector): the check at which its last markets dropped out.
 * Reads the state only; never changes it.
 *
 * @module
 */
import type { NoRateExplanation, NoRateReason } from '../provenance.js';
import { formatTime, US_PER_SECOND } from '../time.js';
import type { PairComputer, ProvenanceCollector } from './pairCompute.js';
import type { RateQueries } from './queries.js';
import type { EngineState } from './state.js';
import { WhyNot } from './tables/markets.js';

/** The reasons a listed pair can lack a rate, in the order they are checked (the first that holds wins). */
const PAIR_ORDER: readonly NoRateReason[] = ['not_eligible', 'not_legitimate', 'stale', 'spread', 'no_quote', 'rank', 'zero_weight'];

/** A pair's reason, with its words (and, for rule 8, the next refresh). */
type PairReason = { reason: NoRateReason; message: string; next_refresh?: string };

/** A duration in words: whole hours as `4 h`, else seconds. */
function duration(us: number): string {
  const s = us / US_PER_SECOND;
  return s % 3600 === 0 ? `${s / 3600} h` : `${s} s`;
}

/** `A, B and C`. */
function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** Diagnoses missing rates on the engine's committed state. */
export class NoRateDiagnosis {
  constructor(
    private readonly state: EngineState,
    private readonly computer: PairComputer,
    private readonly queries: RateQueries,
  ) {}

  /** Why rate(base, quote) has no value at the last tick; undefined when it has one. */
  why(base: string, quote: string): NoRateExplanation | undefined {
    const s = this.state;
    if (s.lastTick === undefined) return { reason: 'no_tick', message: 'no tick has been computed yet' };
    if (this.queries.rate(base, quote)) return undefined;
    const b = s.assets.get(base);
    const q = s.assets.get(quote);
    if (b === undefined) return { reason: 'unknown_asset', message: `unknown asset "${base}"` };
    if (q === undefined) return { reason: 'unknown_asset', message: `unknown asset "${quote}"` };
    const path = this.listedPath(b, q);
    const names = s.assets.names;
    const noPath: NoRateExplanation = {
      reason: 'no_path',
      message: `no path from ${base} to ${quote} (rule 12): no listed pair links them, directly or through other assets`,
    };
    if (path === undefined) return noPath;
    // The pairs of each hop without a rate; the first reason in the order wins (ties: path order).
    let best: { pair: string; why: PairReason } | undefined;
    for (let i = 0; i + 1 < path.length; i++) {
      for (const pr of [s.pairs.find(path[i], path[i + 1]), s.pairs.find(path[i + 1], path[i])]) {
        if (pr === undefined || !Number.isNaN(s.pairs.rate[pr])) continue;
        const why = this.pairReason(pr);
        if (best === undefined || PAIR_ORDER.indexOf(why.reason) < PAIR_ORDER.indexOf(best.why.reason))
          best = { pair: s.pairs.label(pr, names), why };
      }
    }
    if (best === undefined) return noPath;
    const route = path.length > 2 ? `on the path ${path.map((a) => names[a]).join(' -> ')} (the fewest hops through listed pairs), ` : '';
    return {
      reason: best.why.reason,
      pair: best.pair,
      ...(best.why.next_refresh === undefined ? {} : { next_refresh: best.why.next_refresh }),
      message: `${route}${best.why.message}`,
    };
  }

  /**
   * Asset ids of a path from `b` to `q` with the fewest hops through the listed pairs (with or
   * without a rate), neighbours visited in asset id order; undefined when none links them.
   */
  private listedPath(b: number, q: number): number[] | undefined {
    const P = this.state.pairs;
    const names = this.state.assets.names;
    const next = new Map<number, number[]>();
    const link = (x: number, y: number): void => {
      const l = next.get(x);
      if (l) l.push(y);
      else next.set(x, [y]);
    };
    for (let pr = 0; pr < P.count; pr++) {
      link(P.base[pr], P.quote[pr]);
      link(P.quote[pr], P.base[pr]);
    }
    for (const l of next.values()) l.sort((x, y) => (names[x] < names[y] ? -1 : names[x] > names[y] ? 1 : 0));
    const from = new Map<number, number>([[b, -1]]);
    const queue = [b];
    for (let i = 0; i < queue.length && !from.has(q); i++) {
      for (const y of next.get(queue[i]) ?? []) {
        if (from.has(y)) continue;
        from.set(y, queue[i]);
        queue.push(y);
      }
    }
    if (!from.has(q)) return undefined;
    const path = [q];
    while (path[0] !== b) path.unshift(from.get(path[0])!);
    return path;
  }

  /** The first check that the markets of listed pair `pr` (without a rate) fail at the last tick. */
  private pairReason(pr: number): PairReason {
    const s = this.state;
    const M = s.markets;
    const T = s.lastTick!;
    const cfg = s.config;
    const collect: ProvenanceCollector = { used: [], excluded: [] };
    this.computer.compute(pr, T, collect);
    const excluded = new Map(collect.excluded.map((e) => [e.symbol_id, e.reason]));
    const markets = s.pairs.markets[pr];
    // A market the collector did not leave out is a candidate of the top rank.
    const reasonOf = (m: number): string | undefined => excluded.get(M.index.names[m]);
    const label = s.pairs.label(pr, s.assets.names);
    const ids = (ms: readonly number[]): string => listed(ms.map((m) => M.index.names[m]));

    const eligible = markets.filter((m) => reasonOf(m) !== 'not_eligible');
    if (eligible.length === 0) return this.notEligible(label, markets);
    const legit = eligible.filter((m) => reasonOf(m) !== 'not_legitimate');
    if (legit.length === 0) {
      const exchanges = [...new Set(eligible.map((m) => s.exchanges.index.names[M.exchange[m]]))];
      return {
        reason: 'not_legitimate',
        message: `${label}: its eligible markets (${ids(eligible)}) are on exchanges not legitimate now (rule 4): ${listed(exchanges)}`,
      };
    }
    const quoted = legit.filter((m) => reasonOf(m) !== 'no_quote' && reasonOf(m) !== 'spread' && reasonOf(m) !== 'stale');
    if (quoted.length === 0) {
      const stale = legit.filter((m) => reasonOf(m) === 'stale');
      if (stale.length > 0) {
        let newest = stale[0];
        for (const m of stale) if (M.quoteTime(m) > M.quoteTime(newest)) newest = m;
        return {
          reason: 'stale',
          message:
            `${label}: the quotes of its eligible markets are stale (rule 7: a quote is used while at most ${cfg.staleAfterSeconds} s old): ` +
            `the newest, of ${M.index.names[newest]} at ${formatTime(M.quoteTime(newest))}, is ${(T - M.quoteTime(newest)) / US_PER_SECOND} s old at the tick`,
        };
      }
      const spread = legit.filter((m) => reasonOf(m) === 'spread');
      if (spread.length > 0) {
        return {
          reason: 'spread',
          message: `${label}: every quote of its eligible markets (${ids(spread)}) so far had a spread outside [0, ${cfg.maxSpreadText}] (rule 5), so none has an accepted quote`,
        };
      }
      return { reason: 'no_quote', message: `${label}: its eligible markets (${ids(legit)}) have no quote yet` };
    }
    const top = quoted.filter((m) => reasonOf(m) !== 'rank');
    const lower = quoted.filter((m) => reasonOf(m) === 'rank');
    if (lower.length > 0) {
      return {
        reason: 'rank',
        message:
          `${label}: its markets of the top rank ${this.computer.rank} (${ids(top)}) give a total weight of 0 (rule 6), and rule 9 ` +
          `leaves out those of lower rank (${ids(lower)})`,
      };
    }
    return { reason: 'zero_weight', message: `${label}: the weights of its fresh markets (${ids(top)}) sum to 0 (rule 6)` };
  }

  /** Rule 8: no market of the pair was eligible at the last refresh; why, and when the next one is. */
  private notEligible(label: string, markets: readonly number[]): PairReason {
    const s = this.state;
    const M = s.markets;
    const cfg = s.config;
    const R = s.lastRefresh;
    const next = (Math.floor(s.lastTick! / cfg.refreshEveryUs) + 1) * cfg.refreshEveryUs;
    const traded: string[] = [];
    const notLegit: string[] = [];
    const idle: string[] = [];
    for (const m of markets) {
      const id = M.index.names[m];
      if (M.whyNot[m] === WhyNot.notLegitimate) notLegit.push(id);
      // Trades the next refresh will count came after the last one (or it would have counted them).
      else if (M.window.sum(m, next) > 0) traded.push(id);
      else idle.push(id);
    }
    const parts: string[] = [];
    if (traded.length > 0) parts.push(`${listed(traded)} traded only after the last refresh (${formatTime(R)})`);
    if (notLegit.length > 0) parts.push(`the exchange of ${listed(notLegit)} was not legitimate at the last refresh (rule 4)`);
    if (idle.length > 0)
      parts.push(`${listed(idle)} had no trade in the ${duration(cfg.volumeWindowUs)} before the last refresh, nor since`);
    return {
      reason: 'not_eligible',
      next_refresh: formatTime(next),
      message:
        `${label} has no eligible market${traded.length > 0 ? ' yet' : ''} (rule 8: a market is used only after an eligibility refresh ` +
        `that saw its trades): ${parts.join('; ')}; the next refresh is at ${formatTime(next)} (every ${duration(cfg.refreshEveryUs)})`,
    };
  }
}
