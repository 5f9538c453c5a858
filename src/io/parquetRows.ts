/**
 * The rows of the event log's row group being filled (parquetWrite.ts): numbers in typed arrays
 * allocated once, strings and objects in arrays reused from one row group to the next, symbols
 * held once per row group. A row group's column is made into the array hyparquet-writer takes
 * only when the writer comes to that column ({@link EventRows.columns}), and dropped after it.
 *
 * What this saves: the rows of a row group live for seconds (65,536 of them), long enough for the
 * garbage collector to move them to the old generation, where each row group's boxed numbers,
 * BigInts and grown arrays became tens of MB of garbage that only a full collection frees; the
 * heap grew to several times what was live. Typed arrays hold the numbers without garbage, and a
 * symbol cut out of a chunk of text (which keeps that chunk alive) is held by a copy.
 *
 * @module
 */
import { EVENT_COLUMNS } from './parquetSchema.js';

/** `kind`: a row with no decimal columns, a quote (bid and ask), a trade (price and size). */
export const KIND_NONE = 0;
export const KIND_QUOTE = 1;
export const KIND_TRADE = 2;

/** The decimal columns, in {@link EventRows.dec} order: a quote's four, then a trade's two. */
const DEC_COLUMNS = ['bid_price', 'bid_size', 'ask_price', 'ask_size', 'price', 'size'] as const;

/** The string and object columns, set where a row has a value (null elsewhere). */
const SPARSE_COLUMNS = ['type', 'symbol_id', 'taker_side', 'texts', 'other', 'reject_reason', 'reject_message', 'raw'] as const;
type SparseColumn = (typeof SPARSE_COLUMNS)[number];

/**
 * A column of `length` values made when read: hyparquet-writer reads a column's data by `length`
 * and `slice` (of the whole row group) only, one column after the other.
 */
export class LazyColumn {
  constructor(
    readonly length: number,
    private readonly make: () => unknown[],
  ) {}

  /** The values of rows `[start, end)`. */
  slice(start = 0, end = this.length): unknown[] {
    const all = this.make();
    return start === 0 && end >= this.length ? all : all.slice(start, end);
  }
}

/** A copy of `s` that holds nothing else (a string cut out of a longer one keeps all of it alive). */
function ownString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/**
 * The rows of one row group (see the module description). Set a row's cells after
 * {@link EventRows.add}; {@link EventRows.columns} gives them in EVENT_COLUMNS order,
 * {@link EventRows.clear} empties the group.
 */
export class EventRows {
  /** Rows held. */
  n = 0;
  readonly line: Float64Array;
  readonly input: Int32Array;
  readonly rawForm: Uint8Array;
  /** {@link KIND_NONE}, {@link KIND_QUOTE} or {@link KIND_TRADE}: which decimal cells are set. */
  readonly kind: Uint8Array;
  readonly time: Float64Array;
  /** 1 where the row has a time. */
  readonly hasTime: Uint8Array;
  /** The decimal cells, one array per column of DEC_COLUMNS. */
  readonly dec: Float64Array[];
  private readonly sparse: Record<SparseColumn, unknown[]>;
  private readonly symbols = new Map<string, string>();

  /** @param capacity - rows per row group */
  constructor(readonly capacity: number) {
    this.line = new Float64Array(capacity);
    this.input = new Int32Array(capacity);
    this.rawForm = new Uint8Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.time = new Float64Array(capacity);
    this.hasTime = new Uint8Array(capacity);
    this.dec = DEC_COLUMNS.map(() => new Float64Array(capacity));
    this.sparse = Object.fromEntries(SPARSE_COLUMNS.map((c) => [c, new Array<unknown>(capacity).fill(null)])) as Record<
      SparseColumn,
      unknown[]
    >;
  }

  /** Starts a row (no time, no decimals, no other cell); returns its index. */
  add(line: number, input: number): number {
    const i = this.n++;
    this.line[i] = line;
    this.input[i] = input;
    this.kind[i] = KIND_NONE;
    this.hasTime[i] = 0;
    return i;
  }

  /** Sets row `i`'s cell of a string or object column. */
  set(column: SparseColumn, i: number, value: unknown): void {
    this.sparse[column][i] = value;
  }

  /** Sets row `i`'s time (µs). */
  setTime(i: number, t: number): void {
    this.time[i] = t;
    this.hasTime[i] = 1;
  }

  /** Sets row `i`'s symbol, held once per row group and never as a cut of a longer string. */
  setSymbol(i: number, id: string): void {
    let s = this.symbols.get(id);
    if (s === undefined) {
      s = ownString(id);
      this.symbols.set(s, s);
    }
    this.sparse.symbol_id[i] = s;
  }

  /** The columns of the rows held, in EVENT_COLUMNS order, each made when hyparquet-writer reads it. */
  columns(): LazyColumn[] {
    const n = this.n;
    const make = (name: string): (() => unknown[]) => {
      const d = DEC_COLUMNS.indexOf(name as (typeof DEC_COLUMNS)[number]);
      if (d >= 0) {
        const values = this.dec[d];
        const kind = d < 4 ? KIND_QUOTE : KIND_TRADE;
        return () => {
          const out = new Array<number | null>(n);
          for (let i = 0; i < n; i++) out[i] = this.kind[i] === kind ? values[i] : null;
          return out;
        };
      }
      switch (name) {
        // Lines and times as numbers: hyparquet-writer writes an INT64 column's numbers as it
        // writes their BigInts (the same bytes), and packs lines below 2^31 without BigInts.
        case 'line':
          return () => Array.from(this.line.subarray(0, n));
        case 'input':
          return () => Array.from(this.input.subarray(0, n));
        case 'raw_form':
          return () => Array.from(this.rawForm.subarray(0, n));
        case 'time':
          return () => {
            const out = new Array<number | null>(n);
            for (let i = 0; i < n; i++) out[i] = this.hasTime[i] === 1 ? this.time[i] : null;
            return out;
          };
        case 'type':
          return () => {
            const out = this.sparse.type.slice(0, n);
            for (let i = 0; i < n; i++) if (this.kind[i] !== KIND_NONE) out[i] = this.kind[i] === KIND_QUOTE ? 'quote' : 'trade';
            return out;
          };
        default: {
          const values = this.sparse[name as SparseColumn];
          return () => (n === values.length ? values : values.slice(0, n));
        }
      }
    };
    return EVENT_COLUMNS.map((c) => new LazyColumn(n, make(c.name)));
  }

  /** Empties the row group (the arrays are kept for the next). */
  clear(): void {
    for (const c of SPARSE_COLUMNS) this.sparse[c].fill(null, 0, this.n);
    this.symbols.clear();
    this.n = 0;
  }
}
