/**
 * `xrate replay LOG...`: streams event logs through the engine into SQLite or a rate file.
 *
 * @module
 */
import { existsSync, mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { EXCHANGE_RATE_PERIODS } from '../../core/periods.js';
import { type PartitionRunner, replayParallel, runPartitionInWorker } from '../../replay/parallel.js';
import { loadQueue } from '../../distributed/loadQueue.js';
import { isRedisUrl } from '../../distributed/redisUrl.js';
import type { RedisSecurity } from '../../distributed/security.js';
import { replay, type ReplayOptions, type ReplaySummary } from '../../replay/replay.js';
import { MAX_THREADS, REPLAY_TABLE, replayModeOf, validateReplayOptions } from '../../replay/options.js';
import { XrateError } from '../../core/errors.js';
import {
  flagFields,
  inputs,
  int,
  loadConfig,
  maxLineBytes,
  pairList,
  parse,
  refuseDuplicateInputs,
  replayFormat,
  seconds,
  time,
  type Io,
  vendorTime,
} from '../args.js';
import { redisSecurityFlags } from '../connection.js';
import { REPLAY_OPTIONS } from '../flags.js';
import { help } from '../help.js';
import { parallelProgressLine, progressLine, summaryTable } from '../progress.js';

/** `--workers N|auto` (auto: the cores); undefined when absent. */
function workersOf(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (v === 'auto') return availableParallelism();
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new XrateError('usage', `--workers must be a whole number from 1 to 256 or "auto", got "${v}"`, { field: '--workers' });
  return n;
}

/** `--threads N` (a whole number, 1 to MAX_THREADS); undefined when absent (the library's default: the cores). */
function threadsOf(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n) || n < 1 || n > MAX_THREADS)
    throw new XrateError('usage', `--threads must be a whole number from 1 to ${MAX_THREADS}, got "${v}"`, { field: '--threads' });
  return n;
}

/** Runs `xrate replay` with `args` (after the command name); returns the exit code. */
export async function cmdReplay(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, REPLAY_OPTIONS);
  if (values.help) return help('replay', io);
  const from = time('from', values.from);
  const to = time('to', values.to);
  if (from !== undefined && to !== undefined && to < from)
    throw new XrateError('usage', '--to must not be before --from', { field: '--to' });
  const periods = values.periods
    ?.split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  for (const p of periods ?? []) {
    if (!EXCHANGE_RATE_PERIODS.some((r) => r.period_id === p))
      throw new XrateError('usage', `--periods: unknown period id "${p}"`, { field: '--periods' });
  }
  const batch = values['batch-size'] !== undefined ? Number(values['batch-size']) : undefined;
  if (batch !== undefined && (!Number.isInteger(batch) || batch < 1))
    throw new XrateError('usage', `--batch-size must be a positive integer, got "${values['batch-size']}"`, { field: '--batch-size' });
  const out = values.out;
  if (out !== undefined && !/\.(ndjson|jsonl|csv|parquet)$/i.test(out))
    throw new XrateError('usage', `--out must name a .ndjson, .csv or .parquet file, got "${out}"`, { field: '--out' });
  const workers = workersOf(values.workers);
  const threads = threadsOf(values.threads);
  const queue = values.queue;
  // Each flag in the modes it applies to: the check of replay() and replayParallel (src/replay/options.ts).
  validateReplayOptions(
    {
      ...flagFields(REPLAY_TABLE, values),
      threads,
      db: out === undefined ? (values.db ?? 'out/xrate.sqlite') : values.db,
      inputs: positionals.filter((p) => existsSync(p)),
    },
    replayModeOf({ merge: values.merge, resume: values.resume, workers, queue }),
  );
  const db = out ? undefined : (values.db ?? 'out/xrate.sqlite');
  if (db) mkdirSync(dirname(resolve(db)), { recursive: true });
  if (out) mkdirSync(dirname(resolve(out)), { recursive: true });
  const track = pairList(values.track, false).map(([b, q]) => `${b}/${q}`);
  const quiet = !!values.quiet || !!values.json;
  const showProgress = !quiet && io.isTTY;
  const opts: ReplayOptions = {
    inputs: inputs(positionals, 'replay'),
    format: replayFormat(values.format),
    merge: values.merge ? true : undefined,
    time: vendorTime(values.time),
    from,
    to,
    config: loadConfig(values.config),
    track: track.length ? track : undefined,
    periods,
    reorderWindowUs: seconds('reorder-window', values['reorder-window']),
    db,
    out,
    snapshotEveryUs: seconds('snapshot-every', values['snapshot-every']),
    resume: !!values.resume,
    batchSize: batch,
    threads,
    maxLineBytes: maxLineBytes(values['max-line-bytes']),
    heapBudget: true,
    ownMetrics: values['no-own-metrics'] ? false : undefined,
    onProgress: showProgress ? (p) => io.err(`\r${progressLine(p, Math.max(40, io.columns - 1))}`) : undefined,
  };
  // The inputs' directories walked once: the check of duplicates hands its listing to the replay.
  opts.listed = refuseDuplicateInputs(opts.inputs, values['allow-duplicates']);
  const security = redisSecurityFlags('queue', queue, values, (m) => new XrateError('usage', m));
  const waitUs = seconds('queue-wait', values['queue-wait']);
  if (queue !== undefined && !isRedisUrl(queue))
    throw new XrateError('usage', `--queue must be a redis:// URL, got "${queue}"`, { field: '--queue' });
  const summary =
    queue !== undefined
      ? await replayOnQueue(
          opts,
          workers,
          {
            url: queue,
            security,
            name: values['queue-name'],
            attempts: int('attempts', values.attempts, 1, 100, (m) => new XrateError('usage', m)),
            waitMs: waitUs === undefined ? undefined : waitUs / 1000,
          },
          io,
          showProgress,
        )
      : workers !== undefined && workers > 1
        ? await replayInPartitions(opts, workers, runPartitionInWorker, io, showProgress)
        : await replay(opts);
  if (showProgress) io.err('\r\x1b[K');
  printSummary(summary, io, !!values.json, quiet, db ?? out!);
  return 0;
}

/** `--workers N` (N > 1) or `--queue`: the replay in N partitions, each run by `run` (docs/parallel.md). */
async function replayInPartitions(
  opts: ReplayOptions,
  workers: number,
  run: PartitionRunner,
  io: Io,
  showProgress: boolean,
): Promise<ReplaySummary> {
  return replayParallel({
    ...opts,
    onProgress: showProgress ? (p) => io.err(`\r${parallelProgressLine(p, Math.max(40, io.columns - 1))}`) : undefined,
    db: opts.db,
    out: opts.out,
    workers,
    run,
  });
}

/** The queue of `--queue` and its flags. */
interface QueueFlags {
  url: string;
  security: RedisSecurity | undefined;
  name: string | undefined;
  attempts: number | undefined;
  waitMs: number | undefined;
}

/**
 * `--queue redis://HOST:PORT`: the partitions go to `xrate worker` processes through a BullMQ
 * queue; paths are made absolute, since the workers read and write them (docs/parallel.md).
 * Partitions: `--workers N`, else one per worker connected to the queue. The queue's Redis lost
 * for longer than `--queue-wait`: the run stops, nothing merged, with a message saying so.
 */
async function replayOnQueue(
  opts: ReplayOptions,
  workers: number | undefined,
  flags: QueueFlags,
  io: Io,
  showProgress: boolean,
): Promise<ReplaySummary> {
  // The queue's client libraries are loaded only by the runs that use them.
  const { queueRunner } = await loadQueue();
  const target = opts.db ?? opts.out!;
  const existed = existsSync(target);
  const q = await queueRunner({
    ...flags,
    log: (line) => io.err(`${showProgress ? '\n' : ''}xrate replay: ${line}\n`),
  });
  // Interrupted: the jobs not yet taken leave the queue, so no worker replays a partition for nobody.
  const interrupt = (signal: NodeJS.Signals): void => {
    io.err(`\nxrate: ${signal}: removing this run's partitions from the queue\n`);
    q.cancel()
      .catch(() => 0)
      .then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    const n = workers ?? Math.max(1, await q.workers());
    return await replayInPartitions(
      {
        ...opts,
        // Absolute paths for the queue's workers: listed again from them.
        inputs: opts.inputs.map((f) => resolve(f)),
        listed: undefined,
        db: opts.db === undefined ? undefined : resolve(opts.db),
        out: opts.out === undefined ? undefined : resolve(opts.out),
      },
      n,
      q.run,
      io,
      showProgress,
    );
  } catch (e) {
    const lost = q.lost();
    if (lost === undefined) throw e;
    if (showProgress) io.err('\n');
    throw new XrateError(
      'unavailable',
      `${lost.message}: the run is stopped and nothing was merged (${existed ? `"${target}" is left as it was` : `no ${opts.db ? 'database' : 'file'} was made at "${target}"`})`,
    );
  } finally {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
    await q.close();
  }
}

function printSummary(s: ReplaySummary, io: Io, json: boolean, quiet: boolean, where: string): void {
  if (json) {
    const { engine: _engine, ...rest } = s;
    io.out(`${JSON.stringify(rest, null, 2)}\n`);
    return;
  }
  if (quiet) return;
  if (s.alreadyComplete) io.out(`nothing to resume: the replay into ${where} is already complete\n`);
  io.out(`${summaryTable(s)}\n`);
  io.out(`output: ${where}\n`);
}
