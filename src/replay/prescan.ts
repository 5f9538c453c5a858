/**
 * The pre-scan of a partitioned replay (docs/parallel.md): one pass over the inputs that keeps, per
 * minute of event time, how many events it holds, where in the inputs the first of them lies and
 * the latest time read before it, plus every `exchange` and `symbol` event; from that, a plan of
 * cuts balanced by events, and for each partition the first record of its warm-up window, the
 * metadata events before it and the replay clock there.
 *
 * The clock and the metadata are what a serial replay would have if every record before the window
 * were accepted; a record the engine rejects (late, or an unknown symbol) can make them differ,
 * which the partition before checks (docs/parallel.md).
 *
 * @module
 */
import { closeSync, createReadStream, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ceilSecond } from '../core/time.js';
import type { XrateEvent } from '../core/types.js';
import { DEFAULT_MAX_LINE_BYTES } from '../io/lineLimit.js';
import { BufferPool, batchTransferList, ROW_QUOTE, ROW_TRADE } from '../core/batch.js';
import { recordAt } from '../io/batch.js';
import { IO_WORKER_LIMITS } from '../io/ioWorker.js';
import type { RowGroupSlice } from '../io/parquetPlan.js';
import { openParquetBatches } from '../io/parquetRead.js';
import { detectFormat, openSource, type OpenSourceOptions } from '../io/source.js';
import { openTextStream } from '../io/textStream.js';
import { NdjsonScanner, recordTime } from './prescanNdjson.js';
import { type ErrorCode, XrateError } from '../core/errors.js';

/**
 * The window the symbol records of the final engine need before the end (their 24-hour volumes,
 * and the tick before): the last partition's warm-up is at least this.
 */
export const SYMBOL_WARM_UP_US = (86_400 + 2) * 1_000_000;

/** Length of the pre-scan's time buckets, µs (cuts and windows start on them). */
export const MINUTE_US = 60_000_000;

/** A record's place in the inputs: input index, line (1-based, as the readers number them), and its rank in reading order. */
export interface Position {
  input: number;
  line: number;
  /** 0-based index among every record read, in reading order. */
  order: number;
}

/** A metadata event of the inputs, with its place. */
export interface PlacedEvent {
  at: Position;
  event: XrateEvent;
}

/** What one pass over the inputs keeps (see the module description). */
export class PrescanStats {
  /** Records with a readable time. */
  events = 0;
  first = Number.POSITIVE_INFINITY;
  last = Number.NEGATIVE_INFINITY;
  /** By minute index: first position in reading order, latest time read before that position. */
  readonly firstAt = new Map<number, Position>();
  readonly clockBefore = new Map<number, number>();
  readonly metadata: PlacedEvent[] = [];
  /** Each symbol id named by a record, with the order of the first such record. */
  readonly symbols = new Map<string, number>();
  private order = 0;
  private latest = Number.NEGATIVE_INFINITY;
  private readonly counts = new Map<number, number>();
  /** The minute of the last record, and the records of it in a row not yet in `counts`. */
  private runMinute = Number.NaN;
  private run = 0;

  /** By minute index: the events of that minute. */
  get count(): ReadonlyMap<number, number> {
    if (this.run > 0) {
      this.counts.set(this.runMinute, (this.counts.get(this.runMinute) ?? 0) + this.run);
      this.run = 0;
    }
    return this.counts;
  }

  /**
   * Takes one record: its time (µs; undefined when it has none readable), the event when it is
   * metadata, and the symbol id it names.
   */
  add(input: number, line: number, time: number | undefined, metadata?: XrateEvent, symbolId?: string): void {
    const order = this.order++;
    if (time === undefined) return;
    if (symbolId !== undefined && !this.symbols.has(symbolId)) this.symbols.set(symbolId, order);
    const minute = Math.floor(time / MINUTE_US);
    this.events++;
    if (time < this.first) this.first = time;
    if (time > this.last) this.last = time;
    // Records of one minute in a row (the usual case) are counted together; the first of a run
    // that is not the minute's first finds it in firstAt.
    if (minute === this.runMinute) this.run++;
    else {
      if (this.run > 0) this.counts.set(this.runMinute, (this.counts.get(this.runMinute) ?? 0) + this.run);
      this.runMinute = minute;
      this.run = 1;
      if (!this.firstAt.has(minute)) {
        this.firstAt.set(minute, { input, line, order });
        this.clockBefore.set(minute, this.latest);
      }
    }
    if (metadata) this.metadata.push({ at: { input, line, order }, event: metadata });
    if (time > this.latest) this.latest = time;
  }

  /** What this scan found, as plain data (`lines`: the lines it read), for {@link append}. */
  part(lines: number): PrescanPart {
    return {
      lines,
      records: this.order,
      events: this.events,
      first: this.first,
      last: this.last,
      latest: this.latest,
      count: [...this.count],
      firstAt: [...this.firstAt],
      clockBefore: [...this.clockBefore],
      metadata: this.metadata,
      symbols: [...this.symbols],
    };
  }

  /**
   * Takes the scan of the part of an input read right after everything taken so far, in the same
   * input: its records come after this scan's in reading order, its lines are numbered on from
   * `lineOffset`. The stats are then those of one scan of both.
   */
  append(part: PrescanPart, lineOffset: number): void {
    const orderOffset = this.order;
    const at = (p: Position): Position => ({ input: p.input, line: p.line + lineOffset, order: p.order + orderOffset });
    const counts = this.count as Map<number, number>;
    for (const [m, n] of part.count) counts.set(m, (counts.get(m) ?? 0) + n);
    const clock = new Map(part.clockBefore);
    for (const [m, p] of part.firstAt) {
      if (this.firstAt.has(m)) continue;
      this.firstAt.set(m, at(p));
      this.clockBefore.set(m, Math.max(this.latest, clock.get(m)!));
    }
    for (const p of part.metadata) this.metadata.push({ at: at(p.at), event: p.event });
    for (const [id, order] of part.symbols) if (!this.symbols.has(id)) this.symbols.set(id, order + orderOffset);
    this.events += part.events;
    this.first = Math.min(this.first, part.first);
    this.last = Math.max(this.last, part.last);
    this.latest = Math.max(this.latest, part.latest);
    this.order += part.records;
  }
}

/** A {@link PrescanStats} of part of an input, as plain data (see {@link PrescanStats.part}). */
export interface PrescanPart {
  lines: number;
  records: number;
  events: number;
  first: number;
  last: number;
  latest: number;
  count: [number, number][];
  firstAt: [number, Position][];
  clockBefore: [number, number][];
  metadata: PlacedEvent[];
  symbols: [string, number][];
}

/**
 * Reads every input once into {@link PrescanStats}.
 *
 * @example
 * ```ts
 * const stats = await prescan(['a.ndjson', 'b.ndjson.gz']);
 * planPartitions(stats, 2, warmUpUs(resolveConfig({})));
 * ```
 */
export async function prescan(inputs: readonly string[], opts: PrescanOptions = {}): Promise<PrescanStats> {
  const stats = new PrescanStats();
  for (let i = 0; i < inputs.length; i++) {
    const format = opts.format ?? detectFormat(inputs[i]);
    if (format === 'ndjson') {
      await scanNdjsonHalves(inputs[i], i, stats, opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, opts.splitBytes ?? SPLIT_BYTES);
      continue;
    }
    if (format === 'parquet') {
      await scanParquetHalves(inputs[i], i, stats, opts.splitBytes ?? SPLIT_BYTES);
      continue;
    }
    const src = openSource(inputs[i], opts);
    try {
      for await (const batch of src.batches()) {
        for (const rec of batch) {
          const { time, metadata, symbolId } = recordTime(rec);
          stats.add(i, rec.line, time, metadata, symbolId);
        }
      }
    } finally {
      src.close();
    }
  }
  return stats;
}

/**
 * The pre-scan of a Parquet event log, from its columnar batches: a quote's or a trade's time and
 * symbol read from their columns, as the record reader would give them (parquetRead.ts
 * `openParquetSource`), without an object per row; other rows (metadata, rejects) as records.
 * With `slice`, only those row groups (their rows' order counted from 0, for
 * {@link PrescanStats.append}); `afterBatch` runs after each row group's.
 */
export async function scanParquet(
  path: string,
  input: number,
  stats: PrescanStats,
  slice?: RowGroupSlice,
  afterBatch?: () => void,
): Promise<void> {
  // Each row group's batch is built on the buffer of the one before (megabytes each); a quote's
  // or trade's values and raw text are not read.
  const pool = new BufferPool();
  const src = openParquetBatches(path, { slice, pool, timesOnly: true });
  try {
    for await (const b of src.batches()) {
      for (let r = 0; r < b.length; r++) {
        const k = b.kind[r];
        if (k === ROW_QUOTE || k === ROW_TRADE) stats.add(input, b.line[r], b.time[r], undefined, b.symbols[b.symbol[r]]);
        else {
          const { time, metadata, symbolId } = recordTime(recordAt(b, r));
          stats.add(input, b.line[r], time, metadata, symbolId);
        }
      }
      for (const buf of batchTransferList(b)) pool.put(buf);
      afterBatch?.();
    }
  } finally {
    src.close();
  }
}

/** Options of {@link prescan}. */
export type PrescanOptions = Omit<OpenSourceOptions, 'startLine'> & {
  /**
   * A plain NDJSON or a Parquet input of at least this many bytes is scanned in two parts at once:
   * NDJSON's second in a worker thread, Parquet's two halves of row groups each in one (when the
   * compiled worker module is there; default {@link SPLIT_BYTES}).
   */
  splitBytes?: number;
};

/** The compiled module of the pre-scan's worker thread (prescanWorker.ts). */
const PRESCAN_WORKER = new URL('./prescanWorker.js', import.meta.url);

/** A part of an input for the pre-scan's worker thread: a range of an NDJSON file's bytes, or a slice of a Parquet file's row groups. */
export type PrescanJob = ({ kind: 'ndjson' } & PrescanRange) | { kind: 'parquet'; path: string; input: number; slice: RowGroupSlice };

/** `job` scanned in a worker thread: its {@link PrescanPart}, and the thread to terminate once done with. */
function scanInWorker(job: PrescanJob): { part: Promise<PrescanPart>; worker: Worker } {
  const worker = new Worker(PRESCAN_WORKER, { workerData: job, resourceLimits: IO_WORKER_LIMITS });
  const part = new Promise<PrescanPart>((resolve, reject) => {
    worker.once('message', (m: { part?: PrescanPart; error?: string; code?: ErrorCode }) =>
      m.part ? resolve(m.part) : reject(m.code ? new XrateError(m.code, m.error ?? '') : new Error(m.error)),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new XrateError('failed', `the pre-scan's worker stopped (exit code ${code})`)));
  });
  return { part, worker };
}

/**
 * The pre-scan of a Parquet event log: a large one (`splitBytes`) as two halves of its row groups,
 * each in a worker thread, appended in order; this thread reads no row group then, nor the footer.
 */
async function scanParquetHalves(path: string, input: number, stats: PrescanStats, splitBytes: number): Promise<void> {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (e) {
    throw new XrateError('input', `cannot open event log "${path}": ${(e as Error).message}`);
  }
  if (size < splitBytes || !existsSync(fileURLToPath(PRESCAN_WORKER))) {
    await scanParquet(path, input, stats);
    return;
  }
  const halves = [0, 1].map((index) => scanInWorker({ kind: 'parquet', path, input, slice: { index, count: 2 } }));
  try {
    // Both awaited at once: a failure of either is the scan's.
    const [first, second] = await Promise.all(halves.map((h) => h.part));
    stats.append(first, 0);
    stats.append(second, 0);
  } finally {
    await Promise.all(halves.map((h) => h.worker.terminate()));
  }
}

/** See {@link PrescanOptions.splitBytes}: below this, a worker thread costs more than it saves. */
export const SPLIT_BYTES = 32 << 20;

/**
 * The NDJSON pre-scan of one input: its bytes through an {@link NdjsonScanner} (lines as the
 * reader splits them, each one's time read in place); a large plain file in two parts at once
 * ({@link PrescanOptions.splitBytes}), the second one's scan appended to the first's.
 */
async function scanNdjsonHalves(path: string, input: number, stats: PrescanStats, maxLineBytes: number, splitBytes: number): Promise<void> {
  const gzip = path.toLowerCase().endsWith('.gz');
  const mid = gzip || statSync(path).size < splitBytes || !existsSync(fileURLToPath(PRESCAN_WORKER)) ? undefined : lineStartNear(path);
  if (mid === undefined) {
    await scanNdjsonRange(path, input, stats, maxLineBytes);
    return;
  }
  const second = scanInWorker({ kind: 'ndjson', path, input, maxLineBytes, start: mid });
  // The first part here meanwhile; a failure of either is the scan's.
  try {
    const [lines, part] = await Promise.all([scanNdjsonRange(path, input, stats, maxLineBytes, 0, mid), second.part]);
    stats.append(part, lines);
  } finally {
    await second.worker.terminate();
  }
}

/**
 * Where the worker thread's part of a split scan starts, as a fraction of the file: past the
 * middle, as the worker starts later (loading its modules: about 0.1 s on the 20-day log, whose
 * halves take 0.5 s each).
 */
const SECOND_PART_FROM = 0.56;

/** The byte after the first newline from {@link SECOND_PART_FROM} of the file `path` (undefined: none, or at the end). */
function lineStartNear(path: string): number | undefined {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(1 << 16);
    for (let at = Math.floor(size * SECOND_PART_FROM); at < size; at += buf.length) {
      const n = readSync(fd, buf, 0, buf.length, at);
      const nl = buf.subarray(0, n).indexOf(10);
      if (nl >= 0) return at + nl + 1 < size ? at + nl + 1 : undefined;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** A part of an NDJSON input to scan: its bytes from `start` (a line's first) to `end` (just after a newline; default the end). */
export interface PrescanRange {
  path: string;
  input: number;
  maxLineBytes: number;
  start?: number;
  end?: number;
}

/**
 * Scans the lines of `path` in [start, end) into `stats` (`start` a line's first byte, `end` just
 * after a newline or the end of the file), numbering them from 1 (gzip: the whole file); resolves
 * to the number of lines.
 */
export async function scanNdjsonRange(
  path: string,
  input: number,
  stats: PrescanStats,
  maxLineBytes: number,
  start?: number,
  end?: number,
): Promise<number> {
  const gzip = path.toLowerCase().endsWith('.gz');
  const scan = new NdjsonScanner(input, stats, maxLineBytes);
  if (gzip || (start === undefined && end === undefined)) {
    const stream = openTextStream(path, gzip);
    try {
      for await (const chunk of stream.bytes()) scan.push(chunk);
    } finally {
      stream.close();
    }
  } else {
    // end - 1: the stream's end is inclusive.
    const file = createReadStream(path, { start, end: end === undefined ? undefined : end - 1, highWaterMark: 1 << 20 });
    try {
      for await (const chunk of file as AsyncIterable<Buffer>) scan.push(chunk);
    } catch (e) {
      throw new XrateError('input', `cannot read "${path}": ${(e as Error).message}`);
    } finally {
      file.destroy();
    }
  }
  scan.end();
  return scan.lineCount;
}

/**
 * What an event of a partition's warm-up costs against one of its span: it is read and applied,
 * but writes nothing (measured on a 20-day log: about half).
 */
export const WARM_UP_COST = 0.5;

/** Index of the first of the sorted `xs` at or above `x` (xs.length: none). */
function lowerBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * At most `n` - 1 cuts at minute starts after `firstTick`, such that the largest partition cost is
 * as small as it can be; a partition's cost is the events of its span, plus {@link WARM_UP_COST}
 * times those of its warm-up window (`warmUpUs` before its cut, `lastWarmUpUs` for the last, from
 * the start of that window's minute). Greedy cuts under a cost cap (each as late as the cap allows: a later cut
 * also moves the next window on), the cap found by bisection.
 *
 * @param minutes - minute indices with events, ascending; `counts` their events
 */
export function costCuts(
  minutes: readonly number[],
  counts: readonly number[],
  n: number,
  warmUpUs: number,
  lastWarmUpUs: number,
  firstTick: number,
): number[] {
  const cum = [0];
  for (const c of counts) cum.push(cum[cum.length - 1] + c);
  const total = cum[cum.length - 1];
  /** Events before the minute of time t (its window's first minute). */
  const before = (t: number): number => cum[lowerBound(minutes, Math.floor(t / MINUTE_US))];
  const greedy = (cap: number): number[] | undefined => {
    const cuts: number[] = [];
    // The partition being placed: its span starts at events `from`, its warm-up costs `warm`.
    let from = 0;
    let warm = 0;
    let j = 0;
    for (let k = 1; k < n; k++) {
      // The latest minute start whose span before it, with the warm-up, fits under the cap.
      let best = -1;
      for (let i = Math.max(j, 1); i < minutes.length && cum[i] - from + warm <= cap; i++) {
        if (minutes[i] * MINUTE_US > firstTick && (cuts.length === 0 || minutes[i] * MINUTE_US > cuts[cuts.length - 1])) best = i;
      }
      if (best < 0) break;
      const cut = minutes[best] * MINUTE_US;
      cuts.push(cut);
      j = best + 1;
      from = cum[best];
      warm = WARM_UP_COST * (from - before(cut - (k === n - 1 ? lastWarmUpUs : warmUpUs)));
    }
    // The last partition (from the last cut, with the last one's warm-up) must fit too.
    if (cuts.length > 0) warm = WARM_UP_COST * (from - before(cuts[cuts.length - 1] - lastWarmUpUs));
    return total - from + warm <= cap ? cuts : undefined;
  };
  // Costs are multiples of WARM_UP_COST (a half): bisect over whole halves.
  let lo = Math.floor((2 * total) / n);
  let hi = 2 * total;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (greedy(mid / 2) !== undefined) hi = mid;
    else lo = mid + 1;
  }
  return greedy(hi / 2) ?? [];
}

/** One partition of a plan. */
export interface PlannedPartition {
  /** Its cut: the first tick it writes (undefined: the first partition, from the start). */
  from?: number;
  /** Its last instant (the next cut - 1 µs): it applies no event after it (undefined: the last, to the end). */
  to?: number;
  /** The first record it reads (the first, in reading order, of its warm-up window). */
  start: Position;
  /** The `exchange` and `symbol` events before `start`, in reading order. */
  metadata: PlacedEvent[];
  /** The latest event time read before `start` (undefined when none). */
  clockUs?: number;
  /** The symbol ids named before `start`, in order of first sight: the markets a serial replay knows there. */
  markets: string[];
}

/**
 * Cuts the scanned inputs into at most `n` partitions of about equal numbers of events, at minute
 * boundaries, each with a warm-up window of at least `warmUpUs` (rounded down to a minute); the
 * last one's is `lastWarmUpUs`, whose final engine answers for the end of the replay (symbol
 * records: {@link SYMBOL_WARM_UP_US}). With `cuts` (ticks in µs: ascending whole seconds after
 * the first tick) the partitions are cut there instead, and `n` is not used.
 *
 * @throws XrateError on a cut that is not such a tick.
 * @example
 * ```ts
 * planPartitions(stats, 4, warmUpUs(resolveConfig({}))).map((p) => p.from);
 * ```
 */
export function planPartitions(
  stats: PrescanStats,
  n: number,
  warmUpUs: number,
  lastWarmUpUs = warmUpUs,
  given?: readonly number[],
): PlannedPartition[] {
  const minutes = [...stats.count.keys()].sort((a, b) => a - b);
  const firstTick = ceilSecond(stats.first);
  given?.forEach((c, i) => {
    if (!Number.isInteger(c / 1e6) || c <= firstTick || (i > 0 && c <= given[i - 1]))
      throw new XrateError('usage', `cut ${c} is not a whole second after the first tick ${firstTick} and after the cut before it`, {
        field: 'cuts',
      });
  });
  const cuts = given
    ? [...given]
    : costCuts(
        minutes,
        minutes.map((m) => stats.count.get(m) ?? 0),
        n,
        warmUpUs,
        lastWarmUpUs,
        firstTick,
      );
  // Suffix minimum of the minutes' first positions: the first record at or after each minute.
  const firstFrom = new Map<number, Position>();
  let best: Position | undefined;
  for (let i = minutes.length - 1; i >= 0; i--) {
    const at = stats.firstAt.get(minutes[i])!;
    if (best === undefined || at.order < best.order) best = at;
    firstFrom.set(minutes[i], best);
  }
  const origin: Position = { input: 0, line: 0, order: -1 };
  return [undefined, ...cuts].map((from, i) => {
    const to = i < cuts.length ? cuts[i] - 1 : undefined;
    if (from === undefined) return { to, start: origin, metadata: [], markets: [] };
    const windowMinute = Math.floor((from - (i === cuts.length ? lastWarmUpUs : warmUpUs)) / MINUTE_US);
    const m = minutes.find((x) => x >= windowMinute);
    const start = m === undefined ? origin : firstFrom.get(m)!;
    if (start.order <= 0) return { from, to, start: origin, metadata: [], markets: [] };
    const minuteOfStart = minutes.find((x) => stats.firstAt.get(x)!.order === start.order)!;
    const clock = stats.clockBefore.get(minuteOfStart)!;
    return {
      from,
      to,
      start,
      metadata: stats.metadata.filter((p) => p.at.order < start.order),
      markets: [...stats.symbols].filter(([, order]) => order < start.order).map(([id]) => id),
      ...(clock > Number.NEGATIVE_INFINITY && { clockUs: clock }),
    };
  });
}
