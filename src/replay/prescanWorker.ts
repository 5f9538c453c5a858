/**
 * The worker thread of the pre-scan (prescan.ts): scans the part of an NDJSON input it is given
 * (`workerData`, a {@link PrescanRange}) and posts what it found ({@link PrescanPart}).
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isXrateError, messageOf } from '../core/errors.js';
import { type PrescanRange, PrescanStats, scanNdjsonRange } from './prescan.js';

const { path, input, maxLineBytes, start, end } = workerData as PrescanRange;
const stats = new PrescanStats();
scanNdjsonRange(path, input, stats, maxLineBytes, start, end).then(
  (lines) => parentPort?.postMessage({ part: stats.part(lines) }),
  (e: unknown) => parentPort?.postMessage({ error: messageOf(e), code: isXrateError(e) ? e.code : undefined }),
);
