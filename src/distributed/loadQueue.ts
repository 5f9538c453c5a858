/**
 * Loads src/distributed/queue.ts for `xrate replay --queue` and `xrate worker`. Its client library,
 * bullmq, is an optional peer dependency of the package (its msgpackr pulls a native addon that
 * no other command needs): xrate's own install has it, a user of the package installs it to use
 * the queue. Without it, loading is an error that says what to install.
 *
 * @module
 */
import type * as Queue from './queue.js';
import { XrateError } from '../core/errors.js';

/** The bullmq versions xrate runs with: package.json's `peerDependencies`. */
export const BULLMQ_RANGE = '^5.81.5';

/** Whether `e` is the failure to find the package `name` imported by an ES module. */
function missingPackage(e: unknown, name: string): boolean {
  return (e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && (e as Error).message.includes(`'${name}'`);
}

/**
 * The queue module.
 *
 * @throws XrateError `unavailable` (the CLI's exit 1) when bullmq is not installed
 * @example
 * ```ts
 * const { startQueueWorker } = await loadQueue();
 * ```
 */
export async function loadQueue(): Promise<typeof Queue> {
  try {
    return await import('./queue.js');
  } catch (e) {
    if (!missingPackage(e, 'bullmq')) throw e;
    throw new XrateError(
      'unavailable',
      `the queue (--queue, xrate worker) needs the bullmq package, an optional peer dependency of xrate: npm install bullmq@${BULLMQ_RANGE}`,
    );
  }
}
