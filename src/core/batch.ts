/**
 * Columnar event batches: the contract between the readers and the engine
 * (docs/architecture.md, "Columnar batches").
 *
 * A reader (in a worker thread or not) turns bytes into {@link BatchColumns}: typed-array
 * columns for the quotes and trades that make up nearly every log, and a short list of whole
 * records for everything else (symbol, exchange, metric and position events, records the fast
 * path declined, lines that could not be read). Its buffers are transferred between threads, not
 * copied ({@link batchTransferList}); a built batch's columns are views of one buffer, which a
 * {@link BufferPool} can give again once the batch is done with. The engine applies a quote or
 * trade row from the columns, without an object per event; {@link eventAt} builds the object
 * only where one is needed (a reorder window, a reference test).
 *
 * Exactness (docs/methodology.md section 7): a decimal cell is its float64 value, and its exact
 * text is `String(value)` unless the batch lists another text for it ({@link decText}). A reader
 * lists the text exactly when the text it read is not `String(value)` (`"0.1000"`, a decimal
 * with more than 17 significant digits), so `eventAt(b, i)` is deep-equal to the event the
 * record-at-a-time parser gives for the same line.
 *
 * @module
 */
import type { Dec, QuoteEvent, TakerSide, TradeEvent } from './types.js';

/** Row kinds ({@link BatchColumns.kind}). */
export const ROW_QUOTE = 1;
/** A trade row: `v[4 i]` price, `v[4 i + 1]` size; `side[i]` its taker side. */
export const ROW_TRADE = 2;
/** Any other row: `others[otherIndex[i]]` holds it whole (a record, an event, or a read error). */
export const ROW_OTHER = 3;

/** Decimal cells per row in {@link BatchColumns.v}. */
export const CELLS = 4;

/** Quote cells: `v[4 i + QUOTE_BID]` ... */
export const QUOTE_BID = 0;
export const QUOTE_BID_SIZE = 1;
export const QUOTE_ASK = 2;
export const QUOTE_ASK_SIZE = 3;
/** Trade cells. */
export const TRADE_PRICE = 0;
export const TRADE_SIZE = 1;

/** Taker sides by code ({@link BatchColumns.side}): 0 = absent. */
export const SIDE_CODES: readonly (TakerSide | undefined)[] = [undefined, 'BUY', 'SELL', 'BUY_ESTIMATED', 'SELL_ESTIMATED', 'UNKNOWN'];

/** The code of a taker side in {@link BatchColumns.side} (0 for none). */
export function sideCode(side: TakerSide | undefined): number {
  return side === undefined ? 0 : SIDE_CODES.indexOf(side);
}

/**
 * A row that is not a plain quote or trade, kept whole. Its shape is the reader's record
 * (src/io/source.ts `SourceRecord` without `line`, which is in {@link BatchColumns.line}); the
 * core does not look inside it.
 */
export type OtherRow = Record<string, unknown>;

/**
 * One batch of rows of one input, in read order, as typed-array columns. Every field is a
 * structured-clone value, so a batch crosses threads with {@link batchTransferList}.
 *
 * Columns indexed by row `i < length`:
 * - `kind[i]`: {@link ROW_QUOTE}, {@link ROW_TRADE} or {@link ROW_OTHER};
 * - `line[i]`: 1-based line (NDJSON, CSV) or row (SQLite, Parquet) in its input;
 * - quote and trade rows: `time[i]` (µs), `symbol[i]` (index into `symbols`), `side[i]`
 *   (trades: {@link SIDE_CODES}), the decimal cells `v[CELLS i + c]`;
 * - other rows: `otherIndex[i]`, an index into `others`;
 * - raw text: `raw` holds UTF-8 bytes, row i's raw text (what `SourceRecord.raw` would be) is
 *   `raw[rawStart[i], rawEnd[i])`; a reader that cannot give it cheaply leaves `rawStart[i] =
 *   -1` and gives it through its own `rawOf` (src/io/batch.ts).
 */
export interface BatchColumns {
  length: number;
  kind: Uint8Array;
  line: Float64Array;
  time: Float64Array;
  symbol: Int32Array;
  /** The symbol ids named by this batch's rows (a dictionary per batch). */
  symbols: string[];
  side: Uint8Array;
  /** CELLS values per row. */
  v: Float64Array;
  /** Cells (`CELLS i + c`) whose exact text is not `String(v[cell])`, ascending. */
  textCells: Int32Array;
  /** Their texts, in the order of {@link textCells}. */
  texts: string[];
  otherIndex: Int32Array;
  others: OtherRow[];
  raw: Uint8Array;
  rawStart: Int32Array;
  rawEnd: Int32Array;
  /**
   * A merged batch (`--merge`): row i is of input `input[i]` (an index into the run's inputs).
   * Absent: every row is of the batch's one input.
   */
  input?: Uint32Array;
}

/** The buffers of a batch, for `postMessage(batch, batchTransferList(batch))`. */
export function batchTransferList(b: BatchColumns): ArrayBuffer[] {
  const seen = new Set<ArrayBuffer>();
  for (const a of [b.kind, b.line, b.time, b.symbol, b.side, b.v, b.textCells, b.otherIndex, b.raw, b.rawStart, b.rawEnd, b.input]) {
    if (a === undefined) continue;
    const buf = a.buffer;
    if (buf instanceof ArrayBuffer) seen.add(buf);
  }
  return [...seen];
}

/** Buffers below this size are not kept by a {@link BufferPool} (nor rounded up). */
const POOL_MIN = 1 << 16;
/** Free buffers a {@link BufferPool} keeps at most. */
const POOL_KEEP = 8;

/**
 * ArrayBuffers to build batches on ({@link BatchBuilder.finish}), given back once their batches
 * are done with: a reader's worker gets its batches' buffers back from the thread that applied
 * them, so it allocates none while it reads, and no spent batch waits for a garbage collection
 * to give its memory back. Sizes are rounded up to a power of two, so a buffer serves the batches
 * of the next sizes too.
 *
 * @example
 * ```ts
 * const pool = new BufferPool();
 * const b = builder.finish(raw, { pool, copyRaw: true });
 * // ... b applied, and done with:
 * for (const buf of batchTransferList(b)) pool.put(buf);
 * ```
 */
export class BufferPool {
  private readonly free: ArrayBuffer[] = [];

  /**
   * @param minBytes buffers below this size are neither kept nor rounded up (tests take 0, to reuse small ones)
   * @param keep free buffers kept at most
   */
  constructor(
    private readonly minBytes = POOL_MIN,
    private readonly keep = POOL_KEEP,
  ) {}

  /** A buffer of at least `bytes` bytes (its contents undefined): a free one, or a new one. */
  take(bytes: number): ArrayBuffer {
    const free = this.free;
    let best = -1;
    for (let k = 0; k < free.length; k++) {
      const n = free[k].byteLength;
      if (n >= bytes && (best < 0 || n < free[best].byteLength)) best = k;
    }
    if (best >= 0) {
      const b = free[best];
      free[best] = free[free.length - 1];
      free.pop();
      return b;
    }
    return new ArrayBuffer(bytes < this.minBytes ? bytes : 2 ** Math.ceil(Math.log2(Math.max(1, bytes))));
  }

  /** Gives back a buffer no batch uses any more (a small one, or one beyond the few kept, is left to the collector). */
  put(b: ArrayBuffer): void {
    if (b.byteLength < this.minBytes || this.free.length >= this.keep) return;
    this.free.push(b);
  }
}

/** The typed columns of a batch, as views of one buffer ({@link batchArrays}). */
export type BatchArrays = Pick<
  BatchColumns,
  'line' | 'time' | 'v' | 'symbol' | 'otherIndex' | 'rawStart' | 'rawEnd' | 'textCells' | 'kind' | 'side' | 'raw'
>;

/**
 * The typed columns of a batch of `n` rows, `texts` listed texts and `rawBytes` raw bytes, as
 * views of one buffer (from `pool`, its contents undefined, when given; else zeroed): 8-byte
 * columns first, then 4-byte, then bytes, each at an offset its element size divides. One buffer
 * per batch is what {@link batchTransferList} transfers and a {@link BufferPool} recycles.
 */
export function batchArrays(n: number, texts: number, rawBytes: number, pool?: BufferPool): BatchArrays {
  const bytes = 8 * (2 + CELLS) * n + 4 * (4 * n + texts) + 2 * n + rawBytes;
  const buf = pool ? pool.take(bytes) : new ArrayBuffer(bytes);
  let at = 0;
  const next = <T extends Uint8Array | Int32Array | Float64Array>(
    C: new (b: ArrayBuffer, o: number, n: number) => T,
    len: number,
    size: number,
  ): T => {
    const v = new C(buf, at, len);
    at += len * size;
    return v;
  };
  return {
    line: next(Float64Array, n, 8),
    time: next(Float64Array, n, 8),
    v: next(Float64Array, CELLS * n, 8),
    symbol: next(Int32Array, n, 4),
    otherIndex: next(Int32Array, n, 4),
    rawStart: next(Int32Array, n, 4),
    rawEnd: next(Int32Array, n, 4),
    textCells: next(Int32Array, texts, 4),
    kind: next(Uint8Array, n, 1),
    side: next(Uint8Array, n, 1),
    raw: next(Uint8Array, rawBytes, 1),
  };
}

/**
 * The first index of {@link BatchColumns.textCells} at or after cell `cell` (`textCells.length`
 * when none): row i lists a text exactly when the entry at `CELLS i` is below `CELLS (i + 1)`.
 */
export function firstTextAt(b: BatchColumns, cell: number): number {
  const cells = b.textCells;
  let lo = 0;
  let hi = cells.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cells[mid] < cell) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The exact text of decimal cell `cell` (= `CELLS * row + c`): the listed text, or
 * `String(value)`. A binary search over {@link BatchColumns.textCells}, which are few.
 */
export function decText(b: BatchColumns, cell: number): string {
  const k = firstTextAt(b, cell);
  return k < b.textCells.length && b.textCells[k] === cell ? b.texts[k] : String(b.v[cell]);
}

/** The {@link Dec} of decimal cell `cell`. */
export function decAt(b: BatchColumns, cell: number): Dec {
  return { value: b.v[cell], text: decText(b, cell) };
}

/**
 * The event of quote or trade row `i`, deep-equal to what the record-at-a-time parser gives for
 * the same line (undefined for an other row).
 */
export function eventAt(b: BatchColumns, i: number): QuoteEvent | TradeEvent | undefined {
  const k = b.kind[i];
  const c = CELLS * i;
  if (k === ROW_QUOTE) {
    return {
      type: 'quote',
      time: b.time[i],
      symbolId: b.symbols[b.symbol[i]],
      bidPrice: decAt(b, c + QUOTE_BID),
      bidSize: decAt(b, c + QUOTE_BID_SIZE),
      askPrice: decAt(b, c + QUOTE_ASK),
      askSize: decAt(b, c + QUOTE_ASK_SIZE),
    };
  }
  if (k === ROW_TRADE) {
    const side = SIDE_CODES[b.side[i]];
    const t: TradeEvent = {
      type: 'trade',
      time: b.time[i],
      symbolId: b.symbols[b.symbol[i]],
      price: decAt(b, c + TRADE_PRICE),
      size: decAt(b, c + TRADE_SIZE),
    };
    return side === undefined ? t : { ...t, takerSide: side };
  }
  return undefined;
}

/**
 * Builds batches row by row (a reader's output side). Columns grow as needed; {@link finish}
 * returns the batch trimmed to its rows and starts a new one.
 *
 * @example
 * ```ts
 * const bb = new BatchBuilder();
 * bb.quote(1, 1709251200000000, 'K_SPOT_BTC_USD', 62000, 1, 62001, 2);
 * const batch = bb.finish(rawBytes);
 * ```
 */
export class BatchBuilder {
  private n = 0;
  private kind = new Uint8Array(1024);
  private line = new Float64Array(1024);
  private time = new Float64Array(1024);
  private symbol = new Int32Array(1024);
  private side = new Uint8Array(1024);
  private v = new Float64Array(CELLS * 1024);
  private otherIndex = new Int32Array(1024);
  private rawStart = new Int32Array(1024);
  private rawEnd = new Int32Array(1024);
  private textCells: number[] = [];
  private texts: string[] = [];
  private others: OtherRow[] = [];
  private symbols: string[] = [];
  private symbolIds = new Map<string, number>();

  /** Rows so far. */
  get length(): number {
    return this.n;
  }

  private grow(): void {
    const cap = this.kind.length * 2;
    const g = <T extends Uint8Array | Int32Array | Float64Array>(a: T, k = 1): T => {
      const b = new (a.constructor as new (n: number) => T)(cap * k);
      b.set(a);
      return b;
    };
    this.kind = g(this.kind);
    this.line = g(this.line);
    this.time = g(this.time);
    this.symbol = g(this.symbol);
    this.side = g(this.side);
    this.v = g(this.v, CELLS);
    this.otherIndex = g(this.otherIndex);
    this.rawStart = g(this.rawStart);
    this.rawEnd = g(this.rawEnd);
  }

  /** The dictionary index of a symbol id in this batch. */
  symbolIndex(id: string): number {
    let k = this.symbolIds.get(id);
    if (k === undefined) {
      k = this.symbols.length;
      this.symbols.push(id);
      this.symbolIds.set(id, k);
    }
    return k;
  }

  private row(kind: number, line: number, rawStart: number, rawEnd: number): number {
    if (this.n === this.kind.length) this.grow();
    const i = this.n++;
    this.kind[i] = kind;
    this.line[i] = line;
    this.rawStart[i] = rawStart;
    this.rawEnd[i] = rawEnd;
    return i;
  }

  /** Lists the exact text of cell `cell` when it is not `String(value)`. */
  text(cell: number, text: string): void {
    if (text !== String(this.v[cell])) {
      this.textCells.push(cell);
      this.texts.push(text);
    }
  }

  /** A quote row (symbol by dictionary index, see {@link symbolIndex}); returns the row. */
  quote(
    line: number,
    time: number,
    symbol: number,
    bid: number,
    bidSize: number,
    ask: number,
    askSize: number,
    rawStart = -1,
    rawEnd = -1,
  ): number {
    const i = this.row(ROW_QUOTE, line, rawStart, rawEnd);
    this.time[i] = time;
    this.symbol[i] = symbol;
    this.side[i] = 0;
    const c = CELLS * i;
    const v = this.v;
    v[c] = bid;
    v[c + 1] = bidSize;
    v[c + 2] = ask;
    v[c + 3] = askSize;
    return i;
  }

  /** A trade row; returns the row. */
  trade(line: number, time: number, symbol: number, price: number, size: number, side: number, rawStart = -1, rawEnd = -1): number {
    const i = this.row(ROW_TRADE, line, rawStart, rawEnd);
    this.time[i] = time;
    this.symbol[i] = symbol;
    this.side[i] = side;
    const c = CELLS * i;
    this.v[c] = price;
    this.v[c + 1] = size;
    this.v[c + 2] = 0;
    this.v[c + 3] = 0;
    return i;
  }

  /** A row kept whole; returns the row. */
  other(line: number, row: OtherRow, rawStart = -1, rawEnd = -1): number {
    const i = this.row(ROW_OTHER, line, rawStart, rawEnd);
    this.time[i] = 0;
    this.symbol[i] = -1;
    this.otherIndex[i] = this.others.length;
    this.others.push(row);
    return i;
  }

  /**
   * The batch of the rows so far (with `raw`, the bytes their raw offsets point into); starts a
   * new batch. Its columns are views of one buffer (from `pool`, when given); with `copyRaw`, the
   * raw bytes are copied into it too, so the caller may write over `raw` for the next batch.
   */
  finish(raw: Uint8Array = new Uint8Array(0), opts: { pool?: BufferPool; copyRaw?: boolean } = {}): BatchColumns {
    const n = this.n;
    const t = this.textCells.length;
    // The columns as views of one buffer (and the raw bytes in it when copied).
    const a = batchArrays(n, t, opts.copyRaw ? raw.length : 0, opts.pool);
    a.line.set(this.line.subarray(0, n));
    a.time.set(this.time.subarray(0, n));
    a.v.set(this.v.subarray(0, CELLS * n));
    a.symbol.set(this.symbol.subarray(0, n));
    a.otherIndex.set(this.otherIndex.subarray(0, n));
    a.rawStart.set(this.rawStart.subarray(0, n));
    a.rawEnd.set(this.rawEnd.subarray(0, n));
    for (let k = 0; k < t; k++) a.textCells[k] = this.textCells[k];
    a.kind.set(this.kind.subarray(0, n));
    a.side.set(this.side.subarray(0, n));
    if (opts.copyRaw) a.raw.set(raw);
    // (In the key order of every batch: one shape for the engine's reads.)
    const b: BatchColumns = {
      length: n,
      kind: a.kind,
      line: a.line,
      time: a.time,
      symbol: a.symbol,
      symbols: this.symbols,
      side: a.side,
      v: a.v,
      textCells: a.textCells,
      texts: this.texts,
      otherIndex: a.otherIndex,
      others: this.others,
      raw: opts.copyRaw ? a.raw : raw,
      rawStart: a.rawStart,
      rawEnd: a.rawEnd,
    };
    this.n = 0;
    this.textCells = [];
    this.texts = [];
    this.others = [];
    this.symbols = [];
    this.symbolIds = new Map();
    return b;
  }
}
