/**
 * The metric series that are rates, read as written: xrate's own XRATE_ASSET_USD_RATE is
 * rate(asset, USD), so the metrics answers (`/v1/metrics/...`, `xrate metrics`) write its values
 * as every rate is written (wireNumber, docs/methodology.md section 7): its current values, and its
 * timeseries' first, last, min, max and sum, computed from the values as written. The database
 * and the engine keep the values as computed; every other metric is written as stored.
 *
 * @module
 */
import type { OWN_METRIC_IDS } from '../core/engine/ownMetrics.js';
import { pointColumnsOf, type MetricFilter, type MetricsSource, type StoredMetricPoint } from '../core/metrics/source.js';
import type { MetricPointColumns } from '../core/metrics/timeseries.js';
import { wireNumber, wireText } from '../core/wire.js';

/** The own metric whose values are rates. */
const RATE_METRIC: (typeof OWN_METRIC_IDS)[number] = 'XRATE_ASSET_USD_RATE';

/** A point of the rate metric with its value as written; any other point as it is. */
function asWritten(p: StoredMetricPoint): StoredMetricPoint {
  if (p.metric_id !== RATE_METRIC || p.value.kind !== 'decimal' || !Number.isFinite(p.value.dec.value)) return p;
  const v = p.value.dec.value;
  return { ...p, value: { kind: 'decimal', dec: { value: wireNumber(v), text: wireText(v) } } };
}

/** Columns of the rate metric's points with the values as written. */
function columnsAsWritten(c: MetricPointColumns): MetricPointColumns {
  const n = c.values.length;
  const values: (number | null)[] = new Array(n);
  const texts: (string | null)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const v = c.values[i];
    const finite = v !== null && Number.isFinite(v);
    values[i] = finite ? wireNumber(v) : v;
    texts[i] = finite ? wireText(v) : c.texts[i];
  }
  return { times: c.times, values, texts };
}

/**
 * `source` with the values of its rate series as written (see the module description).
 *
 * @example
 * ```ts
 * ratesAsWritten(source).current({ metric_id: 'XRATE_ASSET_USD_RATE', asset_id: 'SOL' }); // value 131.009, stored 131.00900000000001
 * ```
 */
export function ratesAsWritten(source: MetricsSource): MetricsSource {
  const columns = (f: MetricFilter, from: number, to: number): MetricPointColumns => {
    // One series' columns when the filter names the metric; else the points tell which are rates.
    if (f.metric_id === undefined) return pointColumnsOf(source.points(f, from, to).map(asWritten));
    const c = source.pointColumns(f, from, to);
    return f.metric_id === RATE_METRIC ? columnsAsWritten(c) : c;
  };
  return {
    listing: (at) => source.listing(at),
    series: (f, at) => source.series(f, at),
    spans: (f, at) => source.spans(f, at),
    current: (f, at) => source.current(f, at).map(asWritten),
    points: (f, from, to) => source.points(f, from, to).map(asWritten),
    pointColumns: columns,
  };
}
