/**
 * Batches of exactly `batchSize` rows from a reader whose own batches are another size (a Parquet
 * row group, a vendor file's read slices): a replay's transaction is one batch of its source, and
 * the `batch` column of every output row counts them, so every reader of an input must cut it
 * where the record-at-a-time reader does, after every `batchSize` records.
 *
 * @module
 */
import { type BatchColumns, CELLS, firstTextAt, type OtherRow, ROW_OTHER } from '../core/batch.js';
import type { BatchSource } from './batch.js';

/** Rows `from` to `to` (exclusive) of a batch. */
interface Span {
  b: BatchColumns;
  from: number;
  to: number;
}

/** One batch of the rows of `spans`, in order: columns copied, dictionaries, texts, other rows and raw bytes carried over. */
export function joinRows(spans: readonly Span[]): BatchColumns {
  let n = 0;
  let bytes = 0;
  let withInput = false;
  for (const { b, from, to } of spans) {
    n += to - from;
    if (b.input !== undefined) withInput = true;
    for (let i = from; i < to; i++) if (b.rawStart[i] >= 0) bytes += b.rawEnd[i] - b.rawStart[i];
  }
  const out: BatchColumns = {
    length: n,
    kind: new Uint8Array(n),
    line: new Float64Array(n),
    time: new Float64Array(n),
    symbol: new Int32Array(n),
    symbols: [],
    side: new Uint8Array(n),
    v: new Float64Array(CELLS * n),
    textCells: new Int32Array(0),
    texts: [],
    otherIndex: new Int32Array(n),
    others: [],
    raw: new Uint8Array(bytes),
    rawStart: new Int32Array(n),
    rawEnd: new Int32Array(n),
  };
  if (withInput) out.input = new Uint32Array(n);
  const symbolIds = new Map<string, number>();
  const textCells: number[] = [];
  const others: OtherRow[] = out.others;
  let o = 0;
  let at = 0;
  for (const { b, from, to } of spans) {
    const k = to - from;
    out.kind.set(b.kind.subarray(from, to), o);
    out.line.set(b.line.subarray(from, to), o);
    out.time.set(b.time.subarray(from, to), o);
    out.side.set(b.side.subarray(from, to), o);
    out.v.set(b.v.subarray(CELLS * from, CELLS * to), CELLS * o);
    if (out.input !== undefined && b.input !== undefined) out.input.set(b.input.subarray(from, to), o);
    // Symbols through this batch's dictionary; other rows and raw bytes row by row.
    const local = new Int32Array(b.symbols.length).fill(-1);
    for (let i = from; i < to; i++) {
      const r = o + i - from;
      const s = b.symbol[i];
      if (s >= 0) {
        let m = local[s];
        if (m < 0) {
          const id = b.symbols[s];
          m = symbolIds.get(id) ?? -1;
          if (m < 0) {
            m = out.symbols.length;
            out.symbols.push(id);
            symbolIds.set(id, m);
          }
          local[s] = m;
        }
        out.symbol[r] = m;
      } else out.symbol[r] = s;
      out.otherIndex[r] = 0;
      if (b.kind[i] === ROW_OTHER) {
        out.otherIndex[r] = others.length;
        others.push(b.others[b.otherIndex[i]]);
      }
      const rs = b.rawStart[i];
      if (rs >= 0) {
        const len = b.rawEnd[i] - rs;
        out.raw.set(b.raw.subarray(rs, rs + len), at);
        out.rawStart[r] = at;
        out.rawEnd[r] = at + len;
        at += len;
      } else {
        // A reader's own code for the raw text (its rawOf reads it): kept as it is.
        out.rawStart[r] = rs;
        out.rawEnd[r] = b.rawEnd[i];
      }
    }
    const shift = CELLS * (o - from);
    for (let t = firstTextAt(b, CELLS * from); t < b.textCells.length && b.textCells[t] < CELLS * to; t++) {
      textCells.push(b.textCells[t] + shift);
      out.texts.push(b.texts[t]);
    }
    o += k;
  }
  out.textCells = Int32Array.from(textCells);
  return out;
}

/** `src` read in batches of exactly `batchSize` rows (the last one shorter), whatever size its own are. */
export function rebatched(src: BatchSource, batchSize: number): BatchSource {
  const size = Math.max(1, Math.floor(batchSize));
  return {
    format: src.format,
    path: src.path,
    totalBytes: src.totalBytes,
    bytesRead: () => src.bytesRead(),
    ...(src.rawOf !== undefined && { rawOf: src.rawOf.bind(src) }),
    async *batches() {
      let spans: Span[] = [];
      let have = 0;
      for await (const b of src.batches()) {
        let from = 0;
        while (from < b.length) {
          const to = Math.min(b.length, from + size - have);
          // A whole batch of the right size passes as it is.
          if (have === 0 && from === 0 && to === b.length && to === size) {
            yield b;
            from = to;
            continue;
          }
          spans.push({ b, from, to });
          have += to - from;
          from = to;
          if (have === size) {
            yield joinRows(spans);
            spans = [];
            have = 0;
          }
        }
      }
      if (have > 0) yield joinRows(spans);
    },
    close: () => src.close(),
  };
}
