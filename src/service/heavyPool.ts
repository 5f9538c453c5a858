/**
 * Heavy answers off the event loop: a chart (which replays the run's logs) and a long metric
 * history or group (a large read of the database, rendered) are computed in worker threads
 * (heavyWorker.ts), each with its own read-only connection to the served database, and come back as
 * the finished body, so the main thread only routes, authenticates and sends: light requests keep
 * their latency while heavy ones run (docs/service.md, "Heavy requests").
 *
 * The pool is also the service's global budget of heavy work, whatever the keys: at most `threads`
 * tasks run at once (one per core but the main thread's, by default), up to `maxQueued` more wait
 * their turn in arrival order, and one more is refused with 503 before any work. The per-key cap
 * of heavy requests in flight (limits.ts) applies before it.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type ErrorCode, XrateError } from '../core/errors.js';
import type { OutputFormat } from '../http/format/index.js';

/** Where the served metrics are read: a replay database's complete run, or what a live feed has written so far. */
export type MetricsFrom = 'database' | 'store';

/** A task of the pool. */
export type HeavyTask =
  | { kind: 'chart'; db: string; base: string; quote: string; from: number; to: number; periodId?: string; points?: number }
  | { kind: 'metrics'; db: string; from: MetricsFrom; path: string; query: Record<string, string>; format: OutputFormat };

/** A finished answer: its body, Content-Type and cost in requests. */
export interface HeavyAnswer {
  body: Buffer;
  type: string;
  cost: number;
}

/** What a worker posts back. */
export type HeavyReply =
  | { id: number; answer: { body: Uint8Array; type: string; cost: number } }
  | { id: number; error: { code: ErrorCode; message: string; headers: Record<string, string> } }
  | { id: number; crash: string };

/** Options of {@link HeavyPool}. */
export interface HeavyPoolOptions {
  /** Worker threads, the tasks run at once (default: the cores but one, at least one). */
  threads?: number;
  /** Tasks that may wait for a thread; one more is a 503 (default 64). */
  maxQueued?: number;
}

interface Pending {
  id: number;
  task: HeavyTask;
  resolve(a: HeavyAnswer): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  busy: Pending | undefined;
}

/** A worker thread running heavyWorker: the built .js beside this file, or the TypeScript source through tsx (tests). */
function startWorker(): Worker {
  const js = new URL('./heavyWorker.js', import.meta.url);
  if (existsSync(fileURLToPath(js))) return new Worker(js);
  const ts = new URL('./heavyWorker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(ts)}); });`, { eval: true });
}

/**
 * A pool of worker threads answering {@link HeavyTask}s, in arrival order.
 *
 * @example
 * ```ts
 * const pool = new HeavyPool();
 * const { body, type, cost } = await pool.run({ kind: 'metrics', db: 'out/xrate.sqlite', from: 'database',
 *   path: '/v1/metrics/group', query: { metric_id: 'FUNDING_RATE', exchange_id: 'BINANCE', groupby: 'symbol_id' },
 *   format: { kind: 'json' } });
 * await pool.close();
 * ```
 */
export class HeavyPool {
  readonly threads: number;
  readonly maxQueued: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(opts: HeavyPoolOptions = {}) {
    this.threads = Math.max(1, opts.threads ?? availableParallelism() - 1);
    this.maxQueued = Math.max(0, opts.maxQueued ?? 64);
  }

  /** Tasks running and waiting now. */
  load(): { running: number; queued: number } {
    return { running: this.slots.filter((s) => s.busy).length, queued: this.queue.length };
  }

  /**
   * The answer of `task`, computed on a worker thread; an {@link XrateError} as the route would
   * throw it (400, 550, ...), or 503 when the pool is full or closed.
   */
  run(task: HeavyTask): Promise<HeavyAnswer> {
    if (this.closed) return Promise.reject(new XrateError('unavailable', 'The service is shutting down'));
    const idle = this.slots.length < this.threads || this.slots.some((s) => !s.busy);
    if (!idle && this.queue.length >= this.maxQueued) {
      return Promise.reject(
        new XrateError(
          'unavailable',
          `The service is busy: ${this.threads + this.queue.length} heavy requests (charts, long metric histories) are running or waiting; retry later`,
          { headers: { 'retry-after': '1' } },
        ),
      );
    }
    return new Promise<HeavyAnswer>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops the threads; waiting tasks are refused with 503. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new XrateError('unavailable', 'The service is shutting down'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    this.slots.length = 0;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.threads) slot = this.spawn();
      if (!slot) return;
      const p = this.queue.shift()!;
      slot.busy = p;
      slot.worker.postMessage({ id: p.id, task: p.task });
    }
  }

  private spawn(): Slot {
    const worker = startWorker();
    worker.unref();
    const slot: Slot = { worker, busy: undefined };
    worker.on('message', (m: HeavyReply) => {
      const p = slot.busy;
      if (!p || p.id !== m.id) return;
      slot.busy = undefined;
      if ('answer' in m) {
        const a = m.answer;
        p.resolve({ body: Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength), type: a.type, cost: a.cost });
      } else if ('error' in m) p.reject(new XrateError(m.error.code, m.error.message, { headers: m.error.headers }));
      else p.reject(new Error(m.crash));
      this.dispatch();
    });
    const lost = (why: string): void => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      const p = slot.busy;
      slot.busy = undefined;
      p?.reject(new Error(`a heavy request's worker thread stopped: ${why}`));
      if (!this.closed) this.dispatch();
    };
    worker.on('error', (e) => lost(e.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.slots.push(slot);
    return slot;
  }
}
