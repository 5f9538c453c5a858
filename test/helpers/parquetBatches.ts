/**
 * The Parquet property tests' helpers: event logs converted, their batches read, and their rows
 * as values to compare.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BatchColumns, eventAt } from '../../src/core/batch.js';
import { convertToParquet } from '../../src/io/parquetConvert.js';
import { openParquetBatches, type ParquetReadOptions, parquetRawOf } from '../../src/io/parquetRead.js';
import { rebatched } from '../../src/io/rebatch.js';

/** The batches of `path`; with `opts.batchSize`, cut as a replay cuts them (rebatch.ts). */
export async function parquetBatches(path: string, opts: ParquetReadOptions): Promise<BatchColumns[]> {
  const pq = openParquetBatches(path, opts);
  const src = opts.batchSize === undefined ? pq : rebatched(pq, opts.batchSize);
  const out: BatchColumns[] = [];
  try {
    for await (const b of src.batches()) out.push(b);
  } finally {
    src.close();
  }
  return out;
}

/** Every row of `bs` as its line, its event and the raw text a Parquet log gives it. */
export function rowsOf(bs: BatchColumns[]): { line: number; event: unknown; raw: string }[] {
  const out: { line: number; event: unknown; raw: string }[] = [];
  for (const b of bs)
    for (let i = 0; i < b.length; i++) out.push({ line: b.line[i], event: eventAt(b, i) ?? null, raw: parquetRawOf(b, i) });
  return out;
}

/**
 * Each of `logs` (lines) written as an NDJSON file in `dir`, and all of them converted to one
 * Parquet event log (`name`.parquet): the inputs' paths and the log's.
 */
export async function convertedLogs(
  dir: string,
  name: string,
  logs: readonly (readonly string[])[],
  opts: { rowGroupRows: number; merge?: boolean },
): Promise<{ paths: string[]; pq: string }> {
  const paths = logs.map((lines, i) => {
    const log = join(dir, `${name}-${i}.ndjson`);
    writeFileSync(log, `${lines.join('\n')}\n`);
    return log;
  });
  const pq = join(dir, `${name}.parquet`);
  await convertToParquet(paths, pq, opts);
  return { paths, pq };
}
