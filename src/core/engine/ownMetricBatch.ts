/**
 * xrate's own metrics (docs/methodology.md section 9) as the engine hands them out: the one list
 * of their ids, scopes and descriptions, from which every other list of them is derived, and
 * {@link OwnMetricBatch}, the data points of one tick as columns. What they are and how they are
 * computed: ownMetrics.ts.
 *
 * @module
 */
import type { MetricEvent } from '../metrics/events.js';
import type { MetricDefinition } from '../metrics/source.js';
import type { Dec } from '../types.js';

/** What a metric describes: an asset (rate to USD), an exchange, or a market (a symbol). */
type OwnMetricScope = 'asset' | 'exchange' | 'symbol';

/**
 * xrate's own metrics, in metric_id order (the order of the points of a tick); an
 * {@link OwnMetricBatch}'s `metric` column indexes it.
 */
const OWN_METRIC_LIST = [
  { metric_id: 'XRATE_ASSET_USD_RATE', scope: 'asset', description: 'rate(asset, USD) at the tick, when fresh (xrate)' },
  {
    metric_id: 'XRATE_EXCHANGE_MARKETS_USED',
    scope: 'exchange',
    description: 'number of the exchange’s markets used in some pair rate at the tick (xrate)',
  },
  { metric_id: 'XRATE_EXCHANGE_RANK', scope: 'exchange', description: 'rank of the exchange at the tick (xrate)' },
  {
    metric_id: 'XRATE_MARKET_SPREAD',
    scope: 'symbol',
    description: 'spread (ask - bid) / mid of the market’s latest accepted quote (xrate)',
  },
  {
    metric_id: 'XRATE_MARKET_VOLUME_24H',
    scope: 'symbol',
    description: 'traded volume V of the market at the last eligibility refresh (xrate)',
  },
  {
    metric_id: 'XRATE_MARKET_WEIGHT_SHARE',
    scope: 'symbol',
    description: 'w / sum(w) of the market in its pair rate at the tick; 0 when left out (xrate)',
  },
] as const satisfies readonly { metric_id: string; scope: OwnMetricScope; description: string }[];

/** The id of one of xrate's own metrics. */
type OwnMetricId = (typeof OWN_METRIC_LIST)[number]['metric_id'];

/**
 * The own metric ids in metric_id order.
 *
 * @example
 * ```ts
 * OWN_METRIC_IDS[0]; // 'XRATE_ASSET_USD_RATE'
 * ```
 */
export const OWN_METRIC_IDS: readonly OwnMetricId[] = Object.freeze(OWN_METRIC_LIST.map((d) => d.metric_id));

/**
 * The listing entries of xrate's own metrics.
 *
 * @example
 * ```ts
 * OWN_METRICS.map((d) => d.metric_id); // ['XRATE_ASSET_USD_RATE', 'XRATE_EXCHANGE_MARKETS_USED', ...]
 * ```
 */
export const OWN_METRICS: readonly MetricDefinition[] = Object.freeze(
  OWN_METRIC_LIST.map(({ metric_id, description }) => ({ metric_id, description })),
);

/** The scope of each own metric, by index. */
const SCOPES: readonly OwnMetricScope[] = OWN_METRIC_LIST.map((d) => d.scope);

/** The index of an own metric (the value of an {@link OwnMetricBatch}'s `metric` column). */
const indexOf = (id: OwnMetricId): number => OWN_METRIC_IDS.indexOf(id);
export const ASSET_USD_RATE = indexOf('XRATE_ASSET_USD_RATE');
export const EXCHANGE_MARKETS_USED = indexOf('XRATE_EXCHANGE_MARKETS_USED');
export const EXCHANGE_RANK = indexOf('XRATE_EXCHANGE_RANK');
export const MARKET_SPREAD = indexOf('XRATE_MARKET_SPREAD');
export const MARKET_VOLUME_24H = indexOf('XRATE_MARKET_VOLUME_24H');
export const MARKET_WEIGHT_SHARE = indexOf('XRATE_MARKET_WEIGHT_SHARE');

/** The exchange_id of the asset-level own metrics (XRATE_ASSET_USD_RATE), which no exchange computes. */
export const OWN_EXCHANGE_ID = 'XRATE';

/** The names the metrics need from the engine's tables. */
export interface OwnMetricNames {
  /** Symbol id, exchange id (index into `exchanges`) of each market. */
  marketNames: readonly string[];
  marketExchange: ArrayLike<number>;
  exchangeNames: readonly string[];
  assetNames: readonly string[];
}

/** A typed array of at least `n` elements (`a` itself, or a copy at least twice as long, the new elements `fill`). */
export function grow<T extends Float64Array | Int32Array | Uint8Array>(a: T, n: number, fill: number): T {
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

/**
 * The own-metric data points of one tick, as columns (no object per point: at size L a tick
 * writes thousands). Point i is metric `OWN_METRIC_IDS[metric[i]]` of `subject[i]` (an asset,
 * exchange or market index, by the metric's scope) with value `value[i]`; the accessors give its
 * ids and exact text, {@link event} the whole point. The batch and its columns are reused by the
 * next tick: read them during the call.
 *
 * @example
 * ```ts
 * createEngine({}, { onOwnMetrics: (b) => { for (let i = 0; i < b.length; i++) store(b.metricId(i), b.exchangeId(i), b.value[i]); } });
 * ```
 */
export class OwnMetricBatch {
  /** The tick, µs: every point's time. */
  time = 0;
  /** Number of points. */
  length = 0;
  metric = new Uint8Array(0);
  subject = new Int32Array(0);
  value = new Float64Array(0);
  /** Exact texts of XRATE_MARKET_VOLUME_24H points (by point index; other points' text is the float's). */
  private texts: string[] = [];
  private names: OwnMetricNames = { marketNames: [], marketExchange: [], exchangeNames: [], assetNames: [] };

  /** Empties the batch for tick `time` over the engine's `names`. */
  reset(time: number, names: OwnMetricNames): void {
    this.time = time;
    this.length = 0;
    this.names = names;
  }

  /**
   * Makes room for `n` more points: the columns then hold at least `length + n` elements, so the
   * engine can write points `length ..` into them directly and set `length` after.
   */
  reserve(n: number): void {
    const need = this.length + n;
    if (need <= this.value.length) return;
    const size = Math.max(64, need, 2 * this.value.length);
    this.metric = grow(this.metric, size, 0);
    this.subject = grow(this.subject, size, 0);
    this.value = grow(this.value, size, 0);
  }

  /** Appends a point (`text`: its exact decimal text, when not the float's). */
  push(metric: number, subject: number, value: number, text?: string): void {
    const i = this.length;
    if (i === this.value.length) this.reserve(1);
    this.metric[i] = metric;
    this.subject[i] = subject;
    this.value[i] = value;
    if (text !== undefined) this.texts[i] = text;
    this.length = i + 1;
  }

  metricId(i: number): string {
    return OWN_METRIC_IDS[this.metric[i]];
  }

  exchangeId(i: number): string {
    const scope = SCOPES[this.metric[i]];
    if (scope === 'asset') return OWN_EXCHANGE_ID;
    const n = this.names;
    return n.exchangeNames[scope === 'exchange' ? this.subject[i] : n.marketExchange[this.subject[i]]];
  }

  /** The symbol id of a market's point, undefined otherwise. */
  symbolId(i: number): string | undefined {
    return SCOPES[this.metric[i]] === 'symbol' ? this.names.marketNames[this.subject[i]] : undefined;
  }

  /** The asset id of an asset's point, undefined otherwise. */
  assetId(i: number): string | undefined {
    return SCOPES[this.metric[i]] === 'asset' ? this.names.assetNames[this.subject[i]] : undefined;
  }

  /** The exact decimal text of the value. */
  text(i: number): string {
    return this.metric[i] === MARKET_VOLUME_24H ? this.texts[i] : String(this.value[i]);
  }

  /** Point i as a metric event (what a `metric` event of the log with these fields would be). */
  event(i: number): MetricEvent {
    const value = this.value[i];
    const dec: Dec = this.metric[i] === MARKET_VOLUME_24H ? { value, text: this.texts[i] } : new FloatDec(value);
    const symbolId = this.symbolId(i);
    const assetId = this.assetId(i);
    return {
      type: 'metric',
      time: this.time,
      metricId: this.metricId(i),
      exchangeId: this.exchangeId(i),
      ...(symbolId !== undefined && { symbolId }),
      ...(assetId !== undefined && { assetId }),
      value: { kind: 'decimal', dec },
    };
  }

  /** Every point as a metric event, in order. */
  events(): MetricEvent[] {
    return Array.from({ length: this.length }, (_, i) => this.event(i));
  }
}
