/**
 * CSV output of the rate service: header = the JSON field names in schema order; the all-rates
 * object flattens to one row per quote asset with `asset_id_base` repeated, the grouped metrics
 * result to one row per item with its `series_label` repeated; explain flattens to one row per
 * market. A cell holding the delimiter, a quote or a line break is always quoted
 * (RFC 4180). The options ({@link CsvOptions}) are read from the query by `csvOptions`.
 *
 * @module
 */
import { parseTime } from '../../core/time.js';
import type { CsvOptions, PayloadKind } from './negotiate.js';
import { DEFAULT_TIME_FORMAT, formatTimeCustom } from './time.js';

type ColType = 'string' | 'number' | 'int' | 'time' | 'bool';
interface Column {
  name: string;
  type: ColType;
}

const c = (name: string, type: ColType): Column => ({ name, type });

const RATE_COLS = [c('time', 'time'), c('asset_id_base', 'string'), c('asset_id_quote', 'string'), c('rate', 'number')];
const RATES_COLS = [c('asset_id_base', 'string'), c('time', 'time'), c('asset_id_quote', 'string'), c('rate', 'number')];
const PERIOD_COLS = [
  c('period_id', 'string'),
  c('length_seconds', 'int'),
  c('length_months', 'int'),
  c('unit_count', 'int'),
  c('unit_name', 'string'),
  c('display_name', 'string'),
];
const HISTORY_COLS = [
  c('time_period_start', 'time'),
  c('time_period_end', 'time'),
  c('time_open', 'time'),
  c('time_close', 'time'),
  c('rate_open', 'number'),
  c('rate_high', 'number'),
  c('rate_low', 'number'),
  c('rate_close', 'number'),
];
const EXPLAIN_COLS = [
  c('asset_id_base', 'string'),
  c('asset_id_quote', 'string'),
  c('tick', 'time'),
  c('kind', 'string'),
  c('rate', 'number'),
  c('time', 'time'),
  c('leg_pair', 'string'),
  c('leg_from', 'string'),
  c('leg_to', 'string'),
  c('leg_inverted', 'bool'),
  c('leg_rate', 'number'),
  c('status', 'string'),
  c('symbol_id', 'string'),
  c('exchange_id', 'string'),
  c('rank', 'number'),
  c('reason', 'string'),
  c('detail', 'string'),
  c('price', 'number'),
  c('q', 'number'),
  c('volume', 'number'),
  c('weight', 'number'),
  c('weight_share', 'number'),
  c('quote_time', 'time'),
  c('quote_age_seconds', 'number'),
];

const METRIC_COLS = [c('metric_id', 'string'), c('description', 'string')];
const METRIC_EXCHANGE_LISTING_COLS = [c('exchange_id', 'string'), c('metric_id', 'string')];
const METRIC_SYMBOL_LISTING_COLS = [...METRIC_EXCHANGE_LISTING_COLS, c('symbol_id', 'string')];
const METRIC_ASSET_LISTING_COLS = [
  c('metric_id', 'string'),
  c('symbol_id', 'string'),
  c('exchange_id', 'string'),
  c('asset_id', 'string'),
  c('chain_id', 'string'),
  c('network_id', 'string'),
];
const METRIC_CURRENT_COLS = [
  c('entry_time', 'time'),
  c('recv_time', 'time'),
  c('exchange_id', 'string'),
  c('asset_id', 'string'),
  c('symbol_id', 'string'),
  c('metric_id', 'string'),
  c('value_decimal', 'number'),
  c('value_text', 'string'),
  c('value_time', 'time'),
];
const METRIC_BY_EXCHANGE_COLS = [
  c('asset_id', 'string'),
  c('exchange_id', 'string'),
  c('metric_id', 'string'),
  c('symbol_id', 'string'),
  c('chain_id', 'string'),
  c('network_id', 'string'),
  c('min_time', 'time'),
  c('max_time', 'time'),
];
const METRIC_HISTORY_COLS = [
  c('time_period_start', 'time'),
  c('time_period_end', 'time'),
  c('time_open', 'time'),
  c('time_close', 'time'),
  c('first', 'number'),
  c('last', 'number'),
  c('min', 'number'),
  c('max', 'number'),
  c('count', 'int'),
  c('sum', 'number'),
];
const METRIC_GROUP_COLS = [c('series_label', 'string'), ...METRIC_HISTORY_COLS];

const SYMBOL_COLS = [
  c('symbol_id', 'string'),
  c('exchange_id', 'string'),
  c('symbol_type', 'string'),
  c('asset_id_base', 'string'),
  c('asset_id_quote', 'string'),
  c('future_delivery_time', 'time'),
  c('option_type_is_call', 'bool'),
  c('option_strike_price', 'number'),
  c('option_expiration_time', 'time'),
  c('data_start', 'time'),
  c('data_end', 'time'),
  c('data_quote_start', 'time'),
  c('data_quote_end', 'time'),
  c('data_trade_start', 'time'),
  c('data_trade_end', 'time'),
  c('volume_1hrs', 'number'),
  c('volume_1hrs_usd', 'number'),
  c('volume_1day', 'number'),
  c('volume_1day_usd', 'number'),
  c('price', 'number'),
  c('symbol_id_exchange', 'string'),
  c('asset_id_base_exchange', 'string'),
  c('asset_id_quote_exchange', 'string'),
  c('price_precision', 'number'),
  c('size_precision', 'number'),
];
const SYMBOL_MAP_COLS = [
  c('symbol_id', 'string'),
  c('symbol_id_exchange', 'string'),
  c('asset_id_base_exchange', 'string'),
  c('asset_id_quote_exchange', 'string'),
  c('asset_id_base', 'string'),
  c('asset_id_quote', 'string'),
  c('price_precision', 'number'),
  c('size_precision', 'number'),
];

type Row = Record<string, unknown>;

/**
 * The grouped result flattened as the all-rates object is: one row per item of each group, its
 * label repeated (`series_label`); a group with no item is one row of its label alone.
 */
function metricGroupRows(groups: { series_label: readonly string[]; rows: readonly (readonly Row[])[] }): Row[] {
  return groups.series_label.flatMap((label, i) => {
    const items = groups.rows[i] ?? [];
    return items.length === 0 ? [{ series_label: label }] : items.map((item) => ({ series_label: label, ...item }));
  });
}

function csvRows(kind: PayloadKind, value: unknown): { cols: Column[]; rows: Row[] } {
  switch (kind) {
    case 'rate':
      return { cols: RATE_COLS, rows: [value as Row] };
    case 'rates': {
      const v = value as { asset_id_base: string; rates: Row[] };
      return { cols: RATES_COLS, rows: v.rates.map((r) => ({ asset_id_base: v.asset_id_base, ...r })) };
    }
    case 'periods':
      return { cols: PERIOD_COLS, rows: value as Row[] };
    case 'history':
      return { cols: HISTORY_COLS, rows: value as Row[] };
    case 'explain': {
      const e = value as {
        asset_id_base: string;
        asset_id_quote: string;
        tick: string | null;
        kind: string;
        rate: number | null;
        time: string | null;
        legs: { pair: string; from: string; to: string; inverted: boolean; rate: number; explanation: { used: Row[]; excluded: Row[] } }[];
      };
      const head = {
        asset_id_base: e.asset_id_base,
        asset_id_quote: e.asset_id_quote,
        tick: e.tick,
        kind: e.kind,
        rate: e.rate,
        time: e.time,
      };
      const rows: Row[] = [];
      for (const l of e.legs) {
        const leg = { ...head, leg_pair: l.pair, leg_from: l.from, leg_to: l.to, leg_inverted: l.inverted, leg_rate: l.rate };
        for (const m of l.explanation.used) rows.push({ ...leg, status: 'used', ...m });
        for (const m of l.explanation.excluded) rows.push({ ...leg, status: 'excluded', ...m });
        if (l.explanation.used.length + l.explanation.excluded.length === 0) rows.push(leg);
      }
      if (rows.length === 0) rows.push(head);
      return { cols: EXPLAIN_COLS, rows };
    }
    case 'metrics':
      return { cols: METRIC_COLS, rows: value as Row[] };
    case 'metric_exchange_listing':
      return { cols: METRIC_EXCHANGE_LISTING_COLS, rows: value as Row[] };
    case 'metric_symbol_listing':
      return { cols: METRIC_SYMBOL_LISTING_COLS, rows: value as Row[] };
    case 'metric_asset_listing':
      return { cols: METRIC_ASSET_LISTING_COLS, rows: value as Row[] };
    case 'metric_current':
      return { cols: METRIC_CURRENT_COLS, rows: value as Row[] };
    case 'metric_by_exchange':
      return { cols: METRIC_BY_EXCHANGE_COLS, rows: value as Row[] };
    case 'metric_history':
      return { cols: METRIC_HISTORY_COLS, rows: value as Row[] };
    case 'metric_groups':
      return { cols: METRIC_GROUP_COLS, rows: metricGroupRows(value as Parameters<typeof metricGroupRows>[0]) };
    case 'symbols':
      return { cols: SYMBOL_COLS, rows: value as Row[] };
    case 'symbol_map':
      return { cols: SYMBOL_MAP_COLS, rows: value as Row[] };
  }
}

function cell(v: unknown, type: ColType, o: CsvOptions, quoteStrings: boolean): string {
  if (v === null || v === undefined) return '';
  let s: string;
  switch (type) {
    case 'number':
      s = typeof v === 'number' ? String(v) : String(v);
      if (o.decMark !== '.') s = s.replace('.', o.decMark);
      break;
    case 'int':
    case 'bool':
      s = String(v);
      break;
    case 'time': {
      const us = typeof v === 'string' ? parseTime(v) : undefined;
      s =
        us === undefined ? String(v) : o.timeFormat === DEFAULT_TIME_FORMAT ? (v as string) : formatTimeCustom(us, o.timeFormat, o.decMark);
      break;
    }
    case 'string':
      s = String(v);
      if (quoteStrings) return `"${s.replace(/"/g, '""')}"`;
      break;
  }
  if (s.includes(o.delimiter) || /["\r\n]/.test(s)) return `"${s.replace(/"/g, '""')}"`;
  return s;
}

function headerLine(cols: Column[], o: CsvOptions): string {
  return o.includeHeader ? cols.map((col) => cell(col.name, 'string', o, o.includeQuotes)).join(o.delimiter) + o.newline : '';
}

function rowLines(cols: Column[], rows: readonly Row[], o: CsvOptions): string {
  let out = '';
  for (const r of rows) out += cols.map((col) => cell(r[col.name], col.type, o, o.includeQuotes)).join(o.delimiter) + o.newline;
  return out;
}

function selected(all: Column[], o: CsvOptions): Column[] {
  return all.filter((col) => !o.excludeCols.has(col.name.toLowerCase()));
}

/** CSV text of a payload. */
export function toCsv(kind: PayloadKind, value: unknown, o: CsvOptions): string {
  const { cols: all, rows } = csvRows(kind, value);
  const cols = selected(all, o);
  return headerLine(cols, o) + rowLines(cols, rows, o);
}

/**
 * The CSV of a history (ExchangeRatesTimeseriesItem[]) in pieces, for a long answer written a
 * slice at a time: the header row (empty without one), then the rows of each run of items. The
 * pieces joined are {@link toCsv} of the whole array.
 */
export function csvHistoryPieces(o: CsvOptions): { header: string; rows: (items: readonly unknown[]) => string } {
  const cols = selected(HISTORY_COLS, o);
  return { header: headerLine(cols, o), rows: (items) => rowLines(cols, items as readonly Row[], o) };
}
