/**
 * The reference of `xrate convert`'s bytes: the event log as the first converter wrote it, every
 * row group's values held in plain arrays and handed to hyparquet-writer as they are, its bounds
 * kept as it keeps them. src/io/parquetWrite.ts buffers rows in typed columns and keeps less
 * between row groups; the property test holds it to this writer's bytes.
 */
import { writeFileSync } from 'node:fs';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { parseEvent } from '../../src/core/events.js';
import { isReject, type QuoteEvent, type TradeEvent, type XrateEvent } from '../../src/core/types.js';
import { mergeSources, recordTime } from '../../src/io/merge.js';
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
} from '../../src/io/parquetSchema.js';
import { type EventSource, openSource, type SourceRecord } from '../../src/io/source.js';

const COL = Object.fromEntries(EVENT_COLUMNS.map((c, k) => [c.name, k])) as Record<string, number>;

/** The first converter's writer, whole in memory. */
class ReferenceWriter {
  readonly out = new ByteWriter();
  private readonly writer: ParquetWriter;
  private cols: unknown[][] = [];
  private n = 0;
  private ascending = true;
  private lastLine = 0;

  constructor(
    inputs: readonly string[],
    private readonly rowGroupRows: number,
  ) {
    this.writer = new ParquetWriter({
      writer: this.out,
      schema: [{ name: 'root', num_children: EVENT_COLUMNS.length }, ...EVENT_COLUMNS.map(({ write: _, ...e }) => e)] as never,
      statistics: true,
      kvMetadata: [
        { key: PARQUET_KIND_KEY, value: PARQUET_EVENTS_KIND },
        { key: PARQUET_INPUTS_KEY, value: JSON.stringify(inputs) },
      ],
      createdBy: 'xrate',
    });
    this.reset();
  }

  private reset(): void {
    this.cols = EVENT_COLUMNS.map(() => []);
    this.n = 0;
  }

  private row(line: number, input: number): number {
    if (line <= this.lastLine) this.ascending = false;
    this.lastLine = line;
    const i = this.n++;
    for (const c of this.cols) c.push(null);
    this.cols[COL.line][i] = BigInt(line);
    this.cols[COL.input][i] = input;
    return i;
  }

  add(rec: SourceRecord, input: number): void {
    const c = this.cols;
    if (rec.event === undefined && (rec.error !== undefined || rec.record === undefined)) {
      const i = this.row(rec.line, input);
      c[COL.reject_reason][i] = rec.reason ?? 'bad_json';
      c[COL.reject_message][i] = rec.error ?? 'unreadable record';
      c[COL.raw_form][i] = RAW_STORED;
      c[COL.raw][i] = rec.raw;
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
      c[COL.other][i] = rec.record !== undefined ? { record: rec.record } : { event: rec.event, venue: rec.venue };
      const type = rec.record !== undefined ? rec.record.type : rec.event?.type;
      if (typeof type === 'string') c[COL.type][i] = type;
      const t = recordTime(rec);
      if (t !== undefined && Number.isSafeInteger(t)) c[COL.time][i] = BigInt(t);
      if (parsed !== undefined && isReject(parsed)) {
        c[COL.reject_reason][i] = parsed.reason;
        c[COL.reject_message][i] = parsed.message;
      }
      if (rec.record !== undefined && rec.raw === JSON.stringify(rec.record)) c[COL.raw_form][i] = RAW_RECORD;
      else {
        c[COL.raw_form][i] = RAW_STORED;
        c[COL.raw][i] = rec.raw;
      }
    }
    this.flushIfFull();
  }

  private columnar(rec: SourceRecord, e: QuoteEvent | TradeEvent, input: number): void {
    const c = this.cols;
    const i = this.row(rec.line, input);
    c[COL.type][i] = e.type;
    c[COL.time][i] = BigInt(e.time);
    c[COL.symbol_id][i] = e.symbolId;
    let texts: Record<string, string> | undefined;
    const dec = (name: string, d: { value: number; text: string }): void => {
      c[COL[name]][i] = d.value;
      if (d.text !== String(d.value)) {
        texts ??= {};
        texts[name] = d.text;
      }
    };
    if (e.type === 'quote') {
      dec('bid_price', e.bidPrice);
      dec('bid_size', e.bidSize);
      dec('ask_price', e.askPrice);
      dec('ask_size', e.askSize);
    } else {
      dec('price', e.price);
      dec('size', e.size);
      if (e.takerSide !== undefined) c[COL.taker_side][i] = e.takerSide;
    }
    if (texts !== undefined) c[COL.texts][i] = texts;
    if (rec.raw === canonicalRaw(e, false)) c[COL.raw_form][i] = RAW_NUMBERS;
    else if (rec.raw === canonicalRaw(e, true)) c[COL.raw_form][i] = RAW_STRINGS;
    else {
      c[COL.raw_form][i] = RAW_STORED;
      c[COL.raw][i] = rec.raw;
    }
  }

  private flushIfFull(): void {
    if (this.n >= this.rowGroupRows) this.flush();
  }

  private flush(): void {
    if (this.n === 0) return;
    void this.writer.write({
      columnData: EVENT_COLUMNS.map((col, k) => ({ name: col.name, data: this.cols[k] as never, ...col.write })),
      rowGroupSize: this.n,
    });
    this.reset();
  }

  finish(): Uint8Array {
    this.flush();
    this.writer.kvMetadata!.push({ key: PARQUET_LINES_KEY, value: this.ascending ? 'ascending' : 'mixed' });
    void this.writer.finish();
    return this.out.getBytes();
  }
}

/**
 * Writes `paths` to `out` as the first converter did (`merge`: by event time, as
 * `convertToParquet` merges them).
 */
export async function writeReferenceParquet(paths: readonly string[], out: string, rowGroupRows: number, merge = false): Promise<void> {
  const w = new ReferenceWriter(paths, rowGroupRows);
  if (merge) {
    const sources: EventSource[] = paths.map((p) => openSource(p, { batchSize: 64, lean: true }));
    for await (const { records, inputs } of mergeSources(sources).batches())
      for (let k = 0; k < records.length; k++) w.add(records[k], inputs[k]);
  } else {
    for (let i = 0; i < paths.length; i++) {
      const src = openSource(paths[i]);
      try {
        for await (const records of src.batches()) for (const r of records) w.add(r, i);
      } finally {
        src.close();
      }
    }
  }
  writeFileSync(out, w.finish());
}
