/**
 * Content negotiation of the rate service: JSON (default), XML and CSV by `output_format`,
 * MessagePack by `Accept`, and the `csv_*` options of the interface.
 *
 * - MessagePack (`application/x-msgpack`) is chosen only when it is the only acceptable type in
 *   `Accept`, or the first with a q strictly higher than every other; never over an explicit
 *   `output_format`.
 * - CSV options: `csv_include_header` (default true), `csv_include_quotes` (default false: quote
 *   string columns), `csv_exclude_col` (comma-separated names), `csv_set_delimiter` (default
 *   `;`), `csv_set_dec_mark` (default `.`), `csv_set_timeformat` (.NET-style custom format,
 *   default `yyyy-MM-ddTHH:mm:ss.fffffffZ`, or `unix`), `csv_set_newline` (`win`, `mac`,
 *   `unix` = default).
 *
 * @module
 */
import { badParam } from '../errors.js';
import { type Query, shown } from '../params.js';
import { checkTimeFormat, DEFAULT_TIME_FORMAT } from './time.js';

/** The kinds of payload the service answers with. */
export type PayloadKind = 'rate' | 'rates' | 'periods' | 'history' | 'explain' | MetricPayloadKind | SymbolPayloadKind;

/** The payloads of the symbols routes (src/service/symbols.ts), arrays of `v1.Symbol` and `v1.SymbolMapping`. */
export type SymbolPayloadKind = 'symbols' | 'symbol_map';

/**
 * The payloads of the metrics routes (src/service/metrics.ts): arrays of `v1.Metric`, of the
 * exchange-, symbol- and asset-level listing items, of current values (`v1.GeneralData`), of
 * metric-by-exchange items and of metric history items; and the grouped result of
 * `/v1/metrics/group` (`{series_label, rows}`).
 */
export type MetricPayloadKind =
  | 'metrics'
  | 'metric_exchange_listing'
  | 'metric_symbol_listing'
  | 'metric_asset_listing'
  | 'metric_current'
  | 'metric_by_exchange'
  | 'metric_history'
  | 'metric_groups';

/** CSV options (see the module description). */
export interface CsvOptions {
  includeHeader: boolean;
  includeQuotes: boolean;
  excludeCols: Set<string>;
  delimiter: string;
  decMark: string;
  /** A custom time format, or `unix`. */
  timeFormat: string;
  newline: string;
}

/** What to answer with. */
export type OutputFormat = { kind: 'json' } | { kind: 'msgpack' } | { kind: 'xml' } | { kind: 'csv'; csv: CsvOptions };

/** Content-Type of each format. */
export const CONTENT_TYPES = {
  json: 'application/json; charset=utf-8',
  msgpack: 'application/x-msgpack',
  xml: 'application/xml; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
} as const;

const JSON_FORMAT: OutputFormat = { kind: 'json' };
const MSGPACK_FORMAT: OutputFormat = { kind: 'msgpack' };
const XML_FORMAT: OutputFormat = { kind: 'xml' };
const MSGPACK_TYPES = new Set(['application/x-msgpack', 'application/msgpack', 'application/vnd.msgpack']);

/**
 * Whether `Accept` asks for MessagePack: `application/x-msgpack` is the only acceptable type, or
 * the first listed with a q strictly above every other type's.
 *
 * @example
 * ```ts
 * prefersMsgpack('application/x-msgpack'); // true
 * prefersMsgpack('text/plain, application/json, text/json, application/x-msgpack'); // false
 * prefersMsgpack('application/x-msgpack, application/json;q=0.5'); // true
 * ```
 */
export function prefersMsgpack(accept: string | undefined): boolean {
  if (accept === undefined || !/msgpack/i.test(accept)) return false;
  const ranges: { type: string; q: number }[] = [];
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!type) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (Number.isFinite(q) && q > 0) ranges.push({ type, q });
  }
  if (ranges.length === 0 || !MSGPACK_TYPES.has(ranges[0].type)) {
    return false;
  }
  const others = ranges.filter((r) => !MSGPACK_TYPES.has(r.type));
  if (others.length === 0) return true;
  return ranges[0].q > Math.max(...others.map((r) => r.q));
}

/** Reads the CSV options (400 naming a bad one). */
export function csvOptions(q: Query): CsvOptions {
  let delimiter = q.str('csv_set_delimiter') ?? ';';
  if (delimiter === '\\t' || delimiter.toLowerCase() === 'tab') delimiter = '\t';
  if (delimiter.length === 0 || delimiter.length > 4 || /["\r\n]/.test(delimiter)) {
    throw badParam('csv_set_delimiter', `${shown(delimiter)} is not a delimiter (1 to 4 characters, no quote or line break)`);
  }
  const decMark = q.str('csv_set_dec_mark') ?? '.';
  if (decMark.length !== 1 || /[0-9\-+eE"\r\n]/.test(decMark)) {
    throw badParam('csv_set_dec_mark', `${shown(decMark)} is not a decimal mark (one character, not a digit, sign, "e" or quote)`);
  }
  const timeFormat = q.text('csv_set_timeformat') ?? DEFAULT_TIME_FORMAT;
  if (timeFormat.length > 64) throw badParam('csv_set_timeformat', 'longer than 64 characters');
  if (timeFormat.toLowerCase() !== 'unix') checkTimeFormat(timeFormat);
  const nl = (q.text('csv_set_newline') ?? 'unix').toLowerCase();
  const newline = nl === 'win' ? '\r\n' : nl === 'mac' ? '\r' : nl === 'unix' ? '\n' : undefined;
  if (newline === undefined) throw badParam('csv_set_newline', `${shown(q.str('csv_set_newline')!)} is not one of win, mac, unix`);
  const excludeCols = new Set(
    (q.str('csv_exclude_col') ?? '')
      .split(/[,;]/)
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  return {
    includeHeader: q.bool('csv_include_header', true),
    includeQuotes: q.bool('csv_include_quotes', false),
    excludeCols,
    delimiter,
    decMark,
    timeFormat: timeFormat.toLowerCase() === 'unix' ? 'unix' : timeFormat,
    newline,
  };
}

/**
 * The output format of a request: `output_format` (json, xml, csv; case-insensitive) wins; else
 * MessagePack when `Accept` asks for it (see {@link prefersMsgpack}); else JSON.
 */
export function negotiate(q: Query, accept: string | undefined): OutputFormat {
  const of = q.text('output_format');
  if (of !== undefined) {
    switch (of.toLowerCase()) {
      case 'json':
        return JSON_FORMAT;
      case 'xml':
        return XML_FORMAT;
      case 'csv':
        return { kind: 'csv', csv: csvOptions(q) };
      default:
        throw badParam('output_format', `${shown(of)} is not one of json, xml, csv`);
    }
  }
  return prefersMsgpack(accept) ? MSGPACK_FORMAT : JSON_FORMAT;
}
