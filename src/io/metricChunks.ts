/**
 * xrate's own metric points (docs/methodology.md section 9) stored as columns: one row of
 * `metric_chunks` per series and per batch, holding the series' points of that batch packed as
 * float64s (their times, then their values, then their seqs) and the texts that are not their value's own (the exact
 * decimal of XRATE_MARKET_VOLUME_24H). A replay writes about one own point per quote; a row per
 * point with its six-column index cost a replay as much again as the rest of it, a row per
 * series and batch costs a few percent.
 *
 * A chunk's points are in the order written: `seq` increasing, and (ticks only go forward) time
 * non-decreasing, so a series' chunks, in `seq_first` order, hold its points in (time, seq) order.
 * What a chunk holds reads back exactly as the rows `metric_points` held for the same points
 * (metricStore.ts reads both): kind `decimal`, recv_time its time, no chain or network, the value
 * as SQLite keeps a REAL (NaN read back as none, -0 as 0), the text.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { MARKET_VOLUME_24H, type OwnMetricBatch } from '../core/engine/ownMetricBatch.js';
import type { RowSink, RowSinkMaker } from './rowJob.js';

/** The table and its index, created with the rest of the schema (metricStore.ts's METRIC_SCHEMA). */
export const CHUNK_SCHEMA = `
CREATE TABLE IF NOT EXISTS metric_chunks (
  metric_id TEXT NOT NULL, exchange_id TEXT NOT NULL, symbol_id TEXT NOT NULL, asset_id TEXT NOT NULL,
  first INTEGER NOT NULL, last INTEGER NOT NULL, n INTEGER NOT NULL, seq_first INTEGER NOT NULL, seq_last INTEGER NOT NULL,
  points BLOB NOT NULL, texts TEXT, batch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS metric_chunks_series ON metric_chunks(metric_id, exchange_id, symbol_id, asset_id, first, seq_first);
`;

/** The insert of a chunk (the columns of {@link CHUNK_SCHEMA} in order). */
export const CHUNK_INSERT = `INSERT INTO metric_chunks(metric_id, exchange_id, symbol_id, asset_id, first, last, n, seq_first, seq_last, points, texts, batch)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The columns a reader selects to decode a chunk (see {@link decodeChunk}). */
export const CHUNK_COLUMNS = 'metric_id, exchange_id, symbol_id, asset_id, n, points, texts';

/** A chunk as selected with {@link CHUNK_COLUMNS}. */
export interface ChunkRow {
  metric_id: string;
  exchange_id: string;
  symbol_id: string;
  asset_id: string;
  n: number;
  /** The points' times, then their values, then their seqs: 3 × n float64s. */
  points: Uint8Array;
  texts: string | null;
}

/** A chunk's points as columns. */
export interface ChunkPoints {
  times: Float64Array;
  values: Float64Array;
  seqs: Float64Array;
  /** The exact text of point i. */
  text(i: number): string;
}

/** The float64 array packed in `b` (`n` values), a view when aligned, else a copy. */
export function float64s(b: Uint8Array, n: number): Float64Array {
  if (b.byteOffset % 8 === 0) return new Float64Array(b.buffer, b.byteOffset, n);
  const a = new Float64Array(n);
  new Uint8Array(a.buffer).set(b.subarray(0, 8 * n));
  return a;
}

/**
 * `n` points' times, values and seqs in one array, in that order: what a chunk's points column
 * packs. Point i's are `times[stride * i]`, `values[stride * i]` and `seqs[stride * i]`.
 */
function columns(times: ArrayLike<number>, values: ArrayLike<number>, seqs: ArrayLike<number>, n: number, stride = 1): Float64Array {
  const a = new Float64Array(3 * n);
  for (let i = 0, o = 0; i < n; i++, o += stride) {
    a[i] = times[o];
    a[n + i] = values[o];
    a[2 * n + i] = seqs[o];
  }
  return a;
}

/**
 * The values of {@link CHUNK_INSERT} for a chunk of series `ids` of `n` points, given as
 * {@link columns} makes them (an array of its own: the points column is its buffer, which a job
 * may transfer), with its texts column and batch.
 */
export function chunkRow(
  ids: readonly [string, string, string, string],
  points: Float64Array,
  n: number,
  texts: string | null,
  batch: number,
): unknown[] {
  return [...ids, points[0], points[n - 1], n, points[2 * n], points[3 * n - 1], new Uint8Array(points.buffer), texts, batch];
}

/** The text a value has unless the chunk says otherwise. */
const ownText = (v: number): string => String(v);

/**
 * A chunk's texts column: the texts that are not their value's own, as a JSON array of
 * [index, text] pairs; null when there is none. Point i's value is `values[stride * i]`.
 */
function textsColumn(texts: readonly (string | undefined)[], values: ArrayLike<number>, n: number, stride = 1): string | null {
  const out: [number, string][] = [];
  for (let i = 0; i < n; i++) {
    const t = texts[i];
    if (t !== undefined && t !== ownText(values[stride * i])) out.push([i, t]);
  }
  return out.length > 0 ? JSON.stringify(out) : null;
}

/**
 * A chunk's points (`row` as selected with {@link CHUNK_COLUMNS}).
 *
 * @example
 * ```ts
 * const p = decodeChunk(row); // p.times[0], p.values[0], p.text(0)
 * ```
 */
export function decodeChunk(row: Pick<ChunkRow, 'n' | 'points' | 'texts'>): ChunkPoints {
  const n = row.n;
  const all = float64s(row.points, 3 * n);
  const values = all.subarray(n, 2 * n);
  const special = row.texts === null ? undefined : new Map(JSON.parse(row.texts) as [number, string][]);
  return {
    times: all.subarray(0, n),
    values,
    seqs: all.subarray(2 * n, 3 * n),
    text: special === undefined ? (i) => ownText(values[i]) : (i) => special.get(i) ?? ownText(values[i]),
  };
}

/** One series' points not written yet. */
interface Slot {
  ids: [string, string, string, string];
  /** The batch whose ids these are (resolved again in each batch). */
  batch: number;
  n: number;
  /**
   * Point i's time, value and seq at 3i, 3i + 1 and 3i + 2: one place a point, written where the
   * point before was (three arrays a series were three places, scattered over the series of a tick).
   */
  pts: Float64Array;
  texts: (string | undefined)[];
  /** Whether the slot is in the writer's list of slots with points. */
  listed: boolean;
  /** The room (points) it keeps while empty, counted in the writer's `retained` (0: none beyond {@link SLOT_ROOM}). */
  kept: number;
}

/** The capacity a slot starts with, and goes back to once a chunk of more is written. */
const SLOT_ROOM = 16;

/**
 * The points a series gathers before its chunk is written, when chunks are gathered across
 * batches (an offline replay's default: `ReplayStore.open`'s `ownChunkPoints`).
 */
export const CHUNK_POINTS = 256;

/**
 * With chunks gathered across batches, the points every series may hold unwritten at a commit, as
 * a multiple of the chunk's points; past it, every chunk is written (what bounds the memory,
 * whatever the number of series).
 */
const GATHERED_CHUNKS = 1024;

/** A float64 array of room for `n` values holding `a`'s first `used`. */
function room(a: Float64Array, used: number, n: number): Float64Array {
  if (a.length >= n) return a;
  const b = new Float64Array(Math.max(n, 2 * a.length));
  b.set(a.subarray(0, used));
  return b;
}

/**
 * Gathers the own metric points per series and writes them as chunks, through the sink `make`
 * makes of {@link CHUNK_INSERT}, when a batch commits ({@link flush}).
 *
 * By default a chunk holds a series' points of one batch. With `chunkPoints` (an offline replay,
 * where event time runs far ahead of the wall clock; {@link CHUNK_POINTS}) a series' points are
 * gathered over batches: its chunk is written at the commit of the batch that takes it to
 * `chunkPoints` points, and every chunk at a commit that stores a snapshot (`flush(true)`) or
 * that finds more than 1,024 × `chunkPoints` points gathered in all. A chunk carries the batch
 * of its commit, so a resume, which deletes what batches after its snapshot wrote, deletes only
 * points of those batches: every point gathered before the snapshot was written in the
 * snapshot's batch.
 *
 * @example
 * ```ts
 * const w = new OwnChunkWriter(make);
 * w.add(ownBatch, 1, 7); // each tick
 * w.flush();             // before the batch's commit
 * ```
 */
export class OwnChunkWriter {
  private readonly sink: RowSink;
  /** The slot of each series, at metric index + 8 × subject index. */
  private readonly slots: (Slot | undefined)[] = [];
  /** Slots with points, in the order first written. */
  private active: Slot[] = [];
  private batch = 0;
  /** Points gathered, not written. */
  private gathered = 0;
  /** The room (points) empty slots keep, and its bound: twice the points gathered at most (none when chunks are not gathered). */
  private retained = 0;
  private readonly retainLimit: number;

  constructor(
    make: RowSinkMaker,
    private readonly chunkPoints = 0,
  ) {
    this.sink = make(CHUNK_INSERT);
    this.retainLimit = 2 * GATHERED_CHUNKS * chunkPoints;
  }

  /** The room (points) empty slots keep for their next chunks: at most twice the points gathered at most. */
  get retainedRoom(): number {
    return this.retained;
  }

  /** Adds the points of one tick (`b`), point i with `seq + i`, of batch `batch`. */
  add(b: OwnMetricBatch, seq: number, batch: number): void {
    if (batch !== this.batch) {
      if (this.chunkPoints === 0) this.flush();
      this.batch = batch;
    }
    const time = b.time;
    for (let i = 0; i < b.length; i++) {
      const metric = b.metric[i];
      const key = metric + 8 * b.subject[i];
      let s = this.slots[key];
      if (s === undefined) {
        while (this.slots.length < key) this.slots.push(undefined);
        s = {
          ids: ['', '', '', ''],
          batch: -1,
          n: 0,
          pts: new Float64Array(3 * SLOT_ROOM),
          texts: [],
          listed: false,
          kept: 0,
        };
        this.slots[key] = s;
      }
      if (s.batch !== batch) {
        const ids: Slot['ids'] = [b.metricId(i), b.exchangeId(i), b.symbolId(i) ?? '', b.assetId(i) ?? ''];
        // Points gathered under other ids are a chunk of their own.
        if (s.n > 0 && !sameIds(s.ids, ids)) this.write(s);
        s.ids = ids;
        s.batch = batch;
      }
      if (!s.listed) {
        s.listed = true;
        this.active.push(s);
      }
      const k = s.n;
      const o = 3 * k;
      if (o === s.pts.length) s.pts = room(s.pts, o, o + 3);
      const pts = s.pts;
      const v = b.value[i];
      pts[o] = time;
      // As SQLite keeps a REAL: -0 as 0.
      pts[o + 1] = v === 0 ? 0 : v;
      pts[o + 2] = seq + i;
      if (metric === MARKET_VOLUME_24H) s.texts[k] = b.text(i) ?? '';
      s.n = k + 1;
    }
    this.gathered += b.length;
  }

  /**
   * Writes the gathered chunks (call in the batch's transaction, before its commit): all of them
   * unless the writer gathers across batches, then those of `chunkPoints` points or more, or all
   * with `all` (the batch stores a snapshot) or when too many points are gathered.
   */
  flush(all = true): void {
    const points = this.chunkPoints;
    const every = all || points === 0 || this.gathered > GATHERED_CHUNKS * points;
    const kept: Slot[] = [];
    for (const s of this.active) {
      if (s.n > 0 && !every && s.n < points) kept.push(s);
      else {
        if (s.n > 0) this.write(s);
        s.listed = false;
      }
    }
    this.active = kept;
  }

  /** Writes slot `s`'s points as a chunk of the current batch and empties it. */
  private write(s: Slot): void {
    const n = s.n;
    // The triples as three strided columns.
    const p = s.pts;
    const values = p.subarray(1);
    const texts = s.texts.length === 0 ? null : textsColumn(s.texts, values, n, 3);
    this.sink(...chunkRow(s.ids, columns(p, values, p.subarray(2), n, 3), n, texts, this.batch));
    this.gathered -= n;
    this.empty(s);
  }

  /**
   * Empties slot `s`. A series that gathered a long chunk keeps its room for the next one (where
   * growing it again, array after array, cost more than the rest of the gathering), while the room
   * kept by all is within what the points gathered at most take; beyond, it gives the room back.
   */
  private empty(s: Slot): void {
    s.n = 0;
    s.texts.length = 0;
    const cap = s.pts.length / 3;
    if (cap <= 4 * SLOT_ROOM) return;
    const others = this.retained - s.kept;
    if (others + cap <= this.retainLimit) {
      this.retained = others + cap;
      s.kept = cap;
      return;
    }
    this.retained = others;
    s.kept = 0;
    s.pts = new Float64Array(3 * SLOT_ROOM);
  }

  /** Forgets the gathered points (their transaction rolled back, or written). */
  drop(): void {
    for (const s of this.active) {
      this.empty(s);
      s.listed = false;
    }
    this.active = [];
    this.gathered = 0;
  }
}

const sameIds = (a: Slot['ids'], b: Slot['ids']): boolean => a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];

/**
 * The {@link OwnChunkWriter}s of a store's writers: flushed together before each commit, dropped
 * together at a rollback.
 *
 * @example
 * ```ts
 * const all = new OwnChunkWriters();
 * const w = all.add(make);
 * all.around(() => w.add(ownBatch, 1, 1)); // flushed at the end, dropped if it throws
 * ```
 */
export class OwnChunkWriters {
  private readonly all: OwnChunkWriter[] = [];

  /** `chunkPoints`: the writers gather a series' points over batches into chunks of that many (see {@link OwnChunkWriter}). */
  constructor(private readonly chunkPoints = 0) {}

  /** A new writer through the sinks `make` makes, flushed and dropped with the others. */
  add(make: RowSinkMaker): OwnChunkWriter {
    const w = new OwnChunkWriter(make, this.chunkPoints);
    this.all.push(w);
    return w;
  }

  /** Flushes every writer (`all`: every gathered chunk, see {@link OwnChunkWriter.flush}). */
  flush(all = true): void {
    for (const w of this.all) w.flush(all);
  }

  drop(): void {
    for (const w of this.all) w.drop();
  }

  /** Runs `fn`, then flushes every chunk (in the transaction `fn` runs in); drops the points gathered if it throws. */
  around<T>(fn: () => T): T {
    try {
      const r = fn();
      this.flush();
      return r;
    } catch (e) {
      this.drop();
      throw e;
    }
  }
}

/**
 * Writes points of one series as a chunk through `insert` (a statement of {@link CHUNK_INSERT}):
 * what {@link OwnChunkWriter} writes for them. For merges and tests.
 */
export function writeChunk(
  insert: (...values: unknown[]) => void,
  ids: readonly [string, string, string, string],
  points: { times: ArrayLike<number>; values: ArrayLike<number>; seqs: ArrayLike<number>; texts: readonly (string | undefined)[] },
  batch: number,
): void {
  const n = points.times.length;
  if (n === 0) return;
  const values = Float64Array.from(points.values, (v) => (v === 0 ? 0 : v));
  insert(...chunkRow(ids, columns(points.times, values, points.seqs, n), n, textsColumn(points.texts, values, n), batch));
}

/**
 * Registers `xrate_chunk_last(points, n, at)` on `db`: the last time at or before `at` of a
 * chunk's points (null when none), for the spans of series.
 */
export function registerChunkFunctions(db: Database.Database): void {
  db.function('xrate_chunk_last', { deterministic: true }, (points: unknown, n: unknown, at: unknown) => {
    const t = float64s(points as Uint8Array, Number(n));
    const bound = Number(at);
    for (let i = t.length - 1; i >= 0; i--) if (t[i] <= bound) return t[i];
    return null;
  });
}
