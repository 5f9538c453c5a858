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
import { existsSync, renameSync, rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { resolveConfig } from '../core/config.js';
import { type Engine, restoreEngine } from '../core/engine.js';
import { ReplayStore } from '../io/store.js';
import { completedRun } from './ingest.js';
import { mergeFinalSnapshot, missingTracks, warmUpUs } from './partition.js';
import { planPartitions, prescan, SYMBOL_WARM_UP_US } from './prescan.js';
import { type OwnedTotals, type PartitionStart, type ReplayOptions, type ReplaySummary, replay } from './replay.js';

/** One partition to replay: the replay's options for it (all plain data: it may travel). */
export type PartitionJob = Pick<
  ReplayOptions,
  'inputs' | 'format' | 'config' | 'track' | 'periods' | 'ownMetrics' | 'maxLineBytes' | 'batchSize' | 'from' | 'to'
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
}

/** Runs a partition with {@link replay} in this process. */
export async function runPartitionHere(job: PartitionJob): Promise<PartitionResult> {
  const { index: _index, ...opts } = job;
  const s = await replay(opts);
  return { owned: s.owned!, trackedAtCut: s.trackedAtCut ?? [], eventsRead: s.eventsRead };
}

/**
 * Runs a partition in a worker thread of its own (partitionWorker.ts; the compiled module beside
 * this one, as the built `xrate` command runs: not from the TypeScript sources). A partition that
 * fails rejects with its message.
 */
export function runPartitionInWorker(job: PartitionJob): Promise<PartitionResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./partitionWorker.js', import.meta.url), { workerData: job });
    let settled = false;
    worker.once('message', (m: { result?: PartitionResult; error?: string }) => {
      settled = true;
      if (m.result) resolve(m.result);
      else reject(new Error(m.error ?? `xrate: partition ${job.index} failed`));
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`xrate: partition ${job.index} stopped (exit code ${code}) before it finished`));
    });
  });
}

/** Options of {@link replayParallel}. */
export interface ParallelOptions
  extends Pick<ReplayOptions, 'inputs' | 'format' | 'config' | 'track' | 'periods' | 'ownMetrics' | 'maxLineBytes' | 'batchSize' | 'now'> {
  /** The target database. */
  db: string;
  /** Partitions run at once, and the number of partitions. */
  workers: number;
  /** Runs one partition (default: {@link runPartitionHere}). */
  run?: (job: PartitionJob) => Promise<PartitionResult>;
  /** Told when a partition is done (phase 1 or 2). */
  onPartitionDone?: (job: PartitionJob, result: PartitionResult) => void;
}

/** Runs `jobs` with at most `n` at once; results in job order. */
async function pool<T, R>(jobs: readonly T[], n: number, f: (job: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(jobs.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await f(jobs[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, lane));
  return out;
}

/** Adds owned counts. */
function addCounts(a: OwnedTotals, b: OwnedTotals): OwnedTotals {
  const byReason = { ...a.rejectsByReason };
  for (const [r, n] of Object.entries(b.rejectsByReason) as [keyof OwnedTotals['rejectsByReason'], number][])
    byReason[r] = (byReason[r] ?? 0) + n;
  return {
    eventsRead: a.eventsRead + b.eventsRead,
    eventsAccepted: a.eventsAccepted + b.eventsAccepted,
    eventsRejected: a.eventsRejected + b.eventsRejected,
    rejectsByReason: byReason,
    quotesDiscarded: a.quotesDiscarded + b.quotesDiscarded,
  };
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
export async function replayParallel(opts: ParallelOptions): Promise<ReplaySummary> {
  const now = opts.now ?? (() => Date.now());
  const started = now();
  const run = opts.run ?? runPartitionHere;
  const config = resolveConfig(opts.config ?? {});
  const H = warmUpUs(config);
  const stats = await prescan(opts.inputs, { format: opts.format, maxLineBytes: opts.maxLineBytes });
  const plan = planPartitions(stats, Math.max(1, opts.workers), H, Math.max(H, SYMBOL_WARM_UP_US));
  const common = {
    inputs: opts.inputs,
    format: opts.format,
    config: opts.config,
    track: opts.track,
    periods: opts.periods,
    ownMetrics: opts.ownMetrics,
    maxLineBytes: opts.maxLineBytes,
    batchSize: opts.batchSize,
  };
  const jobs: PartitionJob[] = plan.map((p, k) => ({
    ...common,
    index: k,
    db: `${opts.db}.part-${k}`,
    from: p.from,
    to: p.to,
    partition: { start: p.start, metadata: p.metadata.map((m) => m.event), clockUs: p.clockUs, markets: p.markets },
  }));
  const done = async (job: PartitionJob): Promise<PartitionResult> => {
    const r = await run(job);
    opts.onPartitionDone?.(job, r);
    return r;
  };
  try {
    const results = await pool(jobs, opts.workers, done);
    // Phase 2: auto-tracked pairs a partition missed at its cut (docs/parallel.md, "Tracked pairs").
    if (opts.track === undefined) {
      const again = retrackJobs(jobs, results);
      const rerun = await pool(again, opts.workers, done);
      again.forEach((job, i) => {
        jobs[job.index] = job;
        results[job.index] = rerun[i];
      });
    }
    return finish(opts, jobs, results, started, now);
  } finally {
    for (const job of jobs) for (const f of [job.db, `${job.db}-wal`, `${job.db}-shm`]) rmSync(f, { force: true });
  }
}

/** The partitions to run again, each with the pairs a serial replay tracks at its cut that it did not ({@link missingTracks}). */
function retrackJobs(jobs: readonly PartitionJob[], results: readonly PartitionResult[]): PartitionJob[] {
  const withRate = jobs.map((j) => {
    const store = ReplayStore.open(j.db);
    try {
      return store.pairsWithRate();
    } finally {
      store.close();
    }
  });
  const missing = missingTracks(
    withRate,
    results.map((r) => r.trackedAtCut),
  );
  const again: PartitionJob[] = [];
  jobs.forEach((job, k) => {
    if (missing[k].length === 0) return;
    for (const f of [job.db, `${job.db}-wal`, `${job.db}-shm`]) rmSync(f, { force: true });
    again.push({ ...job, partition: { ...job.partition, track: missing[k] } });
  });
  return again;
}

/** Merges the partitions into the target: outputs, run row, final snapshot; the summary. */
function finish(
  opts: ParallelOptions,
  jobs: readonly PartitionJob[],
  results: readonly PartitionResult[],
  started: number,
  now: () => number,
): ReplaySummary {
  const snapshots = jobs.map((j) => {
    const store = ReplayStore.open(j.db);
    try {
      const cp = store.latestSnapshot();
      if (!cp?.final) throw new Error(`xrate: partition ${j.index} left no final snapshot in "${j.db}"`);
      return cp;
    } finally {
      store.close();
    }
  });
  const last = snapshots[snapshots.length - 1];
  const final = mergeFinalSnapshot(
    last.engine,
    snapshots.slice(0, -1).map((s) => s.engine),
  );
  const engine: Engine = restoreEngine(final);
  const owned = results.reduce((a, r) => addCounts(a, r.owned), {
    eventsRead: 0,
    eventsAccepted: 0,
    eventsRejected: 0,
    rejectsByReason: {},
    quotesDiscarded: 0,
  } as OwnedTotals);
  // A new database: the first partition's becomes it (its rows are already the first ones), merged
  // in place and given the target's name once complete, so the merge needs no journal: a failure
  // leaves no database. An existing one keeps what is not output (its keys, its earlier runs):
  // every partition is copied in.
  const fresh = !existsSync(opts.db);
  const into = fresh ? jobs[0].db : opts.db;
  const target = ReplayStore.open(into);
  let summary: ReplaySummary;
  try {
    const runId = target.beginRun(
      opts.inputs,
      final.config,
      { workers: opts.workers, track: opts.track, periods: opts.periods, ownMetrics: opts.ownMetrics, format: opts.format },
      new Date(started).toISOString(),
      false,
    );
    if (fresh) target.adoptOutputs(runId);
    else target.transaction(() => target.clearOutputs(runId));
    const merge = () => target.mergePartitions((fresh ? jobs.slice(1) : jobs).map((j) => ({ path: j.db, from: j.from })));
    const merged = fresh ? target.unjournaled(merge) : merge();
    const firstTick = snapshots[0].engine.t0 ?? undefined;
    const lastTick = final.lastTick ?? undefined;
    const totals = {
      ...owned,
      ticks: firstTick === undefined || lastTick === undefined ? 0 : (lastTick - firstTick) / 1_000_000 + 1,
      firstTick,
      lastTick,
      pairsWithRate: engine.pairs().length,
      rateChanges: merged.rateChanges,
      buckets: merged.buckets,
    };
    const ended = now();
    target.transaction(() => target.saveSnapshot(runId, { ...last, engine: final, batch: 0 }, new Date(ended).toISOString()));
    target.finishRun(runId, completedRun(totals, { finishedAt: ended, durationMs: ended - started, stopped: false }));
    const durationMs = ended - started;
    summary = {
      inputs: opts.inputs,
      ...totals,
      durationMs,
      eventsPerSecond: durationMs > 0 ? (totals.eventsRead / durationMs) * 1000 : 0,
      resumed: false,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      alreadyComplete: false,
      engine,
    };
  } finally {
    target.close();
  }
  // Closed, its WAL is checkpointed and gone; were it not, the WAL goes with it.
  if (fresh) {
    for (const f of ['-wal', '-shm']) if (existsSync(into + f)) renameSync(into + f, opts.db + f);
    renameSync(into, opts.db);
  }
  return summary;
}
