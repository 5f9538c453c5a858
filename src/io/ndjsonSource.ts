/**
 * An NDJSON log (plain or gzip) read on bytes into columnar batches (ndjsonBatches.ts) in the
 * calling thread, as a {@link BatchSource}: what openBatchSource gives for one, and what a
 * reader's worker runs for one (batchWorker.ts), without loading the other formats' readers.
 *
 * @module
 */
import { batchTransferList } from '../core/batch.js';
import type { BatchSource } from './batch.js';
import { type NdjsonBatchOptions, ndjsonBatches } from './ndjsonBatches.js';
import { textSource } from './textStream.js';

/**
 * The NDJSON file `path` read in this thread (ndjsonBatches.ts); `lean`: small reads, the file
 * opened for each (one of the many inputs of a merge). With `recycle` (and `nb.pool`), a batch is
 * done with once the next one is asked for: its buffer goes back to the pool.
 */
export function ndjsonSource(
  path: string,
  gzip: boolean,
  lean: boolean,
  nb: NdjsonBatchOptions,
  totalBytes: number,
  recycle = false,
): BatchSource {
  const pool = recycle ? nb.pool : undefined;
  return textSource('ndjson', path, { gzip, lean, totalBytes }, async function* (ts, isClosed) {
    for await (const b of ndjsonBatches(ts.bytes(), nb, isClosed)) {
      yield b;
      if (pool !== undefined) for (const buf of batchTransferList(b)) pool.put(buf);
    }
  });
}
