/**
 * xrate's own metrics (docs/methodology.md section 9): series the engine writes whenever their
 * value changes at a tick, one data point per change, time = the tick.
 *
 * | metric_id | scope | value |
 * |---|---|---|
 * | XRATE_MARKET_WEIGHT_SHARE | symbol | w / sum(w) of its pair at the tick; 0 when the market is left out |
 * | XRATE_MARKET_VOLUME_24H | symbol | V of the last eligibility refresh (rule 8), exact |
 * | XRATE_MARKET_SPREAD | symbol | spreadPrc of its latest accepted quote (a quote rule 5 discards included) |
 * | XRATE_EXCHANGE_MARKETS_USED | exchange | number of its markets used in some pair rate at the tick |
 * | XRATE_EXCHANGE_RANK | exchange | its rank at the tick |
 * | XRATE_ASSET_USD_RATE | asset | rate(asset, USD) at the tick, when fresh (exchange_id `XRATE`) |
 *
 * (Their list, from which the ids, the listing and the indexes of a batch's columns follow, is in
 * ownMetricBatch.ts.)
 * The tick pipeline feeds the values as it computes them ({@link pairComputed}, {@link refreshed},
 * {@link noteQuote}); {@link emit} then writes the changed series of the tick, by metric_id and,
 * within one, by exchange id then symbol or asset id, so the order does not depend on the order
 * in which markets were first seen, as one {@link OwnMetricBatch} of columns. They are computed
 * only while the listener has `onOwnMetrics`.
 * What was last written is part of the engine's snapshot, so a resumed replay writes what an
 * uninterrupted one writes.
 *
 * @module
 */
import { byCodeUnit } from '../metrics/source.js';
import type { PairScratch } from '../pairRate.js';
import { spreadOf } from '../quoteFilter.js';
import {
  ASSET_USD_RATE,
  EXCHANGE_MARKETS_USED,
  EXCHANGE_RANK,
  grow,
  MARKET_SPREAD,
  MARKET_VOLUME_24H,
  MARKET_WEIGHT_SHARE,
  OwnMetricBatch,
  type OwnMetricNames,
} from './ownMetricBatch.js';

export { OWN_METRIC_IDS, OWN_METRICS, OwnMetricBatch } from './ownMetricBatch.js';

/**
 * What was last written, by market, exchange and asset id, as a snapshot stores it (null: none).
 * Of the current values only the spreads of quotes read since the last tick are stored (`pending`:
 * [market, spread]); a restored engine computes every pair at its next tick, which gives every
 * share and count again, and a volume is written at the refresh that sets it.
 */
export interface OwnMetricsJSON {
  pending: [number, number][];
  share: (number | null)[];
  spread: (number | null)[];
  volume: (string | null)[];
  used: (number | null)[];
  rank: (number | null)[];
  /** By asset id (absent in snapshots taken before XRATE_ASSET_USD_RATE). */
  usd?: (number | null)[];
}

const orNull = (v: number): number | null => (Number.isNaN(v) ? null : v);
function fromJSON(a: readonly (number | null)[], missing: number): Float64Array<ArrayBuffer> {
  const f = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) f[i] = a[i] ?? missing;
  return f;
}

/** The engine's pair-major layout, as the own metrics read it (tables/markets.ts). */
export interface PairLayout {
  /** Slot ranges of the pairs (pair pr: `pStart[pr]` to `pStart[pr + 1] - 1`). */
  readonly pStart: Int32Array;
  /** Market and exchange of each slot; slot of each market (-1: in no pair). */
  readonly pMarket: Int32Array;
  readonly pExchange: Int32Array;
  readonly slotOf: Int32Array;
}

/** rate(asset, USD) of every asset at a tick (columns by asset id, see RateQueries.ratesTo) and USD's id. */
export interface UsdRates {
  rate: Float64Array;
  fresh: Uint8Array;
  usd: number;
}

/** The layout of OwnMetrics' per-market values: four a market. */
const STRIDE = 4;
const SPREAD = 0;
const SPREAD_OUT = 1;
const SHARE = 2;
const SHARE_OUT = 3;

/** A market's flag in {@link OwnMetrics}' `touched`: its share, spread or volume may have changed. */
const TOUCHED = 1;

/** Touched markets listed as they are flagged, at most: more than that, and the emit scans the flags. */
const LISTED = 32;

/** The own metrics of one engine (see the module description). */
export class OwnMetrics {
  /**
   * Per slot of the engine's pair-major layout (`layout`, the one they were last computed on):
   * the market's share at its pair's last computation (NaN: none yet) and whether it was used.
   * A pair's computation reads and writes them in sequence; when a share changed it notes the
   * slot in {@link changedSlots}, also in sequence, and the emit moves the noted shares to the
   * per-market values in one loop ({@link takeChangedShares}). A scattered write per changed share
   * in the pair pass cost more; a flag set there and the share read from its slot at the emit,
   * both scattered, cost about 0.15 ms a tick more at size L (docs/performance.md).
   */
  private slotShare = new Float64Array(0);
  private slotUsed = new Uint8Array(0);
  /** The slots whose share changed since the last emit, in the order they changed (the first `changedCount`). */
  private changedSlots = new Int32Array(0);
  private changedCount = 0;
  /** Per slot of `layout`: its market's position (see {@link pos}). */
  private slotPos = new Int32Array(0);
  private layoutMarkets: Int32Array | undefined;
  /** Number of markets ever seen (the size of the per-market arrays in use). */
  private marketCapacity = 0;
  /**
   * Per market at position p (see {@link pos}), at 4p + SPREAD, SPREAD_OUT, SHARE, SHARE_OUT: the
   * spread of its latest accepted quote (NaN: none) and the last written, its weight share as of
   * the last emit (NaN: no value yet; a changed one waits in its slot) and the last written. Kept
   * in the order the points are written, so the emit reads them in sequence (in market-id order
   * they would be thousands of cache misses).
   */
  private mv = new Float64Array(0);
  /**
   * Position of each market (by id) in {@link mv} and {@link touched}: its place in
   * {@link marketOrder} once sorted; a market added since the last sort sits at its id, past
   * the sorted ones, until the next emit sorts it in.
   */
  private pos = new Int32Array(0);
  /** Per market: V of the last refresh and its exact text, last written text. */
  private volumeText: (string | undefined)[] = [];
  private volumeOut: (string | undefined)[] = [];
  /** Per exchange: markets used now, last written count (-1: never), last written rank (NaN: never). */
  private usedCount = new Int32Array(0);
  private usedOut = new Int32Array(0);
  private rankOut = new Float64Array(0);
  /** Per asset: the last written rate(asset, USD) (NaN: never). */
  private usdOut = new Float64Array(0);
  /** The points of the tick being emitted (reused). */
  private readonly batch = new OwnMetricBatch();
  /**
   * Markets (by position) whose share, spread or volume may have changed since the last emit
   * (TOUCHED; a changed share is flagged when the emit takes it from its slot), and whether any is.
   */
  private touched = new Uint8Array(0);
  private anyTouched = false;
  /**
   * The positions flagged since the last emit, as each was first flagged (the first `listCount`
   * of them; a count past {@link LISTED}: too many to list, or flags moved or set otherwise, and
   * the emit scans the flags). A tick that touches a few markets of many sorts the few.
   */
  private readonly listed = new Int32Array(LISTED);
  private listCount = 0;
  /** Whether an eligibility refresh set volumes since the last emit. */
  private volumesPending = false;
  /** Scratch of {@link emit}: the positions of the touched markets, then of those whose share changed. */
  private touchedOrder = new Int32Array(0);
  private shareChanged = new Int32Array(0);
  /** Market ids by (exchange id, symbol id) and exchanges by id: the order of the points of a tick. */
  private marketOrder = new Int32Array(0);
  private exchangeOrder: number[] = [];
  /** Assets by id (sorted again when assets were added). */
  private assetOrder: number[] = [];
  /** A market moved to another exchange since {@link marketOrder} was sorted (a symbol event can do that). */
  private marketMoved = false;

  /** Sorts the markets, exchanges and assets again when some were added or a market moved. */
  private updateOrders(names: OwnMetricNames, exchangeCount: number): void {
    const nm = names.marketNames.length;
    if (this.marketMoved || this.marketOrder.length !== nm || this.exchangeOrder.length !== exchangeCount) {
      this.marketMoved = false;
      const ex = (m: number) => names.exchangeNames[names.marketExchange[m]];
      const order = [...Array(nm).keys()].sort(
        (a, b) => byCodeUnit(ex(a), ex(b)) || byCodeUnit(names.marketNames[a], names.marketNames[b]),
      );
      this.marketOrder = Int32Array.from(order);
      this.reposition(order);
      this.exchangeOrder = [...Array(exchangeCount).keys()].sort((a, b) => byCodeUnit(names.exchangeNames[a], names.exchangeNames[b]));
      if (this.touchedOrder.length < nm) {
        this.touchedOrder = new Int32Array(nm);
        this.shareChanged = new Int32Array(nm);
      }
    }
    const na = names.assetNames.length;
    if (this.assetOrder.length !== na) {
      this.assetOrder = [...Array(na).keys()].sort((a, b) => byCodeUnit(names.assetNames[a], names.assetNames[b]));
      this.usdOut = grow(this.usdOut, na, Number.NaN);
    }
  }

  /** Moves every market's values and flag to its place in the new `order` (ids by position). */
  private reposition(order: readonly number[]): void {
    const { mv: from, touched: flagFrom, pos } = this;
    const mv = new Float64Array(from.length).fill(Number.NaN);
    const touched = new Uint8Array(flagFrom.length);
    for (let p = 0; p < order.length; p++) {
      const m = order[p];
      const q = pos[m];
      for (let k = 0; k < STRIDE; k++) mv[STRIDE * p + k] = from[STRIDE * q + k];
      touched[p] = flagFrom[q];
      pos[m] = p;
    }
    this.mv = mv;
    this.touched = touched;
    this.listCount = LISTED + 1;
    if (this.layoutMarkets !== undefined) this.placeSlots();
  }

  /** Sets {@link slotPos} from the layout's markets and their positions now. */
  private placeSlots(): void {
    const markets = this.layoutMarkets!;
    const { slotPos, pos } = this;
    for (let sl = 0; sl < markets.length; sl++) slotPos[sl] = pos[markets[sl]];
  }

  private ensureMarkets(n: number): void {
    if (this.marketCapacity >= n) return;
    const capacity = Math.max(n, 2 * this.marketCapacity);
    this.marketCapacity = capacity;
    const mv = new Float64Array(STRIDE * capacity).fill(Number.NaN);
    mv.set(this.mv);
    this.mv = mv;
    const pos = new Int32Array(capacity);
    pos.set(this.pos);
    for (let m = this.pos.length; m < capacity; m++) pos[m] = m;
    this.pos = pos;
    this.touched = grow(this.touched, n, 0);
  }

  private ensureExchanges(n: number): void {
    if (this.usedCount.length >= n) return;
    this.usedCount = grow(this.usedCount, n, 0);
    this.usedOut = grow(this.usedOut, n, -1);
    this.rankOut = grow(this.rankOut, n, Number.NaN);
  }

  /** One of the four per-market values of {@link mv}, by market id, as a snapshot stores it. */
  private column(at: number): (number | null)[] {
    return Array.from(this.pos, (p) => orNull(this.mv[STRIDE * p + at]));
  }

  /** Flags the market at position p as touched. */
  private touch(p: number): void {
    if (this.touched[p] === 0) this.list(p);
    this.touched[p] |= TOUCHED;
    this.anyTouched = true;
  }

  /** Lists position p, whose flag is being set from none (see {@link listed}). */
  private list(p: number): void {
    const n = this.listCount++;
    if (n < LISTED) this.listed[n] = p;
  }

  /** The touched markets, by id. */
  private touchedMarkets(): number[] {
    const out: number[] = [];
    for (let m = 0; m < this.pos.length; m++) if (this.touched[this.pos[m]] !== 0) out.push(m);
    return out;
  }

  /** What was last written (see {@link OwnMetricsJSON}). */
  toJSON(): OwnMetricsJSON {
    return {
      pending: this.touchedMarkets()
        .filter((m) => !Number.isNaN(this.mv[STRIDE * this.pos[m] + SPREAD]))
        .map((m) => [m, this.mv[STRIDE * this.pos[m] + SPREAD]]),
      share: this.column(SHARE_OUT),
      spread: this.column(SPREAD_OUT),
      volume: this.volumeOut.map((v) => v ?? null),
      used: Array.from(this.usedOut, (v) => (v < 0 ? null : v)),
      rank: Array.from(this.rankOut, orNull),
      usd: Array.from(this.usdOut, orNull),
    };
  }

  /** Restores what was last written (absent in a snapshot taken before own metrics: nothing). */
  restore(j: OwnMetricsJSON | undefined): void {
    if (j === undefined) return;
    this.ensureMarkets(Math.max(j.share.length, j.spread.length));
    const share = fromJSON(j.share, Number.NaN);
    const spread = fromJSON(j.spread, Number.NaN);
    for (let m = 0; m < share.length; m++) this.mv[STRIDE * this.pos[m] + SHARE_OUT] = share[m];
    for (let m = 0; m < spread.length; m++) this.mv[STRIDE * this.pos[m] + SPREAD_OUT] = spread[m];
    this.volumeOut = j.volume.map((v) => v ?? undefined);
    this.ensureExchanges(j.used.length);
    this.usedOut.set(Int32Array.from(j.used, (v) => v ?? -1));
    this.rankOut.set(fromJSON(j.rank, Number.NaN));
    this.usdOut = fromJSON(j.usd ?? [], Number.NaN);
    for (const [m, spread] of j.pending ?? []) {
      this.ensureMarkets(m + 1);
      this.mv[STRIDE * this.pos[m] + SPREAD] = spread;
      this.touch(this.pos[m]);
    }
  }

  /** The latest accepted quote of market `m` (rule 5 may have discarded it). */
  noteQuote(m: number, bid: number, ask: number): void {
    this.ensureMarkets(m + 1);
    const p = this.pos[m];
    this.mv[STRIDE * p + SPREAD] = spreadOf(bid, ask);
    this.touch(p);
  }

  /** Makes room for the engine's markets and exchanges before a tick's {@link pairComputed} calls. */
  beginTick(marketCount: number, exchangeCount: number): void {
    this.ensureMarkets(marketCount);
    this.ensureExchanges(exchangeCount);
  }

  /**
   * Pair `pr` computed at this tick on the pair-major layout `L` (its markets are the slots
   * `L.pStart[pr] ..`), and when `ok` the scratch of the computation (candidates `s.market[0..k)`
   * at layout slots `slots[0..k)`, with `s.keep` and `s.w`). A market that is not a kept candidate
   * has share 0 and is not used.
   */
  pairComputed(L: PairLayout, pr: number, ok: boolean, s: PairScratch, k: number, slots: Int32Array): void {
    if (L.pMarket !== this.layoutMarkets) this.relayout(L);
    // The sum of the kept candidates' weights, as the computation summed them.
    const W = ok ? s.weightSum : 0;
    const { slotShare, slotUsed, usedCount, changedSlots } = this;
    const { keep, w: weight } = s;
    const pExchange = L.pExchange;
    // One pass over the pair's slots, the candidates' (ascending) slots alongside.
    let j = 0;
    // A slot is noted once a tick, but a tick that a listener's exception cut short leaves its notes,
    // and its pairs noted again could fill the list: the notes are then taken first.
    if (this.changedCount + L.pStart[pr + 1] - L.pStart[pr] > changedSlots.length) this.takeChangedShares();
    let nc = this.changedCount;
    for (let sl = L.pStart[pr], end = L.pStart[pr + 1]; sl < end; sl++) {
      let w = 0;
      let u = 0;
      if (j < k && slots[j] === sl) {
        if (ok && keep[j]) {
          w = W > 0 ? weight[j] / W : 0;
          u = 1;
        }
        j++;
      }
      if (slotUsed[sl] !== u) {
        slotUsed[sl] = u;
        usedCount[pExchange[sl]] += u === 1 ? 1 : -1;
      }
      // A share is never NaN or -0: a plain comparison is SameValue here (NaN: none yet).
      if (w === slotShare[sl]) continue;
      // The share stays in its slot and the slot is noted, both in sequence; the emit moves it.
      slotShare[sl] = w;
      changedSlots[nc++] = sl;
    }
    this.changedCount = nc;
  }

  /**
   * Moves the shares changed since the last emit from their slots to their markets' values and
   * flags the markets (before the layout or the markets' positions change, and at the emit).
   */
  private takeChangedShares(): void {
    const n = this.changedCount;
    if (n === 0) return;
    this.changedCount = 0;
    const { changedSlots, slotShare, slotPos, mv } = this;
    for (let i = 0; i < n; i++) {
      const sl = changedSlots[i];
      const p = slotPos[sl];
      mv[STRIDE * p + SHARE] = slotShare[sl];
      this.touch(p);
    }
  }

  /**
   * The engine rebuilt its layout (a market was defined or moved, or a snapshot restored): the
   * slots' values move to the markets' new slots, and the markets used are counted again, each for
   * its exchange now (a symbol event may have moved it; one that left its pair is used no more).
   */
  private relayout(L: PairLayout): void {
    this.takeChangedShares();
    const total = L.pMarket.length;
    const slotShare = new Float64Array(total).fill(Number.NaN);
    const slotUsed = new Uint8Array(total);
    const old = this.layoutMarkets;
    if (old !== undefined) {
      for (let sl = 0; sl < old.length; sl++) {
        const m = old[sl];
        const to = m < L.slotOf.length ? L.slotOf[m] : -1;
        if (to < 0) continue;
        slotShare[to] = this.slotShare[sl];
        slotUsed[to] = this.slotUsed[sl];
      }
    }
    this.usedCount.fill(0);
    for (let sl = 0; sl < total; sl++) if (slotUsed[sl] === 1) this.usedCount[L.pExchange[sl]]++;
    this.slotShare = slotShare;
    this.slotUsed = slotUsed;
    this.slotPos = new Int32Array(total);
    this.changedSlots = new Int32Array(total);
    this.layoutMarkets = L.pMarket;
    this.placeSlots();
  }

  /** An eligibility refresh set V of market `m` (exact text `text`). */
  refreshed(m: number, text: string): void {
    this.ensureMarkets(m + 1);
    this.volumeText[m] = text;
    this.volumesPending = true;
    this.touch(this.pos[m]);
  }

  /**
   * Writes, to `onMetrics` (when there is any), every series whose value changed at tick T:
   * markets touched since the last emit, every exchange (`rank`: their ranks now; `exchangeCount`
   * of them) and every asset with a fresh rate to USD (`usd`; undefined when USD is no asset, or
   * when the graph is as it was at the last emit given one: every such rate is as written then).
   */
  emit(
    T: number,
    names: OwnMetricNames,
    rank: ArrayLike<number>,
    exchangeCount: number,
    usd: UsdRates | undefined,
    onMetrics: (batch: OwnMetricBatch) => void,
  ): void {
    const out = this.batch;
    out.reset(T, names);
    this.ensureExchanges(exchangeCount);
    this.takeChangedShares();
    this.updateOrders(names, exchangeCount);
    const nt = this.touchedInOrder();

    // By metric_id (OWN_METRIC_IDS' order), then by exchange id, then by symbol or asset id.
    if (usd !== undefined) this.emitUsd(usd, out);
    const usedOut = this.usedOut;
    for (const x of this.exchangeOrder) {
      const c = this.usedCount[x];
      if (c === usedOut[x]) continue;
      usedOut[x] = c;
      out.push(EXCHANGE_MARKETS_USED, x, c);
    }
    const rankOut = this.rankOut;
    for (const x of this.exchangeOrder) {
      const r = rank[x];
      if (Object.is(r, rankOut[x])) continue;
      rankOut[x] = r;
      out.push(EXCHANGE_RANK, x, r);
    }
    // One pass over the touched markets: the spreads are written, the changed shares noted. The
    // points go straight into the batch's columns (room made first: at most one spread a market).
    const touched = this.touchedOrder;
    const { mv, shareChanged, marketOrder, touched: flag } = this;
    out.reserve(nt);
    const { metric, subject, value } = out;
    let n = out.length;
    let ns = 0;
    for (let i = 0; i < nt; i++) {
      const p = touched[i];
      const o = STRIDE * p;
      flag[p] = 0;
      const v = mv[o + SPREAD];
      if (!Number.isNaN(v) && !Object.is(v, mv[o + SPREAD_OUT])) {
        mv[o + SPREAD_OUT] = v;
        metric[n] = MARKET_SPREAD;
        subject[n] = marketOrder[p];
        value[n++] = v;
      }
      const w = mv[o + SHARE];
      if (!Number.isNaN(w) && !Object.is(w, mv[o + SHARE_OUT])) {
        mv[o + SHARE_OUT] = w;
        shareChanged[ns++] = p;
      }
    }
    out.length = n;
    if (this.volumesPending) {
      this.volumesPending = false;
      for (let i = 0; i < nt; i++) {
        const m = marketOrder[touched[i]];
        const text = this.volumeText[m];
        if (text === undefined || text === this.volumeOut[m]) continue;
        this.volumeOut[m] = text;
        out.push(MARKET_VOLUME_24H, m, Number(text), text);
      }
    }
    out.reserve(ns);
    this.writeShares(out, ns);
    if (out.length > 0) onMetrics(out);
  }

  /** XRATE_MARKET_WEIGHT_SHARE: the `ns` changed shares noted by {@link emit}, into `out` (room made). */
  private writeShares(out: OwnMetricBatch, ns: number): void {
    const { mv, shareChanged, marketOrder } = this;
    const { metric, subject, value } = out;
    let n = out.length;
    for (let i = 0; i < ns; i++) {
      const p = shareChanged[i];
      metric[n] = MARKET_WEIGHT_SHARE;
      subject[n] = marketOrder[p];
      value[n++] = mv[STRIDE * p + SHARE];
    }
    out.length = n;
  }

  /**
   * Puts the positions of the touched markets, in order, into {@link touchedOrder} (a scan of the
   * flags, which are kept in that order) and returns how many ({@link emit} clears their flags).
   */
  private touchedInOrder(): number {
    const listed = this.listCount;
    this.listCount = 0;
    if (!this.anyTouched) return 0;
    this.anyTouched = false;
    const { touched: flag, touchedOrder: out } = this;
    if (listed <= LISTED && 4 * listed <= this.marketOrder.length) {
      // A few of many: the listed positions, sorted (insertion sort: at most LISTED of them).
      const l = this.listed;
      for (let i = 0; i < listed; i++) {
        const p = l[i];
        let j = i;
        for (; j > 0 && out[j - 1] > p; j--) out[j] = out[j - 1];
        out[j] = p;
      }
      return listed;
    }
    let n = 0;
    // Without a branch: every position is written, only the touched kept (a flag is 0 or 1).
    for (let p = 0, end = this.marketOrder.length; p < end; p++) {
      out[n] = p;
      n += flag[p];
    }
    return n;
  }

  /**
   * Forgets what was written, so the next emit writes every series that has a value: the whole
   * state, as the first output tick of a replay with a warm-up writes it (`emitAllAtNextTick`).
   */
  rewriteAll(): void {
    const { mv, touched } = this;
    // The markets sorted at the last emit; one added since sits past them and is touched by
    // whatever gave it a value (a position past the markets must stay untouched).
    for (let p = 0; p < this.marketOrder.length; p++) {
      mv[STRIDE * p + SPREAD_OUT] = Number.NaN;
      mv[STRIDE * p + SHARE_OUT] = Number.NaN;
      touched[p] |= TOUCHED;
    }
    this.listCount = LISTED + 1;
    if (this.marketOrder.length > 0) this.anyTouched = true;
    this.volumeOut = [];
    this.volumesPending = true;
    this.usedOut.fill(-1);
    this.rankOut.fill(Number.NaN);
    this.usdOut.fill(Number.NaN);
  }

  /** A symbol event moved a market to another exchange: the order of the points changes. */
  noteMarketMoved(): void {
    this.marketMoved = true;
  }

  /** XRATE_ASSET_USD_RATE: each asset's fresh rate to USD that differs from the last written. */
  private emitUsd(usd: UsdRates, out: OwnMetricBatch): void {
    const written = this.usdOut;
    for (const a of this.assetOrder) {
      const r = usd.rate[a];
      if (a === usd.usd || usd.fresh[a] !== 1 || Number.isNaN(r) || Object.is(r, written[a])) continue;
      written[a] = r;
      out.push(ASSET_USD_RATE, a, r);
    }
  }
}
