/**
 * xrate's I/O worker threads (the readers': batchSource.ts, readAhead.ts; the replay database's
 * writer: writerThread.ts): how they start, and the V8 heap they get. Their work makes
 * short-lived garbage and keeps little, so a young generation of a few megabytes serves them as
 * well as the default, sized for a main thread: at 25 M events read from Parquet, the two threads
 * of a replay took 37 MB less at the peak (250 -> 213 MB), in the same time.
 *
 * A worker can be started before its job is known ({@link startEarly}): Node's start in a new
 * thread and the worker's modules then load while the thread that will give it its job loads its
 * own. The `xrate replay` command starts its reader's worker so, first thing (cli/main.ts); such a
 * worker takes its job from the first message posted to it ({@link jobOf}).
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parentPort, type ResourceLimits, type Transferable, Worker, workerData } from 'node:worker_threads';

/** `resourceLimits` of every I/O worker thread. */
export const IO_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 4 };

/** The heap budget's floor in a reader's worker (heapBudget.ts): its heap is collected in full above it, and above twice what the last collection left. */
export const WORKER_HEAP_FLOOR_MB = 16;

/**
 * Starts the I/O worker whose built file is `js` (`new URL('./batchWorker.js', import.meta.url)`,
 * ...), with {@link IO_WORKER_LIMITS}; or, where it is not built, its TypeScript source beside it
 * through tsx (tests). A worker of the same `js` started early ({@link startEarly}) and still
 * running is given the job instead.
 */
export function startIoWorker(js: URL, data: unknown, transferList: Transferable[] = []): Worker {
  const e = early.get(js.href);
  if (e !== undefined) {
    early.delete(js.href);
    if (!e.exited) {
      e.worker.ref();
      e.worker.postMessage({ job: data } satisfies EarlyJob, transferList);
      return e.worker;
    }
  }
  return spawn(js, data, transferList);
}

/** A new worker running `js`, or its TypeScript source through tsx where it is not built. */
function spawn(js: URL, data: unknown, transferList: Transferable[] = []): Worker {
  if (existsSync(fileURLToPath(js))) return new Worker(js, { workerData: data, transferList, resourceLimits: IO_WORKER_LIMITS });
  const ts = js.href.replace(/\.js$/, '.ts');
  return new Worker(`import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(ts)}); });`, {
    eval: true,
    workerData: data,
    transferList,
  });
}

/** The first message a worker started early is posted: its job. */
interface EarlyJob {
  job: unknown;
}

/** Workers started early and not taken yet, by the URL of their file. */
const early = new Map<string, { worker: Worker; exited: boolean }>();

/**
 * Starts the I/O worker `js` now, without its job: the next {@link startIoWorker} of the same `js`
 * posts the job to it rather than starting one. It does not keep the process alive while it
 * waits (it is unreferenced until taken); {@link dropEarlyWorkers} ends it when it is not to be
 * taken. One waits at most a file. A worker that stopped before it was taken (an error as it
 * loaded) is not taken: its job goes to a new worker, where the error, if it is one, shows.
 */
export function startEarly(js: URL): void {
  if (early.has(js.href)) return;
  const e = { worker: spawn(js, undefined), exited: false };
  // Until it is taken, an error shows as its exit (the one that takes it listens for its own).
  e.worker.on('error', () => {});
  e.worker.on('exit', () => {
    e.exited = true;
    if (early.get(js.href) === e) early.delete(js.href);
  });
  e.worker.unref();
  early.set(js.href, e);
}

/** The workers started early and not taken yet. */
export function earlyWorkers(): number {
  return early.size;
}

/** Ends the workers started early that were not taken. */
export function dropEarlyWorkers(): void {
  for (const e of early.values()) void e.worker.terminate();
  early.clear();
}

/** A replay's reader worker (batchWorker.ts, which batchSource.ts starts), started early ({@link startEarly}). */
export function startReaderEarly(): void {
  startEarly(new URL('./batchWorker.js', import.meta.url));
}

/**
 * In an I/O worker: its job, the `workerData` it was started with, or, in a worker started early
 * ({@link startEarly}), the first message posted to it. `meanwhile` is called only in the latter
 * case, as it starts to wait (to load the modules a job is likely to need).
 */
export function jobOf<T>(meanwhile?: () => Promise<unknown>): Promise<T> {
  if (workerData !== undefined) return Promise.resolve(workerData as T);
  return new Promise<T>((resolve) => {
    parentPort?.once('message', (m: EarlyJob) => resolve(m.job as T));
    meanwhile?.().catch(() => {});
  });
}
