/**
 * Reading a Parquet event log (written by `xrate convert`, columns in parquetSchema.ts) as
 * columnar batches ({@link openParquetBatches}, a {@link BatchSource}: each row group's rows in
 * batches of at most `batchSize`) or record by record ({@link openParquetSource}, the
 * {@link EventSource} openSource gives for a file that starts with `PAR1`).
 *
 * Pure JavaScript, synchronous file reads, no native code: usable in a worker thread. A row group's
 * column chunks are read at once and decoded straight into typed arrays (parquetFlat.ts), and
 * its batches are made from those columns, without an object per row; a row group whose pages the
 * flat decoder does not read (another codec or encoding) goes through hyparquet's general decoder.
 * Memory is bounded by a row group ({@link ROW_GROUP_ROWS} rows when xrate wrote the file).
 *
 * Raw texts: a row whose raw text is stored has it in the batch's `raw` bytes; a quote or trade
 * row whose raw text is a canonical rendering has `rawStart = -1` and its `raw_form` in `rawEnd`,
 * and {@link parquetRawOf} renders it when asked (a reject needs it; nothing else does).
 *
 * @module
 */
import { closeSync, openSync, statSync } from 'node:fs';
import { type AsyncBuffer, type FileMetaData, parquetRead } from 'hyparquet';
import {
  BatchBuilder,
  type BatchColumns,
  type BufferPool,
  batchArrays,
  CELLS,
  eventAt,
  type OtherRow,
  ROW_OTHER,
  ROW_QUOTE,
  ROW_TRADE,
  SIDE_CODES,
} from '../core/batch.js';
import { XrateError } from '../core/errors.js';
import type { QuoteEvent, TakerSide, TradeEvent } from '../core/types.js';
import { type BatchSource, rawOf } from './batch.js';
import { type FlatColumn, UnsupportedParquet } from './parquetColumns.js';
import { BatchSymbols, type FlatGroup, readFlatGroup, readTimesGroup, timesBatch } from './parquetFlat.js';
import { type Footer, readAt, readMetadata } from './parquetFooter.js';
import { type RowGroupSlice, sliceOf } from './parquetPlan.js';
import {
  canonicalRaw,
  EVENT_COLUMNS,
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
  /**
   * Skip rows whose line is below this (a resumed replay, a partition). Default 1. The row groups
   * whose lines all come before it (the `line` column's statistics say so) are not read.
   */
  startLine?: number;
  /**
   * Only the `index`-th of `count` runs of row groups, as many groups in each as can be (a scan of
   * a file in parts at once: the parts together read every row group once, in order). Default: all.
   */
  slice?: RowGroupSlice;
  /**
   * How row groups are decoded: `flat` (the default) straight into typed arrays where the file's
   * pages allow (parquetColumns.ts), else by hyparquet; `hyparquet` always by hyparquet (the
   * reference the tests hold the flat decoder to); `flat-only` flat, and an error naming why where
   * a row group cannot be (what tests use to know the flat path read a file).
   */
  decoder?: 'flat' | 'hyparquet' | 'flat-only';
  /**
   * Rows per batch at most: a row group decoded flat is cut into batches of this many rows (its
   * last one shorter). Default: one batch per row group.
   */
  batchSize?: number;
  /**
   * Where a batch decoded flat takes the buffer of its columns (core/batch.ts): a pool fed with
   * the buffers of the batches its reader is done with. Default: a new buffer each.
   */
  pool?: BufferPool;
  /**
   * Quote and trade rows read for their line, time, symbol and kind alone (parquetFlat.ts
   * `timesBatch`: their values zero, no raw text), what a pre-scan needs: a row group decoded
   * flat whose rows are all quotes and trades is read so; any other, whole. Default false.
   */
  timesOnly?: boolean;
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
    const o = other[i];
    const reason = rejectReason[i];
    const ty = type[i];
    // An other row keeps its raw text in its record; a quote's or trade's stored one is in the bytes.
    if (o === null && reason === null && form === RAW_STORED && rawText !== null) {
      const bytes = encoder.encode(rawText);
      rawParts.push(bytes);
      rs = rawBytes;
      rawBytes += bytes.length;
      re = rawBytes;
    }
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

/** A JSON cell: its text parsed. */
const json = <T>(c: FlatColumn, i: number): T | null => (c.codes![i] < 0 ? null : (JSON.parse(c.texts![c.codes![i]]) as T));
/** A text cell. */
const textAt = (c: FlatColumn, i: number): string | null => (c.codes![i] < 0 ? null : c.texts![c.codes![i]]);

/**
 * The batch of rows `[from, to)` of a row group read by {@link readFlatGroup} (rows with a line
 * below `startLine` left out): the batch {@link groupBatch} gives for them, made without an object
 * per row.
 */
function flatBatch(g: FlatGroup, from: number, to: number, startLine: number, pool?: BufferPool): BatchColumns {
  const line = g.line.num!;
  const time = g.time.num!;
  const rawForm = g.raw_form.num!;
  const type = g.type;
  const symbol = g.symbol_id;
  const side = g.taker_side;
  const texts = g.texts;
  const other = g.other;
  const reason = g.reject_reason;
  const raw = g.raw;
  const q = QUOTE_DEC_COLUMNS.map((n) => g[n].num!);
  const t = TRADE_DEC_COLUMNS.map((n) => g[n].num!);
  // Per text of the chunk's dictionaries: a quote?, a side's code, a symbol's index in the batch (on first use).
  const isQuote = (type.texts ?? []).map((s) => s === 'quote');
  const sideCode = (side.texts ?? []).map((s) => Math.max(0, SIDE_CODES.indexOf(s as TakerSide)));
  const symbols = new BatchSymbols(symbol.texts ?? []);
  const n = to - from;
  // The columns as views of one buffer (batchArrays). A row leaves some cells as a fresh buffer
  // has them (zero): the time of another row, the values a quote or trade has not, the side of a
  // quote, the other-row index of a quote or trade. A pooled buffer holds an earlier batch's:
  // those are zeroed.
  const {
    line: lineOut,
    time: timeOut,
    v,
    symbol: symbolOut,
    otherIndex,
    rawStart,
    rawEnd,
    kind,
    side: sideOut,
  } = batchArrays(n, 0, 0, pool);
  if (pool) {
    v.fill(0);
    otherIndex.fill(0);
    sideOut.fill(0);
    timeOut.fill(0);
  }
  const textCells: number[] = [];
  const textList: string[] = [];
  const others: OtherRow[] = [];
  const rawParts: Uint8Array[] = [];
  let rawBytes = 0;
  const sparse = other.texts!.length > 0 || reason.texts!.length > 0 || raw.texts!.length > 0 || texts.texts!.length > 0;
  let r = 0;
  for (let i = from; i < to; i++) {
    const ln = line[i];
    if (ln < startLine) continue;
    const form = rawForm[i];
    let rs = -1;
    let re = form;
    lineOut[r] = ln;
    if (sparse) {
      const rawText = textAt(raw, i);
      const o = json<Record<string, unknown>>(other, i);
      const why = textAt(reason, i);
      if (o === null && why === null && form === RAW_STORED && rawText !== null) {
        const bytes = encoder.encode(rawText);
        rawParts.push(bytes);
        rs = rawBytes;
        rawBytes += bytes.length;
        re = rawBytes;
      }
      if (o !== null || why !== null) {
        let row: Record<string, unknown>;
        if (o !== null) {
          row = o;
          row.raw = form === RAW_RECORD ? JSON.stringify(row.record) : rawText;
        } else {
          row = { raw: rawText ?? '', error: textAt(g.reject_message, i) ?? '' };
          if (why !== 'bad_json') row.reason = why;
        }
        kind[r] = ROW_OTHER;
        symbolOut[r] = -1;
        otherIndex[r] = others.length;
        others.push(row);
        rawStart[r] = -1;
        rawEnd[r] = -1;
        r++;
        continue;
      }
    }
    rawStart[r] = rs;
    rawEnd[r] = re;
    timeOut[r] = time[i];
    symbolOut[r] = symbols.of(symbol.codes![i]);
    const c = CELLS * r;
    const tc = type.codes![i];
    const ex = sparse ? json<Record<string, string>>(texts, i) : null;
    if (tc >= 0 && isQuote[tc]) {
      kind[r] = ROW_QUOTE;
      v[c] = q[0][i];
      v[c + 1] = q[1][i];
      v[c + 2] = q[2][i];
      v[c + 3] = q[3][i];
      if (ex !== null)
        for (const { name, c: k } of QUOTE_CELLS) if (ex[name] !== undefined) listText(textCells, textList, v, c + k, ex[name]);
    } else {
      kind[r] = ROW_TRADE;
      const sd = side.codes![i];
      sideOut[r] = sd < 0 ? 0 : sideCode[sd];
      v[c] = t[0][i];
      v[c + 1] = t[1][i];
      if (ex !== null)
        for (const { name, c: k } of TRADE_CELLS) if (ex[name] !== undefined) listText(textCells, textList, v, c + k, ex[name]);
    }
    r++;
  }
  const rawAll = new Uint8Array(rawBytes);
  let at = 0;
  for (const p of rawParts) {
    rawAll.set(p, at);
    at += p.length;
  }
  const cut = <T extends Uint8Array | Int32Array | Float64Array>(a: T, k = 1): T => (r === n ? a : (a.subarray(0, r * k) as T));
  return {
    length: r,
    kind: cut(kind),
    line: cut(lineOut),
    time: cut(timeOut),
    symbol: cut(symbolOut),
    symbols: symbols.list,
    side: cut(sideOut),
    v: cut(v, CELLS),
    textCells: Int32Array.from(textCells),
    texts: textList,
    otherIndex: cut(otherIndex),
    others,
    raw: rawAll,
    rawStart: cut(rawStart),
    rawEnd: cut(rawEnd),
  };
}

/** Lists `text` as cell `cell`'s exact text when it is not `String(v[cell])` (BatchBuilder.text). */
function listText(cells: number[], texts: string[], v: Float64Array, cell: number, text: string): void {
  if (text !== String(v[cell])) {
    cells.push(cell);
    texts.push(text);
  }
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
  let footer: Footer;
  try {
    size = statSync(path).size;
    fd = openSync(path, 'r');
  } catch (e) {
    throw new XrateError('input', `cannot open event log "${path}": ${(e as Error).message}`);
  }
  try {
    footer = readMetadata(fd, size, path, false);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  const startLine = opts.startLine ?? 1;
  const flat = opts.decoder !== 'hyparquet';
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? Number.POSITIVE_INFINITY));
  if (startLine > 1 && footer.kv.get(PARQUET_LINES_KEY) !== 'ascending') {
    closeSync(fd);
    throw new XrateError(
      'usage',
      `"${path}" was converted from several inputs (or merged): its lines do not ascend, so it cannot be read from line ${startLine} (a resumed or partitioned replay); replay it whole`,
    );
  }
  // The footer whole is parsed only for hyparquet's reading (a row group that cannot be read flat,
  // or every one with `decoder: 'hyparquet'`); a flat reading keeps the row groups' plans.
  const { plans } = footer;
  let full: FileMetaData | undefined;
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
      // The columns of the row group before, whose arrays the next one is decoded into.
      let last: FlatGroup = {};
      const [first, end] = sliceOf(plans.groups.length, opts.slice);
      for (let k = 0; k < plans.groups.length; k++) {
        const plan = plans.groups[k];
        if (closed || fd === undefined) return;
        const rows = plan.rows;
        // A row group out of the slice, or whose lines all come before `startLine`, is not read.
        if (k < first || k >= end || (plan.lastLine !== undefined && plan.lastLine < startLine)) {
          start += rows;
          done += plan.compressed;
          continue;
        }
        let g: FlatGroup | undefined;
        let batchOf = flatBatch;
        if (flat) {
          try {
            const lean = opts.timesOnly ? readTimesGroup(fd, plans, plan, last) : undefined;
            if (lean !== undefined) batchOf = timesBatch;
            g = lean ?? readFlatGroup(fd, plans, plan, last);
            last = g;
          } catch (e) {
            if (!(e instanceof UnsupportedParquet) || opts.decoder === 'flat-only')
              throw new XrateError('input', `cannot read "${path}": ${(e as Error).message}`);
          }
        }
        const at = start;
        start += rows;
        if (g === undefined) {
          full ??= readMetadata(fd, size, path, true);
          const b = groupBatch(await readGroup(fd, size, full, at, rows), rows, startLine);
          done += plan.compressed;
          if (b.length > 0) yield b;
          continue;
        }
        // Batches of `batchSize` rows cut from the decoded columns (a replay's, when the row group
        // is a multiple of it, pass the rebatching untouched).
        for (let from = 0; from < rows; from += batchSize) {
          const to = Math.min(rows, from + batchSize);
          if (to === rows) done += plan.compressed;
          const b = batchOf(g, from, to, startLine, opts.pool);
          if (b.length > 0) yield b;
          if (closed) return;
        }
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
