/**
 * Output formats of the rate service: JSON (default), XML and CSV by `output_format`, MessagePack
 * by `Accept`, with every `csv_*` option of the interface.
 *
 * - JSON: the interface's shapes, field order of the schemas, numbers as JSON numbers.
 * - MessagePack (`application/x-msgpack`): the same maps as JSON (plain maps, no
 *   extension types), times as the same strings, rates as float64. Chosen only when
 *   `application/x-msgpack` is the only acceptable type in `Accept`, or the first with a q
 *   strictly higher than every other; never over an explicit `output_format`.
 * - XML: no shape is published, so elements are named after the schema (`ExchangeRate`,
 *   `ExchangeRates`, `ArrayOfTimeseriesPeriod`, `ArrayOfExchangeRatesTimeseriesItem`,
 *   `RateExplanation`); arrays are wrapper elements holding one element per item; a null is
 *   `<x xsi:nil="true"/>` (docs/service.md).
 * - CSV: header = the JSON field names in schema order; the all-rates object flattens to one row
 *   per quote asset with `asset_id_base` repeated; explain flattens to one row per market.
 *   Options: `csv_include_header` (default true), `csv_include_quotes` (default false: quote
 *   string columns), `csv_exclude_col` (comma-separated names), `csv_set_delimiter` (default
 *   `;`), `csv_set_dec_mark` (default `.`), `csv_set_timeformat` (.NET-style custom format,
 *   default `yyyy-MM-ddTHH:mm:ss.fffffffZ`, or `unix`), `csv_set_newline` (`win`, `mac`,
 *   `unix` = default). A cell holding the delimiter, a quote or a line break is always quoted
 *   (RFC 4180).
 *
 * @module
 */
import { XMLBuilder } from 'fast-xml-parser';
import { encode } from '@msgpack/msgpack';
import { parseTime } from '../core/time.js';
import { badParam } from './errors.js';
import { Query, shown } from './params.js';

/** The kinds of payload the service answers with. */
export type PayloadKind = 'rate' | 'rates' | 'periods' | 'history' | 'explain';

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

/** The default CSV time format (7 fractional digits, as in JSON). */
export const DEFAULT_TIME_FORMAT = 'yyyy-MM-ddTHH:mm:ss.fffffffZ';

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

// ------------------------------------------------------------------ time formats

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

type Token = { lit: string } | { spec: string; n: number };

function tokenize(fmt: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i];
    if (c === "'" || c === '"') {
      const j = fmt.indexOf(c, i + 1);
      if (j < 0) throw badParam('csv_set_timeformat', `unterminated quoted literal in ${shown(fmt)}`);
      out.push({ lit: fmt.slice(i + 1, j) });
      i = j + 1;
    } else if (c === '\\') {
      if (i + 1 >= fmt.length) throw badParam('csv_set_timeformat', `a trailing "\\" in ${shown(fmt)}`);
      out.push({ lit: fmt[i + 1] });
      i += 2;
    } else if (c === '%') {
      i++;
    } else if ('yMdHhmsfFtKz'.includes(c)) {
      let j = i;
      while (j < fmt.length && fmt[j] === c) j++;
      const n = j - i;
      if ((c === 'f' || c === 'F') && n > 7) throw badParam('csv_set_timeformat', `more than 7 "${c}" in ${shown(fmt)}`);
      out.push({ spec: c, n });
      i = j;
    } else {
      out.push({ lit: c });
      i++;
    }
  }
  return out;
}

function checkTimeFormat(fmt: string): void {
  tokenize(fmt);
}

const formatCache = new Map<string, Token[]>();

function pad(v: number, n: number): string {
  return String(v).padStart(n, '0');
}

/**
 * Formats µs since the epoch (UTC) with a .NET-style custom format: `yyyy yy y MM M MMM MMMM dd d
 * ddd dddd HH H hh h mm m ss s f..fffffff F..FFFFFFF tt t K z zz zzz`, quoted literals, `\`
 * escapes; other characters are copied. With `unix`: seconds since the epoch (fraction only when
 * not zero, with `decMark`).
 *
 * @example
 * ```ts
 * formatTimeCustom(1709272451206274, 'yyyy-MM-dd HH:mm:ss.fff', '.'); // '2024-03-01 05:54:11.206'
 * formatTimeCustom(1709272451206274, 'unix', ','); // '1709272451,206274'
 * ```
 */
export function formatTimeCustom(us: number, fmt: string, decMark: string): string {
  if (fmt === 'unix') {
    const s = Math.floor(us / 1e6);
    const f = us - s * 1e6;
    return f === 0 ? String(s) : `${s}${decMark}${pad(f, 6).replace(/0+$/, '')}`;
  }
  let tokens = formatCache.get(fmt);
  if (!tokens) {
    tokens = tokenize(fmt);
    if (formatCache.size < 256) formatCache.set(fmt, tokens);
  }
  const ms = Math.floor(us / 1000);
  const d = new Date(ms);
  const frac7 = (us - Math.floor(us / 1e6) * 1e6) * 10; // 100 ns units
  let out = '';
  for (const t of tokens) {
    if ('lit' in t) {
      out += t.lit;
      continue;
    }
    const { spec, n } = t;
    switch (spec) {
      case 'y': {
        const y = d.getUTCFullYear();
        out += n === 1 ? String(y % 100) : n === 2 ? pad(y % 100, 2) : pad(y, n);
        break;
      }
      case 'M': {
        const m = d.getUTCMonth();
        out += n === 1 ? String(m + 1) : n === 2 ? pad(m + 1, 2) : n === 3 ? MONTH_NAMES[m].slice(0, 3) : MONTH_NAMES[m];
        break;
      }
      case 'd': {
        const v = d.getUTCDate();
        const w = d.getUTCDay();
        out += n === 1 ? String(v) : n === 2 ? pad(v, 2) : n === 3 ? DAY_NAMES[w].slice(0, 3) : DAY_NAMES[w];
        break;
      }
      case 'H':
        out += n === 1 ? String(d.getUTCHours()) : pad(d.getUTCHours(), 2);
        break;
      case 'h': {
        const h = d.getUTCHours() % 12 || 12;
        out += n === 1 ? String(h) : pad(h, 2);
        break;
      }
      case 'm':
        out += n === 1 ? String(d.getUTCMinutes()) : pad(d.getUTCMinutes(), 2);
        break;
      case 's':
        out += n === 1 ? String(d.getUTCSeconds()) : pad(d.getUTCSeconds(), 2);
        break;
      case 'f':
        out += pad(frac7, 7).slice(0, n);
        break;
      case 'F': {
        const s = pad(frac7, 7).slice(0, n).replace(/0+$/, '');
        if (s === '' && out.endsWith('.')) out = out.slice(0, -1);
        out += s;
        break;
      }
      case 't': {
        const am = d.getUTCHours() < 12;
        out += n === 1 ? (am ? 'A' : 'P') : am ? 'AM' : 'PM';
        break;
      }
      case 'K':
        out += 'Z';
        break;
      case 'z':
        out += n === 1 ? '+0' : n === 2 ? '+00' : '+00:00';
        break;
    }
  }
  return out;
}

// ------------------------------------------------------------------ CSV

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

type Row = Record<string, unknown>;

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
      const head = { asset_id_base: e.asset_id_base, asset_id_quote: e.asset_id_quote, tick: e.tick, kind: e.kind, rate: e.rate, time: e.time };
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
      s = us === undefined ? String(v) : o.timeFormat === DEFAULT_TIME_FORMAT ? (v as string) : formatTimeCustom(us, o.timeFormat, o.decMark);
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

/** CSV text of a payload. */
export function toCsv(kind: PayloadKind, value: unknown, o: CsvOptions): string {
  const { cols: all, rows } = csvRows(kind, value);
  const cols = all.filter((col) => !o.excludeCols.has(col.name.toLowerCase()));
  let out = '';
  if (o.includeHeader) out += cols.map((col) => cell(col.name, 'string', o, o.includeQuotes)).join(o.delimiter) + o.newline;
  for (const r of rows) out += cols.map((col) => cell(r[col.name], col.type, o, o.includeQuotes)).join(o.delimiter) + o.newline;
  return out;
}

// ------------------------------------------------------------------ XML

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const ROOTS: Record<PayloadKind, string> = {
  rate: 'ExchangeRate',
  rates: 'ExchangeRates',
  periods: 'ArrayOfTimeseriesPeriod',
  history: 'ArrayOfExchangeRatesTimeseriesItem',
  explain: 'RateExplanation',
};
const TOP_ITEMS: Partial<Record<PayloadKind, string>> = { periods: 'TimeseriesPeriod', history: 'ExchangeRatesTimeseriesItem' };
const ITEM_NAMES: Record<string, string> = {
  rates: 'ExchangeRatesRate',
  path: 'asset_id',
  legs: 'LegExplanation',
  used: 'MarketProvenance',
  excluded: 'MarketProvenance',
};

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  suppressBooleanAttributes: false,
  suppressEmptyNode: true,
  format: false,
  processEntities: true,
});

function xmlTree(v: unknown, field: string): unknown {
  if (v === null || v === undefined) return { '@_xsi:nil': 'true' };
  if (Array.isArray(v)) {
    const item = ITEM_NAMES[field] ?? 'item';
    return { [item]: v.map((x) => xmlTree(x, item)) };
  }
  if (typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) o[k] = xmlTree(x, k);
    return o;
  }
  return v;
}

/** XML text of a payload (see the module description for the shape). */
export function toXml(kind: PayloadKind, value: unknown): string {
  const root = ROOTS[kind];
  const item = TOP_ITEMS[kind];
  const body = item ? { [item]: (value as unknown[]).map((x) => xmlTree(x, item)) } : (xmlTree(value, root) as Record<string, unknown>);
  return builder.build({ '?xml': { '@_version': '1.0', '@_encoding': 'utf-8' }, [root]: { '@_xmlns:xsi': XSI, ...body } }) as string;
}

// ------------------------------------------------------------------ MessagePack

/** MessagePack bytes of a payload (plain maps, the JSON shapes; non-integer numbers as float64). */
export function toMsgpack(value: unknown): Buffer {
  const bytes = encode(value, { ignoreUndefined: true });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Serializes `value` in `format`: the body and its Content-Type. */
export function render(kind: PayloadKind, value: unknown, format: OutputFormat): { body: string | Buffer; type: string } {
  switch (format.kind) {
    case 'json':
      return { body: JSON.stringify(value), type: CONTENT_TYPES.json };
    case 'msgpack':
      return { body: toMsgpack(value), type: CONTENT_TYPES.msgpack };
    case 'xml':
      return { body: toXml(kind, value), type: CONTENT_TYPES.xml };
    case 'csv':
      return { body: toCsv(kind, value, format.csv), type: CONTENT_TYPES.csv };
  }
}
