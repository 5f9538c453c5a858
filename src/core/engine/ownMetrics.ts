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
 * The tick pipeline feeds the values as it computes them ({@link pairComputed}, {@link refreshed},
 * {@link noteQuote}); {@link emit} then writes the changed series of the tick, by metric_id and,
 * within one, by exchange id then symbol or asset id, so the order does not depend on the order
 * in which markets were first seen. They are computed only while the listener has `onOwnMetric`.
 * What was last written is part of the engine's snapshot, so a resumed replay writes what an
 * uninterrupted one writes.
 *
 * @module
 */
import type { MetricEvent } from '../metrics/events.js';
import type { MetricDefinition } from '../metrics/source.js';
import { byCodeUnit } from '../metrics/source.js';
import type { PairScratch } from '../pairRate.js';
import type { Dec } from '../types.js';
import { spreadOf } from '../quoteFilter.js';

/**
 * The listing entries of xrate's own metrics.
 *
 * @example
 * ```ts
 * OWN_METRICS.map((d) => d.metric_id); // ['XRATE_EXCHANGE_MARKETS_USED', ...]
 * ```
 */
export const OWN_METRICS: readonly MetricDefinition[] = Object.freeze([
  { metric_id: 'XRATE_ASSET_USD_RATE', description: 'rate(asset, USD) at the tick, when fresh (xrate)' },
  { metric_id: 'XRATE_EXCHANGE_MARKETS_USED', description: 'number of the exchange’s markets used in some pair rate at the tick (xrate)' },
  { metric_id: 'XRATE_EXCHANGE_RANK', description: 'rank of the exchange at the tick (xrate)' },
  { metric_id: 'XRATE_MARKET_SPREAD', description: 'spread (ask - bid) / mid of the market’s latest accepted quote (xrate)' },
  { metric_id: 'XRATE_MARKET_VOLUME_24H', description: 'traded volume V of the market at the last eligibility refresh (xrate)' },
  { metric_id: 'XRATE_MARKET_WEIGHT_SHARE', description: 'w / sum(w) of the market in its pair rate at the tick; 0 when left out (xrate)' },
]);

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

/** The names the metrics need from the engine's tables. */
export interface OwnMetricNames {
  /** Symbol id, exchange id (index into `exchanges`) of each market. */
  marketNames: readonly string[];
  marketExchange: ArrayLike<number>;
  exchangeNames: readonly string[];
  assetNames: readonly string[];
}

/** The exchange_id of the asset-level own metrics (XRATE_ASSET_USD_RATE), which no exchange computes. */
export const OWN_EXCHANGE_ID = 'XRATE';

/** rate(asset, USD) of every asset at a tick (columns by asset id, see RateQueries.ratesTo) and USD's id. */
export interface UsdRates {
  rate: Float64Array;
  fresh: Uint8Array;
  usd: number;
}

function grow<T extends Float64Array | Int32Array | Uint8Array>(a: T, n: number, fill: number): T {
  if (a.length >= n) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(n, 2 * a.length));
  b.fill(fill);
  b.set(a);
  return b;
}

/** The Dec of a float value: its text, the shortest round-trip one, made only when read. */
class FloatDec implements Dec {
  constructor(readonly value: number) {}
  get text(): string {
    return String(this.value);
  }
}

/** A data point of an own metric at tick `time` (`text`: the exact text, when not the float's). */
function decimal(
  metricId: string,
  time: number,
  exchangeId: string,
  value: number,
  ids: { symbolId?: string; assetId?: string },
  text?: string,
): MetricEvent {
  const dec: Dec = text === undefined ? new FloatDec(value) : { value, text };
  return { type: 'metric', time, metricId, exchangeId, ...ids, value: { kind: 'decimal', dec } };
}

/** The own metrics of one engine (see the module description). */
export class OwnMetrics {
  /** Per market: current weight share (NaN: no value yet), whether used, last written share. */
  private share = new Float64Array(0);
  private used = new Uint8Array(0);
  /** Per used market: the exchange it is counted for (a symbol event may move a market to another). */
  private usedAt = new Int32Array(0);
  private shareOut = new Float64Array(0);
  /** Per market: spread of the latest accepted quote (NaN: none) and last written. */
  private spread = new Float64Array(0);
  private spreadOut = new Float64Array(0);
  /** Per market: V of the last refresh and its exact text, last written text. */
  private volumeText: (string | undefined)[] = [];
  private volumeOut: (string | undefined)[] = [];
  /** Per exchange: markets used now, last written count (-1: never), last written rank (NaN: never). */
  private usedCount = new Int32Array(0);
  private usedOut = new Int32Array(0);
  private rankOut = new Float64Array(0);
  /** Per asset: the last written rate(asset, USD) (NaN: never). */
  private usdOut = new Float64Array(0);
  /** Markets whose share, spread or volume may have changed since the last emit. */
  private touched = new Uint8Array(0);
  private touchedList: number[] = [];
  /** Markets by (exchange id, symbol id) and exchanges by id: the order of the points of a tick. */
  private marketOrder: number[] = [];
  private exchangeOrder: number[] = [];
  /** Assets by id (sorted again when assets were added). */
  private assetOrder: number[] = [];
  /** The exchange of each market when {@link marketOrder} was sorted. */
  private orderedExchange = new Int32Array(0);

  /**
   * Sorts the markets and exchanges again when some were added since the last tick, or when a
   * touched market has moved to another exchange (a symbol event can do that).
   */
  private updateOrders(names: OwnMetricNames, exchangeCount: number): void {
    const nm = names.marketNames.length;
    const moved = this.touchedList.some((m) => this.orderedExchange[m] !== names.marketExchange[m]);
    if (moved || this.marketOrder.length !== nm || this.exchangeOrder.length !== exchangeCount) {
      this.orderedExchange = Int32Array.from({ length: nm }, (_, m) => names.marketExchange[m]);
      const ex = (m: number) => names.exchangeNames[names.marketExchange[m]];
      this.marketOrder = [...Array(nm).keys()].sort(
        (a, b) => byCodeUnit(ex(a), ex(b)) || byCodeUnit(names.marketNames[a], names.marketNames[b]),
      );
      this.exchangeOrder = [...Array(exchangeCount).keys()].sort((a, b) => byCodeUnit(names.exchangeNames[a], names.exchangeNames[b]));
    }
    const na = names.assetNames.length;
    if (this.assetOrder.length !== na) {
      this.assetOrder = [...Array(na).keys()].sort((a, b) => byCodeUnit(names.assetNames[a], names.assetNames[b]));
      this.usdOut = grow(this.usdOut, na, Number.NaN);
    }
  }

  private ensureMarkets(n: number): void {
    if (this.share.length >= n) return;
    this.share = grow(this.share, n, Number.NaN);
    this.used = grow(this.used, n, 0);
    this.usedAt = grow(this.usedAt, n, -1);
    this.shareOut = grow(this.shareOut, n, Number.NaN);
    this.spread = grow(this.spread, n, Number.NaN);
    this.spreadOut = grow(this.spreadOut, n, Number.NaN);
    this.touched = grow(this.touched, n, 0);
  }

  private ensureExchanges(n: number): void {
    if (this.usedCount.length >= n) return;
    this.usedCount = grow(this.usedCount, n, 0);
    this.usedOut = grow(this.usedOut, n, -1);
    this.rankOut = grow(this.rankOut, n, Number.NaN);
  }

  private touch(m: number): void {
    if (this.touched[m] === 0) {
      this.touched[m] = 1;
      this.touchedList.push(m);
    }
  }

  /** What was last written (see {@link OwnMetricsJSON}). */
  toJSON(): OwnMetricsJSON {
    return {
      pending: this.touchedList.filter((m) => !Number.isNaN(this.spread[m])).map((m) => [m, this.spread[m]]),
      share: Array.from(this.shareOut, orNull),
      spread: Array.from(this.spreadOut, orNull),
      volume: this.volumeOut.map((v) => v ?? null),
      used: Array.from(this.usedOut, (v) => (v < 0 ? null : v)),
      rank: Array.from(this.rankOut, orNull),
      usd: Array.from(this.usdOut, orNull),
    };
  }

  /** Restores what was last written (absent in a snapshot taken before own metrics: nothing). */
  restore(j: OwnMetricsJSON | undefined): void {
    if (j === undefined) return;
    this.ensureMarkets(j.share.length);
    this.shareOut.set(fromJSON(j.share, Number.NaN));
    this.spreadOut.set(fromJSON(j.spread, Number.NaN));
    this.volumeOut = j.volume.map((v) => v ?? undefined);
    this.ensureExchanges(j.used.length);
    this.usedOut.set(Int32Array.from(j.used, (v) => v ?? -1));
    this.rankOut.set(fromJSON(j.rank, Number.NaN));
    this.usdOut = fromJSON(j.usd ?? [], Number.NaN);
    for (const [m, spread] of j.pending ?? []) {
      this.ensureMarkets(m + 1);
      this.spread[m] = spread;
      this.touch(m);
    }
  }

  /** The latest accepted quote of market `m` (rule 5 may have discarded it). */
  noteQuote(m: number, bid: number, ask: number): void {
    this.ensureMarkets(m + 1);
    this.spread[m] = spreadOf(bid, ask);
    this.touch(m);
  }

  /**
   * Pair computed at this tick: its markets `markets` (in the pair's order), and when `ok` the
   * scratch of the computation (candidates `s.market[0..k)` with `s.keep` and `s.w`). A market that
   * is not a kept candidate has share 0 and is not used.
   */
  pairComputed(markets: readonly number[], marketExchange: ArrayLike<number>, ok: boolean, s: PairScratch, k: number): void {
    const n = markets.length;
    if (n === 0) return;
    let maxM = 0;
    for (let i = 0; i < n; i++) if (markets[i] > maxM) maxM = markets[i];
    this.ensureMarkets(maxM + 1);
    const share = this.share;
    const used = this.used;
    for (let i = 0; i < n; i++) {
      const m = markets[i];
      if (share[m] !== 0 || used[m] !== 0) {
        share[m] = 0;
        this.setUsed(m, 0, marketExchange);
        this.touch(m);
      }
    }
    if (!ok) return;
    let W = 0;
    for (let j = 0; j < k; j++) if (s.keep[j]) W += s.w[j];
    for (let j = 0; j < k; j++) {
      if (!s.keep[j]) continue;
      const m = s.market[j];
      share[m] = W > 0 ? s.w[j] / W : 0;
      this.setUsed(m, 1, marketExchange);
      this.touch(m);
    }
  }

  private setUsed(m: number, u: number, marketExchange: ArrayLike<number>): void {
    if (this.used[m] === u) return;
    this.used[m] = u;
    if (u === 0) {
      this.usedCount[this.usedAt[m]]--;
      return;
    }
    const x = marketExchange[m];
    this.ensureExchanges(x + 1);
    this.usedAt[m] = x;
    this.usedCount[x]++;
  }

  /** An eligibility refresh set V of market `m` (exact text `text`). */
  refreshed(m: number, text: string): void {
    this.ensureMarkets(m + 1);
    this.volumeText[m] = text;
    this.touch(m);
  }

  /**
   * Writes, to `onMetric`, every series whose value changed at tick T: markets touched since the
   * last emit, every exchange (`rank`: their ranks now; `exchangeCount` of them) and every asset
   * with a fresh rate to USD (`usd`, undefined when USD is no asset).
   */
  emit(
    T: number,
    names: OwnMetricNames,
    rank: ArrayLike<number>,
    exchangeCount: number,
    usd: UsdRates | undefined,
    onMetric: (e: MetricEvent) => void,
  ): void {
    const out: MetricEvent[] = [];
    this.ensureExchanges(exchangeCount);
    this.updateOrders(names, exchangeCount);
    // The touched markets in name order: a scan of the order (cheaper than sorting them each tick).
    const touched: number[] = [];
    if (this.touchedList.length > 0) {
      const flag = this.touched;
      for (const m of this.marketOrder) {
        if (flag[m] === 0) continue;
        flag[m] = 0;
        touched.push(m);
      }
      this.touchedList.length = 0;
    }
    const exchangeOrder = this.exchangeOrder;
    const exchangeOf = (m: number) => names.exchangeNames[names.marketExchange[m]];

    // By metric_id: XRATE_ASSET_* < XRATE_EXCHANGE_* < XRATE_MARKET_*.
    if (usd !== undefined) this.emitUsd(T, names.assetNames, usd, out);
    for (const x of exchangeOrder) {
      const c = this.usedCount[x];
      if (c === this.usedOut[x]) continue;
      this.usedOut[x] = c;
      out.push(decimal('XRATE_EXCHANGE_MARKETS_USED', T, names.exchangeNames[x], c, {}));
    }
    for (const x of exchangeOrder) {
      const r = rank[x];
      if (Object.is(r, this.rankOut[x])) continue;
      this.rankOut[x] = r;
      out.push(decimal('XRATE_EXCHANGE_RANK', T, names.exchangeNames[x], r, {}));
    }
    for (const m of touched) {
      const s = this.spread[m];
      if (Number.isNaN(s) || Object.is(s, this.spreadOut[m])) continue;
      this.spreadOut[m] = s;
      out.push(decimal('XRATE_MARKET_SPREAD', T, exchangeOf(m), s, { symbolId: names.marketNames[m] }));
    }
    for (const m of touched) {
      const text = this.volumeText[m];
      if (text === undefined || text === this.volumeOut[m]) continue;
      this.volumeOut[m] = text;
      out.push(decimal('XRATE_MARKET_VOLUME_24H', T, exchangeOf(m), Number(text), { symbolId: names.marketNames[m] }, text));
    }
    for (const m of touched) {
      const w = this.share[m];
      if (Number.isNaN(w) || Object.is(w, this.shareOut[m])) continue;
      this.shareOut[m] = w;
      out.push(decimal('XRATE_MARKET_WEIGHT_SHARE', T, exchangeOf(m), w, { symbolId: names.marketNames[m] }));
    }
    for (const e of out) onMetric(e);
  }

  /** XRATE_ASSET_USD_RATE: each asset's fresh rate to USD that differs from the last written. */
  private emitUsd(T: number, assetNames: readonly string[], usd: UsdRates, out: MetricEvent[]): void {
    const written = this.usdOut;
    for (const a of this.assetOrder) {
      const r = usd.rate[a];
      if (a === usd.usd || usd.fresh[a] !== 1 || Number.isNaN(r) || Object.is(r, written[a])) continue;
      written[a] = r;
      out.push(decimal('XRATE_ASSET_USD_RATE', T, OWN_EXCHANGE_ID, r, { assetId: assetNames[a] }));
    }
  }
}
