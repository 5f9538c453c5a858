/**
 * Event records to typed metric events: validation of the `metric` and `metric_definition` events
 * of the event log (version 2).
 *
 * METHODOLOGY section 1 adds two event types; section 10 gives their meaning. A `metric` event is
 * one data point of one series: time, metric_id, exchange_id, symbol_id?, asset_id?, chain_id?,
 * network_id?, recv_time?, and exactly one of value_decimal / value_text / value_time. A
 * `metric_definition` event names a metric: time, metric_id, description. Neither changes any
 * rate. This module turns one record into one of these events or a {@link Reject}, with the
 * conventions and message wording of `src/core/events.ts` (absent = undefined, null or a blank
 * string; the first failing check, in the order of the table, decides the reason).
 *
 * @module
 */

import { decOf, getId, getOptionalId, getOptionalTime, getTime, isAbsent, missing, reject, stringOf, timeOf } from '../fields.js';
import { isReject } from '../types.js';
import type { Dec, Reject, TimeUs } from '../types.js';

/**
 * The value of one metric data point: a decimal (`value_decimal`, kept exactly), a text
 * (`value_text`) or a time (`value_time`, integer µs since the epoch).
 *
 * Why: METHODOLOGY section 10 — a data point carries exactly one of the three; only decimals
 * are aggregated (min, max, sum...), the others count only in `count`.
 *
 * @example
 * ```ts
 * const v: MetricValue = { kind: 'decimal', dec: { value: 0.5, text: '0.50' } };
 * ```
 */
export type MetricValue =
  | { readonly kind: 'decimal'; readonly dec: Dec }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'time'; readonly us: TimeUs };

/**
 * `metric` event: one data point of one series (key: {@link seriesKey}, scope: {@link metricScope}).
 *
 * @example
 * ```ts
 * const e: MetricEvent = { type: 'metric', time: 1704067200000000, metricId: 'FUNDING_RATE',
 *   exchangeId: 'BINANCE', symbolId: 'BINANCE_PERP_BTC_USDT',
 *   value: { kind: 'decimal', dec: { value: 0.0001, text: '0.0001' } } };
 * ```
 */
export interface MetricEvent {
  readonly type: 'metric';
  readonly time: TimeUs;
  readonly metricId: string;
  readonly exchangeId: string;
  readonly symbolId?: string;
  readonly assetId?: string;
  readonly chainId?: string;
  readonly networkId?: string;
  /** When the data point was received; the service reports `time` when absent (section 10). */
  readonly recvTime?: TimeUs;
  readonly value: MetricValue;
}

/**
 * `metric_definition` event: the description of a metric (the latest one wins, section 10).
 *
 * @example
 * ```ts
 * const d: MetricDefinitionEvent = { type: 'metric_definition', time: 1704067200000000,
 *   metricId: 'FUNDING_RATE', description: 'Funding rate of a perpetual contract' };
 * ```
 */
export interface MetricDefinitionEvent {
  readonly type: 'metric_definition';
  readonly time: TimeUs;
  readonly metricId: string;
  readonly description: string;
}

/** The record fields of the three exclusive value fields, in the order of the methodology. */
const VALUE_FIELDS = ['value_decimal', 'value_text', 'value_time'] as const;
type ValueField = (typeof VALUE_FIELDS)[number];

/** The one value of a metric record: exactly one of the value fields must be present. */
function getValue(r: Record<string, unknown>): MetricValue | Reject {
  const given = VALUE_FIELDS.filter((f) => !isAbsent(r[f]));
  if (given.length === 0) {
    return reject('missing_field', 'metric: missing required field "value_decimal", "value_text" or "value_time" (exactly one)');
  }
  if (given.length > 1) {
    const names = given.map((f) => `"${f}"`).join(', ');
    return reject('bad_field', `metric: exactly one of "value_decimal", "value_text", "value_time" may be given, got ${names}`);
  }
  return parseValue(given[0], r[given[0]]);
}

function parseValue(field: ValueField, v: unknown): MetricValue | Reject {
  switch (field) {
    case 'value_decimal': {
      const dec = decOf('metric', field, v);
      return isReject(dec) ? dec : { kind: 'decimal', dec };
    }
    case 'value_text': {
      const text = stringOf('metric', field, v, false);
      return isReject(text) ? text : { kind: 'text', text };
    }
    case 'value_time': {
      const us = timeOf('metric', field, v);
      return isReject(us) ? us : { kind: 'time', us };
    }
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The optional fields of a metric record, in the order of the methodology's table. */
function optionalFields(r: Record<string, unknown>): Partial<Mutable<MetricEvent>> | Reject {
  const out: Partial<Mutable<MetricEvent>> = {};
  const ids = [
    ['symbol_id', 'symbolId'],
    ['asset_id', 'assetId'],
    ['chain_id', 'chainId'],
    ['network_id', 'networkId'],
  ] as const;
  for (const [field, key] of ids) {
    const id = getOptionalId('metric', r, field);
    if (isReject(id)) return id;
    if (id !== undefined) out[key] = id;
  }
  const recvTime = getOptionalTime('metric', r, 'recv_time');
  if (isReject(recvTime)) return recvTime;
  if (recvTime !== undefined) out.recvTime = recvTime;
  return out;
}

/**
 * Validate a `metric` record and turn it into a {@link MetricEvent}, or a reject.
 *
 * Checks, in the order of the methodology's table, the first failure winning: `time`
 * (→ `missing_field` / `bad_time`), `metric_id`, `exchange_id` (→ `missing_field`; not a string
 * → `bad_field`), the optional `symbol_id`, `asset_id`, `chain_id`, `network_id` (not a string →
 * `bad_field`) and `recv_time` (→ `bad_time`), then the value: none of value_decimal /
 * value_text / value_time present → `missing_field` (no `field`: there is no single one); two or
 * three present → `bad_field` naming them in the message (no `field` either); `value_decimal`
 * not a finite decimal → `bad_number`; `value_text` not a string → `bad_field`; `value_time` not
 * an accepted time → `bad_time`. Absent = undefined, null or a blank string, as for every event.
 * Ids are trimmed; `value_text` is kept as it is; decimals keep their exact text. A symbol_id
 * together with an asset_id is accepted (its scope is symbol, {@link metricScope}). The record's
 * `type` is not checked (the caller dispatched on it). Never throws on JSON / CSV / SQLite values.
 *
 * Why: METHODOLOGY section 1 (the `metric` fields, a bad event becomes a counted reject) and
 * section 10 (one data point of one series; exactly one value).
 *
 * @param rec - field name to value (a parsed NDJSON object, a CSV row or a SQLite row)
 * @returns the event, or a {@link Reject} with `reason` and `message` (no `line`/`raw`)
 *
 * @example
 * ```ts
 * parseMetricEvent({ type: 'metric', time: '2024-01-01T00:00:00Z', metric_id: 'FUNDING_RATE',
 *                    exchange_id: 'BINANCE', symbol_id: 'BINANCE_PERP_BTC_USDT', value_decimal: '0.0001' });
 * // { type: 'metric', time: 1704067200000000, metricId: 'FUNDING_RATE', exchangeId: 'BINANCE',
 * //   symbolId: 'BINANCE_PERP_BTC_USDT', value: { kind: 'decimal', dec: { value: 0.0001, text: '0.0001' } } }
 * parseMetricEvent({ time: '2024-01-01', metric_id: 'M', exchange_id: 'X' }).reason; // 'missing_field'
 * ```
 */
export function parseMetricEvent(rec: Record<string, unknown>): MetricEvent | Reject {
  const time = getTime('metric', rec);
  if (isReject(time)) return time;
  const metricId = getId('metric', rec, 'metric_id');
  if (isReject(metricId)) return metricId;
  const exchangeId = getId('metric', rec, 'exchange_id');
  if (isReject(exchangeId)) return exchangeId;
  const optional = optionalFields(rec);
  if (isReject(optional)) return optional;
  const value = getValue(rec);
  if (isReject(value)) return value;
  return { type: 'metric', time, metricId, exchangeId, ...optional, value };
}

/**
 * Validate a `metric_definition` record and turn it into a {@link MetricDefinitionEvent}, or a
 * reject: `time` (→ `missing_field` / `bad_time`), `metric_id` and `description`
 * (→ `missing_field`; not a string → `bad_field`). The id is trimmed, the description kept as it
 * is. Never throws on JSON / CSV / SQLite values.
 *
 * Why: METHODOLOGY section 1 (the `metric_definition` fields) and section 10 (the listing is every
 * definition, the latest description winning).
 *
 * @param rec - field name to value
 * @returns the event, or a {@link Reject}
 *
 * @example
 * ```ts
 * parseMetricDefinitionEvent({ type: 'metric_definition', time: '2024-01-01', metric_id: 'FUNDING_RATE',
 *                              description: 'Funding rate' });
 * // { type: 'metric_definition', time: 1704067200000000, metricId: 'FUNDING_RATE', description: 'Funding rate' }
 * ```
 */
export function parseMetricDefinitionEvent(rec: Record<string, unknown>): MetricDefinitionEvent | Reject {
  const type = 'metric_definition';
  const time = getTime(type, rec);
  if (isReject(time)) return time;
  const metricId = getId(type, rec, 'metric_id');
  if (isReject(metricId)) return metricId;
  const v = rec.description;
  const description = isAbsent(v) ? missing(type, 'description') : stringOf(type, 'description', v, false);
  if (isReject(description)) return description;
  return { type, time, metricId, description };
}

/**
 * The scope of a metric series: `symbol`, `asset` or `exchange`.
 *
 * @example
 * ```ts
 * const s: MetricScope = 'asset';
 * ```
 */
export type MetricScope = 'symbol' | 'asset' | 'exchange';

/**
 * The scope of a metric data point: symbol-level when it has a symbol_id (even with an asset_id
 * too), asset-level when it has an asset_id and no symbol_id, exchange-level otherwise.
 *
 * Why: METHODOLOGY section 10 — the scope decides which endpoints (`/v1/metrics/symbol|asset|exchange/...`)
 * list the series.
 *
 * @example
 * ```ts
 * metricScope({ symbolId: 'BINANCE_PERP_BTC_USDT', assetId: 'BTC' }); // 'symbol'
 * metricScope({ assetId: 'BTC' });                                   // 'asset'
 * metricScope({});                                                   // 'exchange'
 * ```
 */
export function metricScope(e: Pick<MetricEvent, 'symbolId' | 'assetId'>): MetricScope {
  if (e.symbolId !== undefined) return 'symbol';
  return e.assetId !== undefined ? 'asset' : 'exchange';
}

/**
 * The key of a metric series, with the record's field names (so `key[groupby]` is a group label).
 * `symbol_id` and `asset_id` are `""` when the data point has none.
 *
 * @example
 * ```ts
 * const k: SeriesKey = { metric_id: 'M', exchange_id: 'X', symbol_id: '', asset_id: 'BTC' };
 * ```
 */
export interface SeriesKey {
  readonly metric_id: string;
  readonly exchange_id: string;
  readonly symbol_id: string;
  readonly asset_id: string;
}

/**
 * The series a metric data point belongs to: (metric_id, exchange_id, symbol_id or "", asset_id
 * or ""). chain_id and network_id are not part of the key.
 *
 * Why: METHODOLOGY section 10 — "the series key is (metric_id, exchange_id, symbol_id or "",
 * asset_id or "")"; "current" and the timeseries are per series.
 *
 * @example
 * ```ts
 * seriesKey({ metricId: 'M', exchangeId: 'X', assetId: 'BTC' });
 * // { metric_id: 'M', exchange_id: 'X', symbol_id: '', asset_id: 'BTC' }
 * ```
 */
export function seriesKey(e: Pick<MetricEvent, 'metricId' | 'exchangeId' | 'symbolId' | 'assetId'>): SeriesKey {
  return { metric_id: e.metricId, exchange_id: e.exchangeId, symbol_id: e.symbolId ?? '', asset_id: e.assetId ?? '' };
}
