/**
 * Writing Parquet files: the event log of `xrate convert` ({@link ParquetEventWriter}, columns in
 * parquetSchema.ts) and the file sink every Parquet output shares ({@link ParquetFile}).
 *
 * Bounded memory: rows are buffered column by column and written as one row group every
 * {@link ROW_GROUP_ROWS} rows, then dropped; the file is written as it goes. What is kept until the
 * footer is the description of each row group, its string bounds as the footer's few bytes (never
 * a string cut out of the text read, which would keep that text alive).
 *
 * @module
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { RowGroup, Statistics } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { unconvertMinMax } from 'hyparquet-writer/src/unconvert.js';
import { parseEvent } from '../core/events.js';
import { isReject, type QuoteEvent, type TradeEvent, type XrateEvent } from '../core/types.js';
import { XrateError } from '../core/errors.js';
import { recordTime } from './merge.js';
import {
  canonicalRaw,
  EVENT_COLUMNS,
  PARQUET_EVENTS_KIND,
  PARQUET_INPUTS_KEY,
  PARQUET_KIND_KEY,
  PARQUET_LINES_KEY,
  RAW_NUMBERS,
  RAW_RECORD,
  RAW_STORED,
  RAW_STRINGS,
  type SchemaElementLike,
} from './parquetSchema.js';
import { EventRows, KIND_QUOTE, KIND_TRADE, type LazyColumn } from './parquetRows.js';
import type { SourceRecord } from './source.js';

/** Rows per row group: what a reader holds at once (a few MB). */
export const ROW_GROUP_ROWS = 65536;

/** A byte writer that appends what it holds to a file at each flush (after every row group). */
class FileByteWriter extends ByteWriter {
  private fd: number | undefined;

  constructor(readonly path: string) {
    super(1 << 20);
    try {
      this.fd = openSync(path, 'w');
    } catch (e) {
      throw new XrateError('input', `cannot write "${path}": ${(e as Error).message}`);
    }
  }

  flush(): void {
    if (this.fd === undefined || this.index === 0) return;
    writeSync(this.fd, new Uint8Array(this.buffer, 0, this.index));
    this.index = 0;
  }

  override finish(): void {
    this.flush();
    this.close();
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

const utf8 = new TextEncoder();

/**
 * Turns the string bounds of a row group's column (kept for the footer) into the bytes the footer
 * will hold: the UTF-8 of the bound, cut to hyparquet-writer's statistics length as it would cut it
 * when writing the footer, and marked inexact when cut, so the footer is the same bytes. A string
 * bound cut out of a longer string (a symbol or raw line read from a chunk of text) would keep that
 * whole text alive until the file is finished: a conversion's memory would grow with its length.
 */
function keepBoundsAsBytes(st: Statistics | undefined, column: SchemaElementLike): void {
  if (st === undefined || column.type !== 'BYTE_ARRAY') return;
  const { write: _, ...element } = column;
  for (const isMax of [false, true]) {
    const v = isMax ? st.max_value : st.min_value;
    if (v === undefined || v === null) continue;
    const full = v instanceof Uint8Array ? v : utf8.encode(String(v));
    const kept = unconvertMinMax(full, element as never, isMax);
    if (isMax) {
      st.max_value = kept;
      if (kept !== full) st.is_max_value_exact = false;
    } else {
      st.min_value = kept;
      if (kept !== full) st.is_min_value_exact = false;
    }
  }
}

/** A column's buffered values for the current row group. */
type ColumnValues = unknown[];

/**
 * A Parquet file written row group by row group: `columns` (schema leaves) and, per row group,
 * one array of values per column (null for an absent value).
 */
export class ParquetFile {
  private readonly out: FileByteWriter;
  private readonly writer: ParquetWriter;

  constructor(
    path: string,
    private readonly columns: readonly SchemaElementLike[],
    kvMetadata: { key: string; value: string }[],
  ) {
    this.out = new FileByteWriter(path);
    this.writer = new ParquetWriter({
      writer: this.out,
      schema: [{ name: 'root', num_children: columns.length }, ...columns.map(({ write: _, ...e }) => e)] as never,
      statistics: true,
      kvMetadata,
      createdBy: 'xrate',
    });
  }

  /**
   * Writes one row group: `data[c]` holds column c's values (or makes them when read: a
   * {@link LazyColumn}).
   */
  writeGroup(data: readonly (ColumnValues | ArrayLike<unknown> | LazyColumn)[]): void {
    const rows = data[0]?.length ?? 0;
    if (rows === 0) return;
    void this.writer.write({
      columnData: this.columns.map((c, k) => ({ name: c.name, data: data[k] as never, ...c.write })),
      rowGroupSize: rows,
    });
    const group = this.writer.row_groups[this.writer.row_groups.length - 1];
    group.columns.forEach((chunk, k) => {
      keepBoundsAsBytes(chunk.meta_data?.statistics, this.columns[k]);
    });
  }

  /** The row groups written so far, as the footer will describe them (kept until {@link finish}). */
  get rowGroups(): readonly RowGroup[] {
    return this.writer.row_groups;
  }

  /** Adds a key-value metadata entry (written with the footer). */
  setMetadata(key: string, value: string): void {
    const kv = this.writer.kvMetadata ?? [];
    kv.push({ key, value });
    this.writer.kvMetadata = kv;
  }

  /** Writes the footer and closes the file. */
  finish(): void {
    void this.writer.finish();
  }

  /** Closes the file without a footer (a failed run). */
  abort(): void {
    this.out.close();
  }
}

/**
 * Writes records in replay order as an event log (parquetSchema.ts).
 *
 * A record is stored as it will be read back: an unreadable record as its reject; a quote or trade
 * (read as an event, or as a field map that `parseEvent` makes one) as columns; anything else
 * (another event type, a record that is not a valid event, a vendor row that names its market by
 * exchange symbol) whole in `other`, to be parsed again by the replay, which so gives the same
 * event or reject. The rows of a row group are held in typed columns (parquetRows.ts).
 *
 * @example
 * ```ts
 * const w = new ParquetEventWriter('day.parquet', ['day.ndjson']);
 * for await (const batch of openSource('day.ndjson').batches()) for (const r of batch) w.add(r, 0);
 * w.finish();
 * ```
 */
export class ParquetEventWriter {
  private readonly file: ParquetFile;
  private readonly rows: EventRows;
  /** Whether every line so far is above the one before it (a single input read in order). */
  private ascending = true;
  private lastLine = 0;
  /** Rows written, by kind. */
  readonly counts = { rows: 0, columnar: 0, other: 0, rejects: 0 };

  /** @param rowGroupRows - rows per row group (default {@link ROW_GROUP_ROWS}) */
  constructor(path: string, inputs: readonly string[], rowGroupRows = ROW_GROUP_ROWS) {
    this.rows = new EventRows(rowGroupRows);
    this.file = new ParquetFile(path, EVENT_COLUMNS, [
      { key: PARQUET_KIND_KEY, value: PARQUET_EVENTS_KIND },
      { key: PARQUET_INPUTS_KEY, value: JSON.stringify(inputs) },
    ]);
  }

  private row(line: number, input: number): number {
    if (line <= this.lastLine) this.ascending = false;
    this.lastLine = line;
    return this.rows.add(line, input);
  }

  /** Adds one record of input `input`. */
  add(rec: SourceRecord, input: number): void {
    const r = this.rows;
    this.counts.rows++;
    if (rec.event === undefined && (rec.error !== undefined || rec.record === undefined)) {
      const i = this.row(rec.line, input);
      r.set('reject_reason', i, rec.reason ?? 'bad_json');
      r.set('reject_message', i, rec.error ?? 'unreadable record');
      r.rawForm[i] = RAW_STORED;
      r.set('raw', i, rec.raw);
      this.counts.rejects++;
      this.flushIfFull();
      return;
    }
    let event: XrateEvent | undefined = rec.event;
    let parsed: ReturnType<typeof parseEvent> | undefined;
    if (event === undefined) {
      parsed = parseEvent(rec.record!);
      if (!isReject(parsed)) event = parsed;
    }
    if (event !== undefined && rec.venue === undefined && (event.type === 'quote' || event.type === 'trade')) {
      this.columnar(rec, event, input);
    } else {
      const i = this.row(rec.line, input);
      const raw = rec.raw;
      // A JSON column: the writer serialises it.
      r.set('other', i, rec.record !== undefined ? { record: rec.record } : { event: rec.event, venue: rec.venue });
      const type = rec.record !== undefined ? rec.record.type : rec.event?.type;
      if (typeof type === 'string') r.set('type', i, type);
      const t = safeTime(rec);
      if (t !== undefined) r.setTime(i, t);
      if (parsed !== undefined && isReject(parsed)) {
        r.set('reject_reason', i, parsed.reason);
        r.set('reject_message', i, parsed.message);
        this.counts.rejects++;
      } else this.counts.other++;
      if (rec.record !== undefined && raw === JSON.stringify(rec.record)) r.rawForm[i] = RAW_RECORD;
      else {
        r.rawForm[i] = RAW_STORED;
        r.set('raw', i, raw);
      }
    }
    this.flushIfFull();
  }

  private columnar(rec: SourceRecord, e: QuoteEvent | TradeEvent, input: number): void {
    const r = this.rows;
    const i = this.row(rec.line, input);
    r.setTime(i, e.time);
    r.setSymbol(i, e.symbolId);
    let texts: Record<string, string> | undefined;
    const dec = (k: number, name: string, d: { value: number; text: string }): void => {
      r.dec[k][i] = d.value;
      if (d.text !== String(d.value)) {
        texts ??= {};
        texts[name] = d.text;
      }
    };
    if (e.type === 'quote') {
      r.kind[i] = KIND_QUOTE;
      dec(0, 'bid_price', e.bidPrice);
      dec(1, 'bid_size', e.bidSize);
      dec(2, 'ask_price', e.askPrice);
      dec(3, 'ask_size', e.askSize);
    } else {
      r.kind[i] = KIND_TRADE;
      dec(4, 'price', e.price);
      dec(5, 'size', e.size);
      if (e.takerSide !== undefined) r.set('taker_side', i, e.takerSide);
    }
    if (texts !== undefined) r.set('texts', i, texts);
    const raw = rec.raw;
    if (raw === canonicalRaw(e, false)) r.rawForm[i] = RAW_NUMBERS;
    else if (raw === canonicalRaw(e, true)) r.rawForm[i] = RAW_STRINGS;
    else {
      r.rawForm[i] = RAW_STORED;
      r.set('raw', i, raw);
    }
    this.counts.columnar++;
  }

  private flushIfFull(): void {
    if (this.rows.n >= this.rows.capacity) this.flush();
  }

  private flush(): void {
    if (this.rows.n === 0) return;
    this.file.writeGroup(this.rows.columns());
    this.rows.clear();
  }

  /** Writes what is buffered and the footer, and closes the file. */
  finish(): void {
    this.flush();
    this.file.setMetadata(PARQUET_LINES_KEY, this.ascending ? 'ascending' : 'mixed');
    this.file.finish();
  }

  /** Closes the file unfinished (a failed conversion). */
  abort(): void {
    this.file.abort();
  }
}

/** A record's time for the `time` column of an `other` row, when it has a valid one. */
function safeTime(rec: SourceRecord): number | undefined {
  const t = recordTime(rec);
  return t !== undefined && Number.isSafeInteger(t) ? t : undefined;
}
