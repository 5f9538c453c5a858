/**
 * Batches and records: the reader side of the columnar contract (src/core/batch.ts).
 *
 * - {@link recordsToBatch}: the batch of a list of records as the record-at-a-time readers give
 *   them; the reference every columnar reader is held equal to (a reader's batches, turned back
 *   with {@link recordAt}, give the records the old reader gave, field for field).
 * - {@link recordAt}: row i of a batch as a {@link SourceRecord} (its event built only for a
 *   quote or trade row).
 * - {@link rawOf}: row i's raw text (the text of a reject), decoded only when asked for.
 * - {@link BatchSource}: what a columnar reader opens (a file of one format, read in batches),
 *   and {@link batchesOf}, any record-at-a-time {@link EventSource} read as one.
 *
 * @module
 */
import { BatchBuilder, type BatchColumns, CELLS, eventAt, type OtherRow, ROW_OTHER, sideCode } from '../core/batch.js';
import type { QuoteEvent, TradeEvent } from '../core/types.js';
import type { EventSource, SourceFormat, SourceRecord } from './source.js';

const decoder = new TextDecoder();

/** Row i's raw text: its bytes decoded, or the raw its other-row record keeps. */
export function rawOf(b: BatchColumns, i: number): string {
  const s = b.rawStart[i];
  if (s >= 0) return decoder.decode(b.raw.subarray(s, b.rawEnd[i]));
  if (b.kind[i] === ROW_OTHER) {
    const raw = b.others[b.otherIndex[i]].raw;
    if (typeof raw === 'string') return raw;
  }
  throw new Error(`xrate: batch row ${i} (line ${b.line[i]}) has no raw text`);
}

/**
 * Row i as the record the record-at-a-time reader gives. An other row's raw text made on demand
 * (a CSV, SQLite or vendor record's) stays made on demand.
 */
export function recordAt(b: BatchColumns, i: number): SourceRecord {
  if (b.kind[i] === ROW_OTHER) {
    const o = b.others[b.otherIndex[i]];
    // A record kept whole with its line (recordsToBatch) is the record.
    if (o.line === b.line[i]) return o as unknown as SourceRecord;
    const rec = Object.defineProperties({}, Object.getOwnPropertyDescriptors(o)) as SourceRecord;
    rec.line = b.line[i];
    return rec;
  }
  return { line: b.line[i], raw: rawOf(b, i), event: eventAt(b, i) };
}

/** The batch of `records` (see the module description). */
export function recordsToBatch(records: readonly SourceRecord[]): BatchColumns {
  const bb = new BatchBuilder();
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (const r of records) {
    const e = r.event;
    if (e !== undefined && r.venue === undefined && (e.type === 'quote' || e.type === 'trade')) {
      const raw = enc.encode(r.raw);
      parts.push(raw);
      const start = bytes;
      bytes += raw.length;
      const sym = bb.symbolIndex(e.symbolId);
      if (e.type === 'quote') {
        const q = e as QuoteEvent;
        const i = bb.quote(r.line, q.time, sym, q.bidPrice.value, q.bidSize.value, q.askPrice.value, q.askSize.value, start, bytes);
        const c = CELLS * i;
        bb.text(c, q.bidPrice.text);
        bb.text(c + 1, q.bidSize.text);
        bb.text(c + 2, q.askPrice.text);
        bb.text(c + 3, q.askSize.text);
      } else {
        const t = e as TradeEvent;
        const i = bb.trade(r.line, t.time, sym, t.price.value, t.size.value, sideCode(t.takerSide), start, bytes);
        bb.text(CELLS * i, t.price.text);
        bb.text(CELLS * i + 1, t.size.text);
      }
    } else {
      // The record itself (its line too): a raw text made on demand (a CSV or SQLite record's
      // getter) stays so, and reading the row back costs no copy.
      bb.other(r.line, r as unknown as OtherRow);
    }
  }
  const raw = new Uint8Array(bytes);
  let o = 0;
  for (const p of parts) {
    raw.set(p, o);
    o += p.length;
  }
  return bb.finish(raw);
}

/**
 * An input read as columnar batches: what the driver's record sources consume. A reader that
 * parses in worker threads transfers each batch to the thread that reads this.
 */
export interface BatchSource {
  /** The format being read. */
  readonly format: SourceFormat | 'parquet';
  /** The path opened. */
  readonly path: string;
  /** The file's size in bytes (compressed size for gzip), for progress reports. */
  readonly totalBytes: number;
  /** Bytes of the file consumed so far (an estimate where the reader cannot tell). */
  bytesRead(): number;
  /** The rows in source order (lines ascending), in batches. */
  batches(): AsyncIterable<BatchColumns>;
  /** Row i's raw text, for a reader whose rows carry no raw bytes (`rawStart[i] = -1`); else {@link rawOf}. */
  rawOf?(b: BatchColumns, i: number): string;
  /**
   * Told by a merge (mergeBatches.ts) when it takes the first row of the batch last given: a
   * source reading ahead may wait for it before reading the next (readAhead.ts, for a file's first batch).
   */
  reached?(): void;
  /**
   * Lets go of all the source holds between two readings of it: a merge that has placed an input by
   * its first batch and will reach it later calls this, then ends that iteration of `batches()`; a
   * later call of `batches()` reads the input again from its start, in whole batches. False when
   * the source cannot let go now (a read-ahead already reading its next batch): the merge then
   * keeps it as it is.
   */
  park?(): boolean;
  /** A parked input the merge will reach soon, at event time `time`: a source reading ahead starts reading it again. */
  wake?(time: number): void;
  /** Stops reading and releases the file and any worker (safe to call more than once). */
  close(): void;
}

/** A record-at-a-time source read as batches: each of its batches turned into columns ({@link recordsToBatch}). */
export function batchesOf(src: EventSource): BatchSource {
  return {
    format: src.format,
    path: src.path,
    totalBytes: src.totalBytes,
    bytesRead: () => src.bytesRead(),
    async *batches() {
      for await (const records of src.batches()) yield recordsToBatch(records);
    },
    close: () => src.close(),
  };
}
