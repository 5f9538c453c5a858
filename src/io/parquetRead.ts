/**
 * Reading a Parquet event log (written by `xrate convert`, columns in parquetSchema.ts) as
 * columnar batches ({@link openParquetBatches}, a {@link BatchSource}: one batch per row group) or
 * record by record ({@link openParquetSource}, the {@link EventSource} openSource gives for a file
 * that starts with `PAR1`).
 *
 * Pure JavaScript (hyparquet), synchronous file reads, no native code: usable in a worker thread.
 * Memory is bounded by a row group ({@link ROW_GROUP_ROWS} rows).
 *
 * Raw texts: a row whose raw text is stored has it in the batch's `raw` bytes; a quote or trade
 * row whose raw text is a canonical rendering has `rawStart = -1` and its `raw_form` in `rawEnd`,
 * and {@link parquetRawOf} renders it when asked (a reject needs it; nothing else does).
 *
 * @module
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { type AsyncBuffer, type FileMetaData, parquetMetadata, parquetRead } from 'hyparquet';
import { BatchBuilder, type BatchColumns, CELLS, eventAt, ROW_OTHER, SIDE_CODES } from '../core/batch.js';
import { XrateError } from '../core/errors.js';
import type { QuoteEvent, TakerSide, TradeEvent } from '../core/types.js';
import { type BatchSource, rawOf } from './batch.js';
import {
  canonicalRaw,
  EVENT_COLUMNS,
  PARQUET_EVENTS_KIND,
  PARQUET_KIND_KEY,
  PARQUET_LINES_KEY,
  QUOTE_DEC_COLUMNS,
  RAW_RECORD,
  RAW_STORED,
  RAW_STRINGS,
  TRADE_DEC_COLUMNS,
} from './parquetSchema.js';
import type { EventSource, SourceRecord } from './source.js';

/** Options of {@link openParquetBatches}. */
export interface ParquetReadOptions {
  /** Skip rows whose line is below this (a resumed replay). Default 1. */
  startLine?: number;
}

/** Reads `length` bytes at `position` of an open file. */
function readAt(fd: number, position: number, length: number): Uint8Array {
  const buf = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/** The metadata of a Parquet event log; an XrateError (`input`) when it is not one. */
function readMetadata(fd: number, size: number, path: string): FileMetaData {
  const fail = (why: string): never => {
    throw new XrateError('input', `cannot read "${path}" as a Parquet event log: ${why}`);
  };
  if (size < 12) fail('the file is too short');
  const tail = readAt(fd, size - 8, 8);
  const len = new DataView(tail.buffer).getUint32(0, true);
  if (len + 8 > size) fail('its footer is damaged');
  let md: FileMetaData;
  try {
    md = parquetMetadata(readAt(fd, size - 8 - len, len + 8));
  } catch (e) {
    return fail((e as Error).message);
  }
  const kind = md.key_value_metadata?.find((kv) => kv.key === PARQUET_KIND_KEY)?.value;
  if (kind !== PARQUET_EVENTS_KIND) fail('it was not written by "xrate convert" (convert the data with it first)');
  return md;
}

/** Column values of one row group, by column name. */
type Group = Record<string, ArrayLike<unknown>>;

const COLUMN_NAMES = EVENT_COLUMNS.map((c) => c.name);

/** Reads row group `g` (rows `[start, start + rows)`) of an open file: every column's values. */
async function readGroup(fd: number, size: number, md: FileMetaData, start: number, rows: number): Promise<Group> {
  const file: AsyncBuffer = {
    byteLength: size,
    slice(from: number, to?: number) {
      const end = to ?? size;
      const b = readAt(fd, from, end - from);
      return b.buffer as ArrayBuffer;
    },
  };
  const parts: Record<string, { at: number; data: ArrayLike<unknown> }[]> = {};
  await parquetRead({
    file,
    metadata: md,
    columns: COLUMN_NAMES,
    rowStart: start,
    rowEnd: start + rows,
    parsers: { timestampFromMicroseconds: (us: bigint) => Number(us) },
    onChunk: (ch) => {
      const list = parts[ch.columnName] ?? [];
      parts[ch.columnName] = list;
      list.push({ at: ch.rowStart - start, data: ch.columnData as ArrayLike<unknown> });
    },
  });
  const group: Group = {};
  for (const name of COLUMN_NAMES) {
    const p = parts[name] ?? [];
    if (p.length === 1 && p[0].at === 0 && p[0].data.length === rows) {
      group[name] = p[0].data;
      continue;
    }
    const a: unknown[] = new Array(rows).fill(null);
    for (const { at, data } of p) for (let k = 0; k < data.length; k++) if (at + k >= 0 && at + k < rows) a[at + k] = data[k];
    group[name] = a;
  }
  return group;
}

const encoder = new TextEncoder();

/** The cells of a quote's and a trade's decimal columns. */
const QUOTE_CELLS = QUOTE_DEC_COLUMNS.map((name, c) => ({ name, c }));
const TRADE_CELLS = TRADE_DEC_COLUMNS.map((name, c) => ({ name, c }));

/** The batch of one row group (rows with a line below `startLine` left out). */
function groupBatch(g: Group, rows: number, startLine: number): BatchColumns {
  const bb = new BatchBuilder();
  const line = g.line as ArrayLike<bigint>;
  const type = g.type as ArrayLike<string | null>;
  const time = g.time as ArrayLike<number | null>;
  const symbol = g.symbol_id as ArrayLike<string | null>;
  const side = g.taker_side as ArrayLike<string | null>;
  const texts = g.texts as ArrayLike<string | Record<string, string> | null>;
  const other = g.other as ArrayLike<string | Record<string, unknown> | null>;
  const rejectReason = g.reject_reason as ArrayLike<string | null>;
  const rejectMessage = g.reject_message as ArrayLike<string | null>;
  const rawForm = g.raw_form as ArrayLike<number>;
  const raw = g.raw as ArrayLike<string | null>;
  const q = QUOTE_DEC_COLUMNS.map((n) => g[n] as ArrayLike<number | null>);
  const t = TRADE_DEC_COLUMNS.map((n) => g[n] as ArrayLike<number | null>);
  const rawParts: Uint8Array[] = [];
  let rawBytes = 0;
  for (let i = 0; i < rows; i++) {
    const ln = Number(line[i]);
    if (ln < startLine) continue;
    const form = rawForm[i];
    let rs = -1;
    let re = form;
    const rawText = raw[i];
    if (form === RAW_STORED && rawText !== null) {
      const bytes = encoder.encode(rawText);
      rawParts.push(bytes);
      rs = rawBytes;
      rawBytes += bytes.length;
      re = rawBytes;
    }
    const o = other[i];
    const reason = rejectReason[i];
    const ty = type[i];
    if (o !== null) {
      const row = (typeof o === 'string' ? JSON.parse(o) : o) as Record<string, unknown>;
      row.raw = form === RAW_RECORD ? JSON.stringify(row.record) : rawText;
      bb.other(ln, row);
    } else if (reason !== null) {
      const row: Record<string, unknown> = { raw: rawText ?? '', error: rejectMessage[i] ?? '' };
      if (reason !== 'bad_json') row.reason = reason;
      bb.other(ln, row);
    } else {
      const sym = bb.symbolIndex(symbol[i] ?? '');
      const listed = texts[i];
      const ex = listed === null ? undefined : ((typeof listed === 'string' ? JSON.parse(listed) : listed) as Record<string, string>);
      if (ty === 'quote') {
        const r = bb.quote(ln, time[i] ?? 0, sym, q[0][i] ?? 0, q[1][i] ?? 0, q[2][i] ?? 0, q[3][i] ?? 0, rs, re);
        if (ex !== undefined) for (const { name, c } of QUOTE_CELLS) if (ex[name] !== undefined) bb.text(CELLS * r + c, ex[name]);
      } else {
        const sc = side[i] === null ? 0 : SIDE_CODES.indexOf(side[i] as TakerSide);
        const r = bb.trade(ln, time[i] ?? 0, sym, t[0][i] ?? 0, t[1][i] ?? 0, sc < 0 ? 0 : sc, rs, re);
        if (ex !== undefined) for (const { name, c } of TRADE_CELLS) if (ex[name] !== undefined) bb.text(CELLS * r + c, ex[name]);
      }
    }
  }
  const rawAll = new Uint8Array(rawBytes);
  let at = 0;
  for (const p of rawParts) {
    rawAll.set(p, at);
    at += p.length;
  }
  return bb.finish(rawAll);
}

/**
 * Row i's raw text in a batch of a Parquet event log: its stored bytes, its record's, or the
 * canonical line its `raw_form` (kept in `rawEnd` when `rawStart` is -1) names.
 */
export function parquetRawOf(b: BatchColumns, i: number): string {
  if (b.rawStart[i] >= 0 || b.kind[i] === ROW_OTHER) return rawOf(b, i);
  return canonicalRaw(eventAt(b, i) as QuoteEvent | TradeEvent, b.rawEnd[i] === RAW_STRINGS);
}

/**
 * Opens a Parquet event log as a {@link BatchSource}: one batch per row group, in file order.
 * Throws an XrateError (`input`) when the file cannot be opened or is not an xrate event log.
 *
 * @example
 * ```ts
 * const src = openParquetBatches('day.parquet');
 * for await (const b of src.batches()) for (let i = 0; i < b.length; i++) use(recordAt(b, i, src.rawOf));
 * ```
 */
export function openParquetBatches(path: string, opts: ParquetReadOptions = {}): BatchSource {
  let size: number;
  let fd: number | undefined;
  let md: FileMetaData;
  try {
    size = statSync(path).size;
    fd = openSync(path, 'r');
  } catch (e) {
    throw new XrateError('input', `cannot open event log "${path}": ${(e as Error).message}`);
  }
  try {
    md = readMetadata(fd, size, path);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  const startLine = opts.startLine ?? 1;
  if (startLine > 1 && md.key_value_metadata?.find((kv) => kv.key === PARQUET_LINES_KEY)?.value !== 'ascending') {
    closeSync(fd);
    throw new XrateError(
      'usage',
      `"${path}" was converted from several inputs (or merged): its lines do not ascend, so it cannot be read from line ${startLine} (a resumed or partitioned replay); replay it whole`,
    );
  }
  let done = 0;
  let closed = false;
  const close = (): void => {
    closed = true;
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  return {
    format: 'parquet',
    path,
    totalBytes: size,
    bytesRead: () => done,
    rawOf: parquetRawOf,
    async *batches() {
      let start = 0;
      for (const rg of md.row_groups) {
        if (closed || fd === undefined) return;
        const rows = Number(rg.num_rows);
        const g = await readGroup(fd, size, md, start, rows);
        start += rows;
        done += Number(rg.total_compressed_size ?? 0n);
        const b = groupBatch(g, rows, startLine);
        if (b.length > 0) yield b;
      }
      done = size;
    },
    close,
  };
}

/** A quote or trade row of a Parquet log as a record: its raw text made only when asked for. */
class ParquetRecord implements SourceRecord {
  constructor(
    readonly line: number,
    readonly event: QuoteEvent | TradeEvent,
    private readonly b: BatchColumns,
    private readonly i: number,
  ) {}

  get raw(): string {
    return parquetRawOf(this.b, this.i);
  }
}

/**
 * A Parquet event log read record by record (what openSource gives for it): each row as the record
 * the converted input gave, in batches of at most `batchSize`.
 */
export function openParquetSource(path: string, opts: { batchSize: number; startLine: number }): EventSource {
  const src = openParquetBatches(path, { startLine: opts.startLine });
  return {
    format: 'parquet',
    path,
    totalBytes: src.totalBytes,
    bytesRead: () => src.bytesRead(),
    async *batches() {
      let out: SourceRecord[] = [];
      for await (const b of src.batches()) {
        for (let i = 0; i < b.length; i++) {
          if (b.kind[i] === ROW_OTHER) out.push({ ...(b.others[b.otherIndex[i]] as Omit<SourceRecord, 'line'>), line: b.line[i] });
          else out.push(new ParquetRecord(b.line[i], eventAt(b, i)!, b, i));
          if (out.length >= opts.batchSize) {
            yield out;
            out = [];
          }
        }
      }
      if (out.length > 0) yield out;
    },
    close: () => src.close(),
  };
}
