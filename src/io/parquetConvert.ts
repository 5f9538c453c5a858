/**
 * `xrate convert`: any inputs xrate replays, written as one Parquet event log in replay order
 * (parquetWrite.ts): one after another, or merged by event time (`--merge`, merge.ts), exactly
 * as `xrate replay` reads them, so that replaying the Parquet file gives the replay's outputs.
 *
 * The file is written next to its final path and renamed into place once complete: a conversion
 * that fails leaves no partial file.
 *
 * @module
 */
import { renameSync, rmSync } from 'node:fs';
import { mergeSources } from './merge.js';
import { ParquetEventWriter } from './parquetWrite.js';
import { type EventSource, type OpenSourceOptions, openSource } from './source.js';

/** Options of {@link convertToParquet}. */
export interface ConvertOptions extends Pick<OpenSourceOptions, 'format' | 'maxLineBytes' | 'time'> {
  /** Merge the inputs by event time (`xrate replay --merge`) instead of reading them in turn. */
  merge?: boolean;
  /** Rows per row group (default 65536: what a reader holds at once). */
  rowGroupRows?: number;
  /** Told the rows written so far, about once per batch read. */
  onProgress?: (rows: number) => void;
}

/** What a conversion wrote. */
export interface ConvertSummary {
  /** Rows written: every record of every input. */
  rows: number;
  /** Quote and trade rows (typed columns). */
  columnar: number;
  /** Other rows (kept whole). */
  other: number;
  /** Rows that are rejects (a record that could not be read, or is not a valid event). */
  rejects: number;
}

/** Records per batch of each input of a merge (as the replay's merge: recordSource.ts). */
const MERGE_INPUT_BATCH = 64;

/**
 * Records per batch and bytes per read of an input read in turn: small, so that a batch's records
 * and a chunk's text are freed young (the writer takes each record at once), not aged into the
 * old generation, whose garbage let the heap grow to several times what is live.
 */
const INPUT_BATCH = 256;
const INPUT_CHUNK_BYTES = 1 << 16;

/**
 * Converts `paths` (files: expand directories first, inputs.ts) into the Parquet event log `out`.
 *
 * @example
 * ```ts
 * await convertToParquet(['day1.ndjson.gz', 'day2.ndjson.gz'], 'days.parquet');
 * ```
 */
export async function convertToParquet(paths: readonly string[], out: string, opts: ConvertOptions = {}): Promise<ConvertSummary> {
  const open = { format: opts.format, maxLineBytes: opts.maxLineBytes, time: opts.time };
  const tmp = `${out}.partial-${process.pid}`;
  const w = new ParquetEventWriter(tmp, paths, opts.rowGroupRows);
  try {
    if (opts.merge) {
      const sources: EventSource[] = [];
      try {
        for (const p of paths) sources.push(openSource(p, { ...open, batchSize: MERGE_INPUT_BATCH, lean: true }));
      } catch (e) {
        for (const s of sources) s.close();
        throw e;
      }
      const m = mergeSources(sources);
      for await (const { records, inputs } of m.batches()) {
        for (let k = 0; k < records.length; k++) w.add(records[k], inputs[k]);
        opts.onProgress?.(w.counts.rows);
      }
    } else {
      for (let i = 0; i < paths.length; i++) {
        const src = openSource(paths[i], { ...open, batchSize: INPUT_BATCH, chunkBytes: INPUT_CHUNK_BYTES });
        try {
          for await (const records of src.batches()) {
            for (const r of records) w.add(r, i);
            opts.onProgress?.(w.counts.rows);
          }
        } finally {
          src.close();
        }
      }
    }
    w.finish();
    renameSync(tmp, out);
  } catch (e) {
    w.abort();
    rmSync(tmp, { force: true });
    throw e;
  }
  const { rows, columnar, other, rejects } = w.counts;
  return { rows, columnar, other, rejects };
}
