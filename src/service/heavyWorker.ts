/**
 * A worker thread of the heavy-answer pool (heavyPool.ts): answers one task at a time with the
 * body the route would send, or the route's error (code, message and headers), from its own read-only
 * connections to the served databases (kept open between tasks).
 *
 * @module
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { OWN_METRICS } from '../core/engine/ownMetrics.js';
import type { MetricsSource } from '../core/metrics/source.js';
import { XrateError } from '../core/errors.js';
import { ReplayStore } from '../io/store.js';
import { chartAnswer } from './chart.js';
import { CONTENT_TYPES, render } from '../http/format/index.js';
import type { HeavyReply, HeavyTask, MetricsFrom } from './heavyPool.js';
import { answerMetrics } from './metrics.js';
import { DatabaseRateProvider } from '../answers/index.js';
import { settleDetaching } from '../io/detaching.js';

// This thread moves buffers: compiled once, not again at the first move (detaching.ts).
settleDetaching();

/**
 * Heavy work yields the CPU to the main thread's light requests: on Linux this thread's own nice
 * value is raised to {@link HEAVY_NICE} (setpriority of the thread's id, read from
 * /proc/thread-self); elsewhere, or when refused, it runs at the process's priority.
 */
const HEAVY_NICE = 10;
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.max(getPriority(tid), HEAVY_NICE));
} catch {
  // not Linux, or not allowed: the process's priority
}

const sources = new Map<string, MetricsSource>();

/** The served metrics of `db`, as the main thread reads them (src/app/serve.ts). */
async function metricsOf(db: string, from: MetricsFrom): Promise<MetricsSource> {
  const k = `${from}:${db}`;
  let s = sources.get(k);
  if (!s) {
    s =
      from === 'database'
        ? (await DatabaseRateProvider.open(db)).metrics(OWN_METRICS)
        : ReplayStore.open(db, { readonly: true }).metrics(OWN_METRICS);
    sources.set(k, s);
  }
  return s;
}

async function answer(task: HeavyTask): Promise<{ body: Uint8Array; type: string; cost: number }> {
  if (task.kind === 'chart') {
    const { db, base, quote, from, to, periodId, points } = task;
    return chartAnswer(db, { base, quote, from, to, periodId, points });
  }
  const a = answerMetrics(await metricsOf(task.db, task.from), task.path, task.query);
  if (a === undefined) throw new XrateError('not_found', `Unknown route GET ${task.path}`);
  // The JSON written straight from the route's data, as routeTable.ts sends it; else rendered.
  if (task.format.kind === 'json' && a.json !== undefined) {
    const items = a.json;
    return {
      body: Buffer.concat([Buffer.from('['), items.json(0, items.length), Buffer.from(']')]),
      type: CONTENT_TYPES.json,
      cost: a.cost,
    };
  }
  const { body, type } = render(a.kind, a.value, task.format);
  return { body: typeof body === 'string' ? Buffer.from(body) : body, type, cost: a.cost };
}

parentPort?.on('message', ({ id, task }: { id: number; task: HeavyTask }) => {
  const post = (m: HeavyReply, transfer: ArrayBuffer[] = []): void => parentPort?.postMessage(m, transfer);
  answer(task).then(
    (a) => {
      // A body of its own buffer is moved, not copied; a slice of a shared one is copied.
      const own = a.body.byteOffset === 0 && a.body.byteLength === a.body.buffer.byteLength;
      post({ id, answer: a }, own ? [a.body.buffer as ArrayBuffer] : []);
    },
    (e: unknown) => {
      if (e instanceof XrateError) post({ id, error: { code: e.code, message: e.message, headers: e.headers } });
      else post({ id, crash: e instanceof Error ? e.message : String(e) });
    },
  );
});
