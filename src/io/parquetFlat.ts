/**
 * A row group of a Parquet event log read flat (parquetRead.ts): its column chunks read from the
 * file and decoded straight into typed arrays (parquetColumns.ts): every column, as a replay
 * reads them ({@link readFlatGroup}), or the few a pre-scan needs ({@link readTimesGroup}, made
 * into batches by {@link timesBatch}): a quote's or trade's line, kind, time and symbol, about an
 * eighth of an event log's bytes.
 *
 * @module
 */
import { type BatchColumns, type BufferPool, batchArrays, CELLS, ROW_QUOTE, ROW_TRADE } from '../core/batch.js';
import { type ChunkSpec, decodeChunk, type FlatColumn, UnsupportedParquet } from './parquetColumns.js';
import { readAt } from './parquetFooter.js';
import { FLAT_COLUMNS, type GroupPlan, type Plans } from './parquetPlan.js';

/** Decoded columns of a row group, by name. */
export type FlatGroup = Record<string, FlatColumn>;

/** The bytes of the column chunks being decoded (decoding is synchronous, and copies every value out). */
let groupBytes = new Uint8Array(0);

/** The indexes in {@link FLAT_COLUMNS} of `names`. */
const indexesOf = (names: readonly string[]): number[] => names.map((n) => FLAT_COLUMNS.indexOf(n));

/**
 * Columns `ks` (indexes in {@link FLAT_COLUMNS}) of row group `g` of an open file, decoded by name;
 * into the arrays of `reuse` (a row group before, done with) where they are long enough. Their
 * chunks are read at once, from the first one's start to the last one's end.
 */
function readFlatColumns(fd: number, plans: Plans, g: GroupPlan, ks: readonly number[], reuse: FlatGroup): FlatGroup {
  const { ranges, codes } = g;
  if (ranges === undefined || codes === undefined) throw new UnsupportedParquet(g.unsupported);
  let lo = Number.POSITIVE_INFINITY;
  let hi = 0;
  for (const k of ks) {
    lo = Math.min(lo, ranges[2 * k]);
    hi = Math.max(hi, ranges[2 * k + 1]);
  }
  if (groupBytes.length < hi - lo) groupBytes = new Uint8Array(Math.max(hi - lo, 2 * groupBytes.length));
  const bytes = readAt(fd, lo, hi - lo, groupBytes);
  const out: FlatGroup = {};
  for (const k of ks) {
    const name = FLAT_COLUMNS[k];
    const from = ranges[2 * k];
    const to = ranges[2 * k + 1];
    if (to - lo > bytes.length) throw new Error('parquet column chunk past the end of the file');
    const spec: ChunkSpec = {
      type: plans.names[codes[2 * k]],
      optional: plans.optional[k],
      codec: plans.names[codes[2 * k + 1]],
      rows: g.rows,
    };
    out[name] = decodeChunk(bytes.subarray(from - lo, to - lo), spec, reuse[name]);
  }
  return out;
}

const ALL = indexesOf(FLAT_COLUMNS);

/** Every column of row group `g` (its chunks follow one another in the file: one read). */
export function readFlatGroup(fd: number, plans: Plans, g: GroupPlan, reuse: FlatGroup): FlatGroup {
  return readFlatColumns(fd, plans, g, ALL, reuse);
}

/** The columns that make a row another row (metadata, a metric) or a reject, when not null. */
const OTHER_ROWS = indexesOf(['other', 'reject_reason']);
/** What a pre-scan reads of a quote or trade row. */
const TIMES = indexesOf(['line', 'type', 'time', 'symbol_id']);

/**
 * The columns {@link timesBatch} reads of row group `g` when all its rows are quotes and trades;
 * undefined when it has another row or a reject (to be read whole).
 */
export function readTimesGroup(fd: number, plans: Plans, g: GroupPlan, reuse: FlatGroup): FlatGroup | undefined {
  const other = readFlatColumns(fd, plans, g, OTHER_ROWS, reuse);
  for (const c of Object.values(other)) {
    const codes = c.codes;
    if (codes === undefined) throw new UnsupportedParquet('parquet other or reject column not text');
    for (let i = 0; i < g.rows; i++) if (codes[i] >= 0) return undefined;
  }
  return { ...other, ...readFlatColumns(fd, plans, g, TIMES, reuse) };
}

/**
 * Each row's symbol as an index into a batch's list of symbols (listed at first use), from its
 * code in a column chunk's texts (-1: null, listed as '').
 */
export class BatchSymbols {
  readonly list: string[] = [];
  private readonly ids = new Map<string, number>();
  private readonly at: Int32Array;
  private nullAt = -1;

  constructor(private readonly texts: readonly string[]) {
    this.at = new Int32Array(texts.length).fill(-1);
  }

  of(code: number): number {
    if (code < 0) {
      if (this.nullAt < 0) this.nullAt = this.index('');
      return this.nullAt;
    }
    let s = this.at[code];
    if (s < 0) {
      s = this.index(this.texts[code]);
      this.at[code] = s;
    }
    return s;
  }

  private index(id: string): number {
    let k = this.ids.get(id);
    if (k === undefined) {
      k = this.list.push(id) - 1;
      this.ids.set(id, k);
    }
    return k;
  }
}

/**
 * The batch of rows `[from, to)` of a row group read by {@link readTimesGroup} (rows with a line
 * below `startLine` left out): each row's line, time, symbol and kind as the whole batch has them;
 * its values are not read (zero), nor its raw text (`rawStart` and `rawEnd` -1): what a
 * pre-scan needs, not a batch to apply.
 */
export function timesBatch(g: FlatGroup, from: number, to: number, startLine: number, pool?: BufferPool): BatchColumns {
  const line = g.line.num!;
  const time = g.time.num!;
  const type = g.type;
  const isQuote = (type.texts ?? []).map((s) => s === 'quote');
  const symbols = new BatchSymbols(g.symbol_id.texts ?? []);
  const symbolCodes = g.symbol_id.codes!;
  const n = to - from;
  const a = batchArrays(n, 0, 0, pool);
  if (pool) {
    a.v.fill(0);
    a.otherIndex.fill(0);
    a.side.fill(0);
  }
  let r = 0;
  for (let i = from; i < to; i++) {
    const ln = line[i];
    if (ln < startLine) continue;
    a.line[r] = ln;
    a.time[r] = time[i];
    a.symbol[r] = symbols.of(symbolCodes[i]);
    const tc = type.codes![i];
    a.kind[r] = tc >= 0 && isQuote[tc] ? ROW_QUOTE : ROW_TRADE;
    a.rawStart[r] = -1;
    a.rawEnd[r] = -1;
    r++;
  }
  const cut = <T extends Uint8Array | Int32Array | Float64Array>(x: T, k = 1): T => (r === n ? x : (x.subarray(0, r * k) as T));
  return {
    length: r,
    kind: cut(a.kind),
    line: cut(a.line),
    time: cut(a.time),
    symbol: cut(a.symbol),
    symbols: symbols.list,
    side: cut(a.side),
    v: cut(a.v, CELLS),
    textCells: a.textCells,
    texts: [],
    otherIndex: cut(a.otherIndex),
    others: [],
    raw: a.raw,
    rawStart: cut(a.rawStart),
    rawEnd: cut(a.rawEnd),
  };
}
