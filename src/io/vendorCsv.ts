/**
 * Readers of two market-data vendors' CSV files, turned into xrate `quote` and `trade` events:
 *
 * - **CoinAPI flat files** (`coinapi`): quotes `[id_site_coinapi;]time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx`
 *   and trades `time_exchange;time_coinapi;guid;price;base_amount;taker_side`, one file per symbol
 *   and day under `T-QUOTES|T-TRADES/D-YYYYMMDD/E-EXCHANGE/IDDI-n+SC-SYMBOL_ID+S-EXCHANGE_SYMBOL.csv[.gz]`.
 *   The symbol is the `SC-` part of the file name. Times are ISO 8601 (`2023-07-01T12:00:00.1234567Z`)
 *   or times of day (`12:00:00.1234567`) on the date of the `D-YYYYMMDD` folder; a 7th fractional
 *   digit (100 ns) is truncated to the µs, as every xrate time (docs/methodology.md section 1).
 * - **tardis.dev CSV datasets** (`tardis`): quotes `exchange,symbol,timestamp,local_timestamp,ask_amount,ask_price,bid_price,bid_amount`
 *   and trades `exchange,symbol,timestamp,local_timestamp,id,side,price,amount`, times in µs since
 *   the epoch, `side` `buy`, `sell` or `unknown`. The market is not in the file: a record carries
 *   its `venue` (exchange, exchange symbol), which the ingest maps to a symbol_id through the
 *   `symbol` events read before it (`exchange_id` matched case-insensitively, `symbol_id_exchange`
 *   = the file's symbol).
 *
 * The format is told by the header (see {@link sniffVendor}); columns are found by name (any
 * order, any case, extra columns ignored), the delimiter is `;` or `,` (the one that splits the
 * header into the known columns), rows end in LF or CRLF. Events are timed by the receive time
 * (`time_coinapi`, `local_timestamp`) unless `time: 'exchange'` (`time_exchange`, `timestamp`).
 *
 * A header without a required column stops the run (the file cannot be read). Every row that
 * cannot be read or whose value is wrong (an empty or malformed time, price or size, an unknown
 * side, a row with too many or too few fields, a line over the limit) becomes a reject with its
 * file, line, reason and raw text, as in the other formats; it never stops the run.
 *
 * @module
 */
import { parseEvent } from '../core/events.js';
import { formatTime } from '../core/time.js';
import { isReject, type XrateEvent } from '../core/types.js';
import { type CsvRow, CsvSplitter } from './csv.js';
import type { EventSource, ReaderOptions, SourceRecord } from './source.js';
import { textSource, withLastLine } from './textStream.js';
import { XrateError } from '../core/errors.js';

/** Which time of a vendor row an event takes: the receive time (default) or the exchange's. */
export type VendorTime = 'receive' | 'exchange';

/** A vendor file's kind, from its header. */
export interface VendorKind {
  format: 'coinapi' | 'tardis';
  data: 'quotes' | 'trades';
  /** The field separator. */
  delimiter: ';' | ',';
}

/** Required columns, and the xrate field each feeds (for reject messages). */
const COLUMNS = {
  coinapi: {
    quotes: ['time_exchange', 'time_coinapi', 'ask_px', 'ask_sx', 'bid_px', 'bid_sx'],
    trades: ['time_exchange', 'time_coinapi', 'price', 'base_amount'],
  },
  tardis: {
    quotes: ['exchange', 'symbol', 'timestamp', 'local_timestamp', 'ask_amount', 'ask_price', 'bid_price', 'bid_amount'],
    trades: ['exchange', 'symbol', 'timestamp', 'local_timestamp', 'price', 'amount'],
  },
} as const;

/** The vendor column behind an xrate field, by format and data type (for reject messages). */
const COLUMN_OF: Record<string, Record<string, string>> = {
  'coinapi/quotes': { bid_price: 'bid_px', bid_size: 'bid_sx', ask_price: 'ask_px', ask_size: 'ask_sx' },
  'coinapi/trades': { size: 'base_amount', price: 'price', taker_side: 'taker_side' },
  'tardis/quotes': { bid_price: 'bid_price', bid_size: 'bid_amount', ask_price: 'ask_price', ask_size: 'ask_amount' },
  'tardis/trades': { size: 'amount', price: 'price', taker_side: 'side' },
};

/** The header's column names: trimmed, lower case, a byte order mark and a CR dropped. */
function headerNames(line: string, delimiter: string): string[] {
  return line
    .replace(/^\uFEFF/, '')
    .replace(/\r$/, '')
    .split(delimiter)
    .map((s) =>
      s
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    );
}

/**
 * The vendor format of a CSV file from its header line, or undefined when it is not one (an
 * xrate CSV, or anything else). CoinAPI: a header naming `time_exchange` and `time_coinapi`, with
 * `ask_px` (quotes) or `base_amount` (trades); tardis: `exchange`, `symbol`, `timestamp` and
 * `local_timestamp`, with `ask_price` (quotes) or `amount` and `price` (trades).
 *
 * @example
 * ```ts
 * sniffVendor('time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx'); // { format: 'coinapi', data: 'quotes', delimiter: ';' }
 * sniffVendor('type,time,symbol_id');                                   // undefined
 * ```
 */
export function sniffVendor(header: string): VendorKind | undefined {
  for (const delimiter of [';', ','] as const) {
    const names = new Set(headerNames(header, delimiter));
    if (names.has('time_exchange') && names.has('time_coinapi')) {
      if (names.has('ask_px') || names.has('bid_px')) return vendorKind('coinapi', 'quotes', delimiter);
      if (names.has('base_amount') || names.has('taker_side') || names.has('guid')) return vendorKind('coinapi', 'trades', delimiter);
    }
    if (names.has('exchange') && names.has('symbol') && names.has('local_timestamp') && names.has('timestamp')) {
      if (names.has('ask_price') || names.has('bid_price')) return vendorKind('tardis', 'quotes', delimiter);
      if (names.has('amount') || names.has('side')) return vendorKind('tardis', 'trades', delimiter);
    }
  }
  return undefined;
}

/** The eight kinds, one object each: a merge of many thousand files holds one kind a file. */
const KINDS = new Map<string, VendorKind>();

/** The one (frozen) {@link VendorKind} of a format, data type and delimiter. */
function vendorKind(format: VendorKind['format'], data: VendorKind['data'], delimiter: VendorKind['delimiter']): VendorKind {
  const key = `${format}/${data}/${delimiter}`;
  let kind = KINDS.get(key);
  if (kind === undefined) {
    kind = Object.freeze({ format, data, delimiter });
    KINDS.set(key, kind);
  }
  return kind;
}

/** What a CoinAPI flat file's path says: the symbol (`SC-`) and the date (`D-YYYYMMDD`, as `YYYY-MM-DD`). */
export interface CoinapiPath {
  symbolId?: string;
  date?: string;
}

/**
 * The symbol id and date of a CoinAPI flat file from its path: the `SC-` part of the file name
 * (parts split on `+`) and the last `D-YYYYMMDD` folder.
 *
 * @example
 * ```ts
 * coinapiPath('T-QUOTES/D-20230701/E-BINANCE/IDDI-1+SC-BINANCE_SPOT_ETH_USDT+S-ETHUSDT.csv.gz');
 * // { symbolId: 'BINANCE_SPOT_ETH_USDT', date: '2023-07-01' }
 * ```
 */
export function coinapiPath(path: string): CoinapiPath {
  const parts = path.split(/[\\/]/);
  const name = (parts.at(-1) ?? '').replace(/(\.csv)?(\.gz)?$/i, '');
  const out: CoinapiPath = {};
  for (const p of name.split('+')) if (p.startsWith('SC-') && p.length > 3) out.symbolId = p.slice(3);
  for (let i = parts.length - 2; i >= 0; i--) {
    const m = /^D-(\d{4})(\d{2})(\d{2})$/.exec(parts[i]);
    if (m) {
      out.date = `${m[1]}-${m[2]}-${m[3]}`;
      break;
    }
  }
  return out;
}

/** A time of day without a date (`HH:mm:ss[.f...]`). */
const TIME_OF_DAY = /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
/** µs since the epoch, as tardis writes them. */
const MICROS = /^\d{1,16}$/;

/** A vendor row read well: its event, made on demand of its raw text (the row as in the file). */
class VendorRecord implements SourceRecord {
  constructor(
    readonly line: number,
    readonly event: XrateEvent,
    private readonly fields: string[],
    private readonly delimiter: string,
    readonly venue?: { exchange: string; symbol: string },
  ) {}

  get raw(): string {
    return this.fields.join(this.delimiter);
  }
}

/** Options of {@link openVendorCsv}. */
export interface VendorReaderOptions extends ReaderOptions {
  /** The time an event takes (default `receive`). */
  time?: VendorTime;
}

const LABEL = { coinapi: 'CoinAPI', tardis: 'tardis' } as const;

/**
 * The record-at-a-time reading of a vendor file's rows (see the module description): `take`
 * turns the rows of a {@link CsvSplitter} (the header first) into records, pushed onto `out`.
 * Shared by {@link openVendorCsv} and the columnar reader (vendorBatches.ts), which hands it the
 * rows its fast path declines.
 */
export interface VendorRows {
  /** Reads `rows` (the first one read is the header) into `out`; throws on a header that cannot be read. */
  take(rows: readonly CsvRow[], out: SourceRecord[]): void;
  /** The last line taken (for a read error's message). */
  readonly lastLine: number;
  /** The column index of every header name, once the header is read. */
  readonly columns: Record<string, number> | undefined;
  /** The time column events take (`time_coinapi`, `local_timestamp`, ...). */
  readonly timeColumn: string;
  /** The symbol id and date of a CoinAPI file's path (empty for tardis). */
  readonly where: CoinapiPath;
  /** What rejects' messages call the file (`CoinAPI quotes`). */
  readonly label: string;
}

/** The {@link VendorRows} of file `path` of kind `kind`. */
export function vendorRows(path: string, kind: VendorKind, ro: VendorReaderOptions): VendorRows {
  const { startLine } = ro;
  const label = `${LABEL[kind.format]} ${kind.data}`;
  const useExchange = ro.time === 'exchange';
  const hints = COLUMN_OF[`${kind.format}/${kind.data}`];
  const where = kind.format === 'coinapi' ? coinapiPath(path) : {};
  const timeCol =
    kind.format === 'coinapi' ? (useExchange ? 'time_exchange' : 'time_coinapi') : useExchange ? 'timestamp' : 'local_timestamp';
  let col: Record<string, number> | undefined;
  let lastLine = 0;
  let batch: SourceRecord[] = [];
  const fail = (line: number, fields: string[], reason: SourceRecord['reason'], message: string): void => {
    batch.push({ line, raw: fields.join(kind.delimiter), error: message, reason });
  };
  const row = (line: number, f: string[]): void => {
    const c = col!;
    const get = (name: string): string | undefined => {
      const k = c[name];
      return k === undefined ? undefined : f[k];
    };
    let record: Record<string, unknown>;
    let venue: { exchange: string; symbol: string } | undefined;
    const t = (get(timeCol) ?? '').trim();
    if (kind.format === 'coinapi') {
      if (where.symbolId === undefined) {
        fail(
          line,
          f,
          'unknown_symbol',
          `${label}: the file name has no "SC-{symbol_id}" part (e.g. IDDI-1+SC-BINANCE_SPOT_ETH_USDT+S-ETHUSDT.csv.gz)`,
        );
        return;
      }
      let time = t;
      if (TIME_OF_DAY.test(t)) {
        if (where.date === undefined) {
          fail(
            line,
            f,
            'bad_time',
            `${label}: column "${timeCol}" ${JSON.stringify(t)} is a time of day and the path has no D-YYYYMMDD folder to give its date`,
          );
          return;
        }
        time = `${where.date}T${t}Z`;
      }
      record =
        kind.data === 'quotes'
          ? {
              type: 'quote',
              time,
              symbol_id: where.symbolId,
              bid_price: get('bid_px'),
              bid_size: get('bid_sx'),
              ask_price: get('ask_px'),
              ask_size: get('ask_sx'),
            }
          : {
              type: 'trade',
              time,
              symbol_id: where.symbolId,
              price: get('price'),
              size: get('base_amount'),
              taker_side: get('taker_side'),
            };
    } else {
      if (!MICROS.test(t) || !Number.isSafeInteger(Number(t))) {
        fail(
          line,
          f,
          t === '' ? 'missing_field' : 'bad_time',
          `${label}: column "${timeCol}" must be microseconds since 1970 (an integer), got ${JSON.stringify(t)}`,
        );
        return;
      }
      const exchange = (get('exchange') ?? '').trim();
      const symbol = (get('symbol') ?? '').trim();
      if (exchange === '' || symbol === '') {
        fail(line, f, 'missing_field', `${label}: column "${exchange === '' ? 'exchange' : 'symbol'}" is empty`);
        return;
      }
      venue = { exchange, symbol };
      const time = formatTime(Number(t));
      if (kind.data === 'quotes') {
        record = {
          type: 'quote',
          time,
          symbol_id: symbol,
          bid_price: get('bid_price'),
          bid_size: get('bid_amount'),
          ask_price: get('ask_price'),
          ask_size: get('ask_amount'),
        };
      } else {
        const side = (get('side') ?? '').trim().toLowerCase();
        if (side !== '' && side !== 'buy' && side !== 'sell' && side !== 'unknown') {
          fail(line, f, 'bad_field', `${label}: column "side" must be buy, sell or unknown, got ${JSON.stringify(get('side'))}`);
          return;
        }
        record = {
          type: 'trade',
          time,
          symbol_id: symbol,
          price: get('price'),
          size: get('amount'),
          taker_side: side === '' ? undefined : side.toUpperCase(),
        };
      }
    }
    const ev = parseEvent(record);
    if (isReject(ev)) {
      const column = ev.field === 'time' ? timeCol : ev.field === undefined ? undefined : hints[ev.field];
      fail(line, f, ev.reason, column === undefined ? `${label}: ${ev.message}` : `${label}: ${ev.message} (column "${column}")`);
      return;
    }
    batch.push(new VendorRecord(line, ev, f, kind.delimiter, venue));
  };
  return {
    take(rows, out) {
      batch = out;
      for (const r of rows) {
        lastLine = r.line;
        if (col === undefined) {
          if (r.fields === undefined)
            throw new XrateError('input', `${label} header of "${path}" cannot be read (line ${r.line}: ${r.error})`);
          col = readHeader(r.fields, path, kind, label);
          continue;
        }
        if (r.line < startLine) continue;
        if (r.fields === undefined) {
          out.push(
            r.reason
              ? { line: r.line, raw: r.text ?? '', error: r.error, reason: r.reason }
              : { line: r.line, raw: r.text ?? '', error: r.error },
          );
          continue;
        }
        row(r.line, r.fields);
      }
    },
    get lastLine() {
      return lastLine;
    },
    get columns() {
      return col;
    },
    timeColumn: timeCol,
    where,
    label,
  };
}

/**
 * Opens a CoinAPI flat file or a tardis CSV file of the kind `kind` (see the module
 * description). Called by `openSource`.
 */
export function openVendorCsv(path: string, kind: VendorKind, ro: VendorReaderOptions): EventSource {
  const { batchSize } = ro;
  return textSource(kind.format, path, ro, async function* (ts, isClosed) {
    const sp = new CsvSplitter(true, ro.maxLineBytes, kind.delimiter);
    const rows = vendorRows(path, kind, ro);
    const batch: SourceRecord[] = [];
    for await (const chunk of withLastLine(ts.chunks(), () => rows.lastLine)) {
      rows.take(sp.push(chunk), batch);
      while (batch.length >= batchSize) {
        yield batch.splice(0, batchSize);
        if (isClosed()) return;
      }
    }
    rows.take(sp.end(), batch);
    if (rows.columns === undefined) throw new XrateError('input', `${rows.label} file "${path}" has no header row`);
    while (batch.length > 0 && !isClosed()) yield batch.splice(0, batchSize);
  });
}

/** The column index of every name of the header; a required column missing stops the run. */
function readHeader(fields: string[], path: string, kind: VendorKind, label: string): Record<string, number> {
  const names = fields.map((f) => f.trim().toLowerCase());
  if (names.length > 0) names[0] = names[0].replace(/^\uFEFF/, '');
  const col: Record<string, number> = Object.create(null);
  names.forEach((n, i) => {
    if (n !== '' && col[n] === undefined) col[n] = i;
  });
  for (const need of COLUMNS[kind.format][kind.data]) {
    if (col[need] === undefined) {
      throw new XrateError('input', `${label} file "${path}" has no column "${need}" (header: ${fields.join(kind.delimiter)})`);
    }
  }
  return col;
}
