/**
 * A replay in partitions (docs/parallel.md): pre-scan, partitions replayed at once into databases
 * of their own (phase 1), again for those that must track more pairs (phase 2), then merged into
 * the target database with its run row and final engine; outputs equal a serial replay's.
 *
 * How a partition runs is the caller's: in this process ({@link runPartitionHere}), in a worker
 * thread (`xrate replay --workers N`), or on another machine.
 *
 * @module
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { resolveConfig } from '../core/config.js';
import { type Engine, restoreEngine } from '../core/engine.js';
import { type InputWatch, watchInputs } from '../io/inputWatch.js';
import { flatList, listedInputs } from '../io/inputs.js';
import { RateFileWriter } from '../io/rateFile.js';
import { FileSpill } from '../io/binSpill.js';
import { collectNow } from '../io/heapBudget.js';
import { DROPPED, type UnpackOptions } from '../io/snapshotBlob.js';
import { ReplayStore, SMALL_PAGE_CACHE_KB } from '../io/store.js';
import type { ReplayCheckpoint } from '../io/storeTypes.js';
import { completedRun } from './ingest.js';
import { mergeFinalSnapshot, missingTracks, NO_BINS, warmUpUs } from './partition.js';
import { MINUTE_US, type PlannedPartition, planPartitions, type PrescanStats, prescan, SYMBOL_WARM_UP_US } from './prescan.js';
import { carriedDifferences, reportPositions, reporters } from './carried.js';
import { validateReplayOptions } from './options.js';
import type { CarriedState, PartitionStart } from './partitionRun.js';
import { type ReplayOptions, replay } from './replay.js';
import { addCounts, mergedTotals, noOwnedCounts, type OwnedTotals, runSummary, type ReplaySummary } from './summary.js';
import { type ErrorCode, messageOf, reportedCode, XrateError } from '../core/errors.js';

/** One partition to replay: the replay's options for it (all plain data: it may travel). */
export type PartitionJob = Pick<
  ReplayOptions,
  'inputs' | 'format' | 'config' | 'track' | 'periods' | 'ownMetrics' | 'maxLineBytes' | 'batchSize' | 'from' | 'to' | 'heapBudget'
> & {
  /** Its index, and the database it writes. */
  index: number;
  db: string;
  partition: PartitionStart;
};

/** What a partition reports. */
export interface PartitionResult {
  owned: OwnedTotals;
  trackedAtCut: string[];
  /** Records it read (its warm-up's included), for progress. */
  eventsRead: number;
  /** The state at the first records of the later windows it was asked about ({@link PartitionStart.reportAt}). */
  carried?: CarriedState[];
}

/**
 * Runs one partition somewhere and resolves with what it reports; `progress`, when given, is told
 * the records the partition has read so far, now and then.
 */
export type PartitionRunner = (job: PartitionJob, progress?: (eventsRead: number) => void) => Promise<PartitionResult>;

/** Runs a partition with {@link replay} in this process. */
export const runPartitionHere: PartitionRunner = async (job, progress) => {
  const { index: _index, ...opts } = job;
  const s = await replay({ ...opts, onProgress: progress && ((p) => progress(p.eventsRead)) });
  return { owned: s.owned!, trackedAtCut: s.trackedAtCut ?? [], eventsRead: s.eventsRead, carried: s.carried };
};

/**
 * `resourceLimits` of a partition's worker thread: a young generation of 8 MB, where V8 sizes a
 * main thread's for a process alone (up to 3 × 16 MB here). Partitions run at once, each with its
 * engine, readers and writer; with this and small page caches (storeTypes.ts
 * `SMALL_PAGE_CACHE_KB`), `--workers 2` at 100 M events peaked at 231-248 MB, against 313-323 MB
 * (docs/performance.md).
 */
export const PARTITION_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 8 };

/**
 * The heap budget's floor in a partition's worker thread, MB (src/io/heapBudget.ts; `xrate
 * replay`'s is 64): two partitions run at once, each keeping 13-20 MB alive. From a Parquet log of
 * 100 M events, their stage ran at 227-243 MB of RSS with it, 245-285 MB with 64
 * (docs/performance.md).
 */
export const PARTITION_HEAP_FLOOR_MB = 32;

/**
 * Runs a partition in a worker thread of its own (partitionWorker.ts; the compiled module beside
 * this one, as the built `xrate` command runs: not from the TypeScript sources). A partition that
 * fails rejects with its message.
 */
export const runPartitionInWorker: PartitionRunner = (job, progress) => {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./partitionWorker.js', import.meta.url), {
      workerData: { job, progress: !!progress },
      resourceLimits: PARTITION_WORKER_LIMITS,
    });
    let settled = false;
    worker.on('message', (m: WorkerMessage) => {
      if (m.progress !== undefined) {
        progress?.(m.progress);
        return;
      }
      settled = true;
      if (m.result) resolve(m.result);
      else reject(m.code ? new XrateError(m.code, m.error ?? '') : new Error(m.error ?? `partition ${job.index} failed`));
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new XrateError('failed', `partition ${job.index} stopped (exit code ${code}) before it finished`));
    });
  });
};

/** What the worker thread of {@link runPartitionInWorker} posts: progress, then a result or an error. */
export interface WorkerMessage {
  progress?: number;
  result?: PartitionResult;
  error?: string;
  /** The code of the error, when it is an XrateError. */
  code?: ErrorCode;
}

/** Where a partitioned replay is (see {@link ParallelOptions.onProgress}). */
export interface ParallelProgress {
  /**
   * `prescan`: reading the inputs once; `partitions`: phase 1; `recarry`: partitions run again with
   * the state a serial replay carries into them; `retrack`: phase 2; `merge`.
   */
  stage: 'prescan' | 'partitions' | 'recarry' | 'retrack' | 'merge';
  /** Partitions of the stage, and those done. */
  partitions: number;
  done: number;
  /** Records read by the stage's partitions so far, and what they will read in all (from the pre-scan). */
  eventsRead: number;
  eventsToRead: number;
  /** Since the run started, and since the stage started. */
  elapsedMs: number;
  stageElapsedMs: number;
}

/** Options of {@link replayParallel}. */
export interface ParallelOptions
  extends Pick<
    ReplayOptions,
    'inputs' | 'listed' | 'format' | 'config' | 'track' | 'periods' | 'ownMetrics' | 'maxLineBytes' | 'batchSize' | 'now' | 'heapBudget'
  > {
  /** The target database (or `out`). */
  db?: string;
  /**
   * Instead of `db`: the rate changes to this file, .ndjson or .csv, as `replay({ out })` writes
   * them (the partitions are merged into a database beside it first, removed at the end).
   */
  out?: string;
  /** Partitions run at once, and the number of partitions (unless `cuts` are given). */
  workers: number;
  /**
   * Where to cut, instead of the planner's cuts: ticks in µs, ascending whole seconds after the
   * first tick (`cuts.length` + 1 partitions). For checks at cuts of one's choosing.
   */
  cuts?: readonly number[];
  /** Runs one partition (default: {@link runPartitionHere}). */
  run?: PartitionRunner;
  /** Told when a partition is done (phase 1 or 2). */
  onPartitionDone?: (job: PartitionJob, result: PartitionResult) => void;
  /** Told where the run is, at most every `progressEveryMs` (default 200) and at each stage's start and end. */
  onProgress?: (p: ParallelProgress) => void;
  progressEveryMs?: number;
}

/**
 * Runs `jobs` with at most `n` at once; results in job order. After a failure no job starts; the
 * running ones are waited for, then the first failure is thrown.
 */
async function pool<T, R>(jobs: readonly T[], n: number, f: (job: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(jobs.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < jobs.length && !failed) {
      const i = next++;
      try {
        out[i] = await f(jobs[i]);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, lane));
  if (failed) throw failed.error;
  return out;
}

/**
 * Replays `inputs` in partitions into `db` (see the module description); the summary is a serial
 * replay's, its engine the merged final engine.
 *
 * @example
 * ```ts
 * const s = await replayParallel({ inputs: ['month.ndjson.gz'], db: 'out/xrate.sqlite', workers: 2 });
 * s.engine.rate('BTC', 'USD');
 * ```
 */
export async function replayParallel(given: ParallelOptions): Promise<ReplaySummary> {
  // The options of a partitioned replay only (src/replay/options.ts: the command line's check too).
  validateReplayOptions(given, 'partitioned');
  if (given.db === undefined && given.out === undefined) throw new XrateError('usage', 'give either db or out to replayParallel');
  // Directories stand for the files under them (src/io/inputs.ts), as in a serial replay.
  const each = listedInputs(given);
  const opts: ParallelOptions = { ...given, inputs: flatList(each), listed: undefined };
  // What the partitions rely on in the inputs, checked before they are merged (src/io/inputWatch.ts).
  const watch = watchInputs(given.inputs, each);
  if (opts.out !== undefined) return replayParallelToFile(opts, opts.out, watch);
  return replayParallelInto(opts, opts.db!, watch);
}

/** {@link replayParallel} with `out`: merged into a database beside `out`, whose rate changes are then written to `out`. */
async function replayParallelToFile(opts: ParallelOptions, out: string, watch: InputWatch): Promise<ReplaySummary> {
  const db = `${out}.partitions.sqlite`;
  removeDb(db);
  try {
    const summary = await replayParallelInto(opts, db, watch);
    const store = ReplayStore.open(db);
    const file = new RateFileWriter(out);
    try {
      let n = 0;
      for (const c of store.rateChanges()) {
        file.write(c);
        if (++n % 4096 === 0) await file.drained();
      }
    } finally {
      store.close();
      await file.close();
    }
    return summary;
  } finally {
    removeDb(db);
  }
}

/**
 * With the heap budget (the process is the replay's), a full collection between a partitioned
 * replay's stages: what each stage leaves is freed before the next one's buffers are made, instead
 * of when the heap's size calls a collection.
 */
function collectBetweenStages(opts: Pick<ParallelOptions, 'heapBudget'>): void {
  if (opts.heapBudget) collectNow();
}

/** {@link replayParallel} into the database `target`. */
async function replayParallelInto(given: ParallelOptions, target: string, watch: InputWatch): Promise<ReplaySummary> {
  const opts: IntoOptions = { ...given, db: target, out: undefined };
  const now = opts.now ?? (() => Date.now());
  const started = now();
  const run = opts.run ?? runPartitionHere;
  const config = resolveConfig(opts.config ?? {});
  const H = warmUpUs(config);
  const report = progressReporter(opts, started, now);
  report.stage('prescan', []);
  const stats = await prescan(opts.inputs, { format: opts.format, maxLineBytes: opts.maxLineBytes }).catch((e: Error) => {
    throw new XrateError(reportedCode(e, 'failed'), `reading the inputs to plan the partitions failed: ${e.message}`, { cause: e });
  });
  const plan = planPartitions(stats, Math.max(1, opts.workers), H, Math.max(H, SYMBOL_WARM_UP_US), opts.cuts);
  // What the pre-scan left is freed before the partitions start.
  collectBetweenStages(opts);
  const common = {
    inputs: opts.inputs,
    format: opts.format,
    config: opts.config,
    track: opts.track,
    periods: opts.periods,
    // On by default: a partitioned replay writes a database.
    ownMetrics: opts.ownMetrics ?? true,
    maxLineBytes: opts.maxLineBytes,
    batchSize: opts.batchSize,
  };
  const by = reporters(plan.map((p) => p.start));
  const jobs: PartitionJob[] = plan.map((p, k) => {
    const reportAt = reportPositions(
      plan.map((q) => q.start),
      by,
      k,
    );
    return {
      ...common,
      index: k,
      db: `${opts.db}.part-${k}`,
      from: p.from,
      to: p.to,
      partition: {
        start: p.start,
        metadata: p.metadata.map((m) => m.event),
        clockUs: p.clockUs,
        markets: p.markets,
        ...(reportAt.length > 0 && { reportAt }),
        // The final engine's trade bins are the last partition's (`finish`).
        ...(k < plan.length - 1 && { finalBins: false }),
      },
    };
  });
  const toRead = plan.map((p) => eventsToRead(stats, p));
  const done = async (job: PartitionJob): Promise<PartitionResult> => {
    let r: PartitionResult;
    try {
      r = await run(job, (n) => report.read(job.index, n));
    } catch (e) {
      throw new XrateError(
        reportedCode(e, 'failed'),
        `partition ${job.index + 1} of ${jobs.length} (${spanOf(job)}) failed: ${messageOf(e)}`,
        { cause: e },
      );
    }
    report.done(job.index);
    opts.onPartitionDone?.(job, r);
    return r;
  };
  try {
    report.stage('partitions', toRead);
    const results = await pool(jobs, opts.workers, done);
    // The carried state, checked against what the partition before saw (docs/parallel.md,
    // "Carried state checked"): a partition given another is run again, in order, since its own
    // report may correct the next one's.
    for (let k = 1; k < jobs.length; k++) {
      const j = by[k];
      const start = jobs[k].partition.start;
      const seen = j < 0 ? undefined : results[j].carried?.find((c) => c.at.input === start.input && c.at.line === start.line);
      if (!seen || carriedDifferences(jobs[k].partition, seen, opts.config ?? {}).length === 0) continue;
      report.stage(
        'recarry',
        toRead.map((n, i) => (i === k ? n : 0)),
      );
      removeDb(jobs[k].db);
      jobs[k] = { ...jobs[k], partition: { ...jobs[k].partition, metadata: seen.metadata, clockUs: seen.clockUs, markets: seen.markets } };
      results[k] = await done(jobs[k]);
    }
    // Phase 2: auto-tracked pairs a partition missed at its cut (docs/parallel.md, "Tracked pairs").
    if (opts.track === undefined) {
      const again = retrackJobs(jobs, results);
      if (again.length > 0)
        report.stage(
          'retrack',
          toRead.map((n, k) => (again.some((j) => j.index === k) ? n : 0)),
        );
      const rerun = await pool(again, opts.workers, done);
      again.forEach((job, i) => {
        jobs[job.index] = job;
        results[job.index] = rerun[i];
      });
    }
    // An input that changed while the partitions read it: nothing is merged.
    watch.check();
    report.stage('merge', []);
    return finish(opts, jobs, results, started, now);
  } finally {
    // The partitions' databases, and any a dead attempt left (src/distributed/queue.ts).
    const dir = dirname(opts.db);
    const prefix = `${basename(opts.db)}.part-`;
    for (const f of readdirSync(dir)) if (f.startsWith(prefix)) rmSync(join(dir, f), { force: true });
  }
}

/** A partition's span of event time, for messages. */
function spanOf(job: PartitionJob): string {
  const t = (us: number | undefined, none: string): string => (us === undefined ? none : new Date(Math.floor(us / 1000)).toISOString());
  return `event time ${t(job.from, 'start')} to ${t(job.to === undefined ? undefined : job.to + 1, 'end')}`;
}

/** The records partition `p` reads, by the pre-scan: those of the minutes from its first record to its end. */
function eventsToRead(stats: PrescanStats, p: PlannedPartition): number {
  let n = 0;
  for (const [minute, count] of stats.count) {
    const at = stats.firstAt.get(minute);
    if (at !== undefined && at.order >= p.start.order && (p.to === undefined || minute * MINUTE_US <= p.to)) n += count;
  }
  return n;
}

/** Sums the partitions' progress into {@link ParallelProgress} reports. */
function progressReporter(opts: ParallelOptions, started: number, now: () => number) {
  let stage: ParallelProgress['stage'] = 'prescan';
  let read: number[] = [];
  let total: number[] = [];
  let done = 0;
  let stageStart = started;
  let last = Number.NEGATIVE_INFINITY;
  const every = opts.progressEveryMs ?? 200;
  const emit = (force: boolean): void => {
    if (!opts.onProgress) return;
    const t = now();
    if (!force && t - last < every) return;
    last = t;
    const sum = (a: number[]): number => a.reduce((x, y) => x + y, 0);
    opts.onProgress({
      stage,
      partitions: total.filter((n) => n > 0).length,
      done,
      eventsRead: sum(read),
      eventsToRead: sum(total),
      elapsedMs: t - started,
      stageElapsedMs: t - stageStart,
    });
  };
  return {
    stage(s: ParallelProgress['stage'], toRead: number[]): void {
      stage = s;
      stageStart = now();
      total = toRead;
      read = toRead.map(() => 0);
      done = 0;
      emit(true);
    },
    read(index: number, n: number): void {
      read[index] = Math.min(n, total[index] ?? n);
      emit(false);
    },
    done(index: number): void {
      read[index] = total[index] ?? read[index];
      done++;
      emit(true);
    },
  };
}

/**
 * For each partition database (in partition order), the pairs a serial replay tracks at its cut
 * that it did not track there (`trackedAtCut`): {@link missingTracks} over the pairs each database
 * gives a rate.
 */
export function missingTracksOf(dbs: readonly string[], trackedAtCut: readonly (readonly string[])[]): string[][] {
  const withRate = dbs.map((db) => {
    // Read only, as every read of a partition's database here ({@link finalSnapshot}).
    const store = ReplayStore.open(db, { readonly: true });
    try {
      return store.pairsWithRate();
    } finally {
      store.close();
    }
  });
  return missingTracks(withRate, trackedAtCut);
}

/** The partitions to run again, each with the pairs a serial replay tracks at its cut that it did not ({@link missingTracksOf}). */
function retrackJobs(jobs: readonly PartitionJob[], results: readonly PartitionResult[]): PartitionJob[] {
  const missing = missingTracksOf(
    jobs.map((j) => j.db),
    results.map((r) => r.trackedAtCut),
  );
  const again: PartitionJob[] = [];
  jobs.forEach((job, k) => {
    if (missing[k].length === 0) return;
    removeDb(job.db);
    again.push({ ...job, partition: { ...job.partition, track: missing[k] } });
  });
  return again;
}

/** {@link ParallelOptions} with the target database. */
type IntoOptions = ParallelOptions & { db: string };

/** Merges the partitions into the target: outputs, run row, final snapshot; the summary. */
function finish(
  opts: IntoOptions,
  jobs: readonly PartitionJob[],
  results: readonly PartitionResult[],
  started: number,
  now: () => number,
): ReplaySummary {
  // Every partition's final snapshot without its trade bins (their large strings not read): the
  // final engine's are the last partition's, read once the rows are merged (below), so that a day
  // of a dense log's bins is not held while they are.
  const snapshots = jobs.map((j) => finalSnapshot(j, false));
  const last = snapshots[snapshots.length - 1];
  const final = mergeFinalSnapshot(
    last.engine,
    snapshots.slice(0, -1).map((s) => s.engine),
  );
  const lastJob = jobs[jobs.length - 1];
  const collect = (): void => collectBetweenStages(opts);
  // The last partition's bins, read into temporary files (a day of a dense log's is tens of
  // megabytes), from which the final snapshot is written and its engine restored.
  const binsOnDisk = new FileSpill();
  const lastBins = (): void => {
    if (final.symbols) final.symbols.bins = finalSnapshot(lastJob, true, binsOnDisk).engine.symbols?.bins ?? NO_BINS;
  };

  const owned = results.reduce((a, r) => addCounts(a, r.owned), noOwnedCounts());
  // A new database: the first partition's becomes it (its rows are already the first ones), merged
  // in place and given the target's name once complete, so the merge needs no journal: a failure
  // leaves no database. An existing one keeps what is not output (its keys, its earlier runs):
  // every partition is copied in.
  const fresh = !existsSync(opts.db);
  // The last partition's database is the target's when it is the only one: its snapshot goes as
  // the target adopts it, so its bins are read before.
  const lastIsTarget = fresh && jobs.length === 1;
  const into = fresh ? jobs[0].db : opts.db;
  const target = ReplayStore.open(into, { pageCacheKb: SMALL_PAGE_CACHE_KB });
  let summary: ReplaySummary;
  try {
    const runId = target.beginRun(
      opts.inputs,
      final.config,
      {
        workers: opts.workers,
        track: opts.track,
        periods: opts.periods,
        ownMetrics: opts.ownMetrics ?? true,
        format: opts.format,
        batchSize: opts.batchSize,
      },
      new Date(started).toISOString(),
      false,
    );
    collect();
    if (lastIsTarget) lastBins();
    if (fresh) target.adoptOutputs(runId);
    else target.transaction(() => target.clearOutputs(runId));
    const merge = () => target.mergePartitions((fresh ? jobs.slice(1) : jobs).map((j) => ({ path: j.db, from: j.from })));
    const merged = fresh ? target.unjournaled(merge) : merge();
    if (!lastIsTarget) {
      collect();
      lastBins();
    }
    // The position book is every position and connectivity event of the log, the oldest
    // included, where the last partition's engine only saw its warm-up and span: rebuilt from the
    // merged rows (the same reducer over the same events, in log order).
    const book = target.positions().bookAt();
    if (book.isEmpty) delete final.positions;
    else final.positions = book.toJSON();
    // The final snapshot is saved, then the engine restored from it, once: a day of a dense log's
    // trade bins held as the engine's while the merge ran and the blob was written was a second
    // copy of them at the run's peak.
    collect();
    const saved = now();
    target.transaction(() => target.saveSnapshot(runId, { ...last, engine: final, batch: 0 }, new Date(saved).toISOString()));
    // Its older trade bins on disk as they are restored (src/io/binSpill.ts).
    const engine: Engine = restoreEngine(final, {}, { spill: new FileSpill() });
    const totals = mergedTotals(
      owned,
      { firstTick: snapshots[0].engine.t0 ?? undefined, lastTick: final.lastTick ?? undefined },
      { pairsWithRate: engine.pairs().length, rateChanges: merged.rateChanges, buckets: merged.buckets },
    );
    const ended = now();
    target.finishRun(runId, completedRun(totals, { finishedAt: ended, durationMs: ended - started, stopped: false }));
    summary = runSummary(opts.inputs, totals, engine, { started, ended }, { resumed: false, alreadyComplete: false });
  } finally {
    binsOnDisk.close();
    target.close();
  }
  // Closed, its WAL is checkpointed and gone; were it not, the WAL goes with it.
  if (fresh) {
    for (const f of ['-wal', '-shm']) if (existsSync(into + f)) renameSync(into + f, opts.db + f);
    renameSync(into, opts.db);
  }
  return summary;
}

/**
 * The final snapshot partition `job` left in its database: with `bins`, whole (its large strings
 * packed; into the files of `binsOnDisk`, when given); else without its trade bins, read without
 * reading them (unpackSnapshot `drop`), or whole when it holds another large string.
 */
function finalSnapshot(job: PartitionJob, bins: boolean, binsOnDisk?: FileSpill): ReplayCheckpoint {
  const read = (opts: UnpackOptions): ReplayCheckpoint => {
    // Read only: opened for writing, a partition's database (written without a journal, nor a
    // sync) would be turned into a WAL database, which syncs it: its whole file written out to
    // the disk first (150-210 ms for each half of a 20-day log), though all but the first
    // partition's are deleted once merged.
    const store = ReplayStore.open(job.db, { pageCacheKb: SMALL_PAGE_CACHE_KB, readonly: true });
    try {
      const cp = store.latestSnapshot(undefined, opts);
      if (!cp?.final) throw new XrateError('failed', `partition ${job.index} left no final snapshot in "${job.db}"`);
      if (!bins && cp.engine.symbols) cp.engine.symbols.bins = NO_BINS;
      return cp;
    } finally {
      store.close();
    }
  };
  if (bins) return read({ packed: true, store: binsOnDisk });
  const cp = read({ drop: true });
  return holdsDropped(cp) ? read({ packed: true }) : cp;
}

/** Whether a large string read as {@link DROPPED} is in `value`. */
function holdsDropped(value: unknown): boolean {
  const seen: unknown[] = [value];
  while (seen.length > 0) {
    const v = seen.pop();
    if (v === DROPPED) return true;
    if (v !== null && typeof v === 'object' && !ArrayBuffer.isView(v)) for (const x of Object.values(v)) seen.push(x);
  }
  return false;
}

/** Removes a SQLite database and its journal files. */
export function removeDb(path: string): void {
  for (const f of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) rmSync(f, { force: true });
}
