/**
 * The stored metrics of a log replayed in memory (`xrate metrics LOG`, `xrate serve --replay`):
 * the same answers as the replay database's (io/metricStore.ts) for the same events.
 *
 * @module
 */
import { metricScope, type MetricDefinitionEvent, type MetricEvent, type SeriesKey } from '../core/metrics/events.js';
import {
  byCodeUnit,
  type MetricDefinition,
  type MetricFilter,
  type MetricsSource,
  metricListing,
  pointColumnsOf,
  type SeriesSpan,
  type StoredMetricPoint,
} from '../core/metrics/source.js';
import type { MetricPointColumns } from '../core/metrics/timeseries.js';
import type { TimeUs } from '../core/types.js';
import { asOfTick } from '../io/metricStore.js';

/** Whether a point's series matches a filter (see {@link MetricFilter}). */
function matches(p: SeriesKey, f: MetricFilter): boolean {
  if (f.metric_id !== undefined && p.metric_id !== f.metric_id) return false;
  if (f.exchange_id !== undefined && p.exchange_id !== f.exchange_id) return false;
  if (f.symbol_id !== undefined && p.symbol_id !== f.symbol_id) return false;
  if (f.asset_id !== undefined && p.asset_id !== f.asset_id) return false;
  if (f.scope === undefined) return true;
  return metricScope({ symbolId: p.symbol_id || undefined, assetId: p.asset_id || undefined }) === f.scope;
}

/** The series key of a point, as one string (fields cannot hold NUL). */
function keyText(k: SeriesKey): string {
  return `${k.metric_id}\0${k.exchange_id}\0${k.symbol_id}\0${k.asset_id}`;
}

/** The point of an accepted metric event, `seq` its position among the metric events. */
export function storedPoint(e: MetricEvent, seq: number): StoredMetricPoint {
  const p: StoredMetricPoint = {
    metric_id: e.metricId,
    exchange_id: e.exchangeId,
    symbol_id: e.symbolId ?? '',
    asset_id: e.assetId ?? '',
    time: e.time,
    recvTime: e.recvTime ?? e.time,
    seq,
    value: e.value,
  };
  if (e.chainId === undefined && e.networkId === undefined) return p;
  return { ...p, ...(e.chainId !== undefined && { chain_id: e.chainId }), ...(e.networkId !== undefined && { network_id: e.networkId }) };
}

/**
 * Metric points and definitions kept in memory, in log order.
 *
 * @example
 * ```ts
 * const metrics = new MemoryMetrics();
 * const engine = createEngine({}, { onMetric: (e) => metrics.addPoint(e) });
 * ```
 */
export class MemoryMetrics implements MetricsSource {
  private readonly all: StoredMetricPoint[] = [];
  private readonly defs: (MetricDefinition & { time: TimeUs })[] = [];

  /** `own`: the definitions of xrate's own metrics (listed when points of them were added). */
  constructor(private readonly own: readonly MetricDefinition[] = []) {}

  /** Adds the point of an accepted metric event (events come in log order, so in time order). */
  addPoint(e: MetricEvent): void {
    this.all.push(storedPoint(e, this.all.length + 1));
  }

  /** Adds an accepted definition. */
  addDefinition(e: MetricDefinitionEvent): void {
    this.defs.push({ metric_id: e.metricId, description: e.description, time: e.time });
  }

  listing(at?: TimeUs): MetricDefinition[] {
    const t = asOfTick(at);
    const seen = this.all.filter((p) => p.time <= t).map((p) => p.metric_id);
    return metricListing(
      this.own,
      seen,
      this.defs.filter((d) => d.time <= t),
    );
  }

  series(filter: MetricFilter, at?: TimeUs): SeriesKey[] {
    return this.current(filter, at).map(({ metric_id, exchange_id, symbol_id, asset_id }) => ({
      metric_id,
      exchange_id,
      symbol_id,
      asset_id,
    }));
  }

  current(filter: MetricFilter, at?: TimeUs): StoredMetricPoint[] {
    const t = asOfTick(at);
    const latest = new Map<string, StoredMetricPoint>();
    // Points are in log order: a later one at the same or a later time wins.
    for (const p of this.all) {
      if (p.time > t || !matches(p, filter)) continue;
      const k = keyText(p);
      const q = latest.get(k);
      if (q === undefined || p.time >= q.time) latest.set(k, p);
    }
    return [...latest].sort((a, b) => byCodeUnit(a[0], b[0])).map(([, p]) => p);
  }

  spans(filter: MetricFilter, at?: TimeUs): SeriesSpan[] {
    const t = asOfTick(at);
    const first = new Map<string, TimeUs>();
    for (const p of this.all) {
      if (p.time > t || !matches(p, filter)) continue;
      const k = keyText(p);
      const f = first.get(k);
      if (f === undefined || p.time < f) first.set(k, p.time);
    }
    return this.current(filter, at).map(({ metric_id, exchange_id, symbol_id, asset_id, time }) => {
      const key = { metric_id, exchange_id, symbol_id, asset_id };
      return { ...key, first: first.get(keyText(key)) ?? time, last: time };
    });
  }

  points(filter: MetricFilter, from: TimeUs, to: TimeUs): StoredMetricPoint[] {
    const out = this.all.filter((p) => p.time >= from && p.time < to && matches(p, filter));
    return out.sort((a, b) => a.time - b.time || a.seq - b.seq);
  }

  pointColumns(filter: MetricFilter, from: TimeUs, to: TimeUs): MetricPointColumns {
    return pointColumnsOf(this.points(filter, from, to));
  }
}
