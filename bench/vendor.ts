/**
 * replay/coinapi-merge: a generated log exported as gzipped CoinAPI flat files (one file per
 * symbol and day, test/helpers/vendorExport.ts), replayed with `merge` as `xrate replay META TREE
 * --merge` does, rate changes written to NDJSON; in alternating rounds with a replay of the same
 * events as one NDJSON log. Both run the built library (dist/, rebuilt when older than src/), as
 * the CLI does: its reader workers load their built code (`ndjson_events_per_s`, and `ratio_to_ndjson` = NDJSON time / merge time:
 * below 1 when the vendor reading and the merge cost more than NDJSON's fast path).
 *
 * The same entry times the reading and merging alone (no engine): the record readers and
 * `mergeSources` (`read_records_events_per_s`, `read_records_cpu_ms`) against the columnar vendor
 * reader and `mergeBatchSources` (`read_batches_events_per_s`, `read_batches_cpu_ms`; the metadata
 * NDJSON file through `batchesOf`; each vendor file parked after its first batch and read again
 * from its start when the merge reaches it, as in a replay), in alternating rounds; `read_speedup`
 * = records time / batches time.
 *
 * @module
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateLog } from '../scripts/gen-log.js';
import { type BatchSource, batchesOf } from '../src/io/batch.js';
import { expandInputs } from '../src/io/inputs.js';
import { mergeSources } from '../src/io/merge.js';
import { mergeBatchSources } from '../src/io/mergeBatches.js';
import { openSource } from '../src/io/source.js';
import { openVendorBatches } from '../src/io/vendorBatches.js';
import { sniffVendorFile } from '../src/io/vendorSniff.js';
import type { replay as replaySource } from '../src/replay/replay.js';
import { exportVendor } from '../test/helpers/vendorExport.js';
import { ensureCliBuilt, ROOT } from './replay-db.js';
import type { BenchResult } from './run.js';

const EVENTS = 500_000;
const ROUNDS = 3;

function countFiles(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? countFiles(join(dir, e.name)) : 1;
  return n;
}

/** Rows per batch of each input of a merge, as the replay opens them (src/replay/recordSource.ts). */
const INPUT_BATCH = 64;

/** Reads and merges `paths` with the record readers: rows read, CPU ms. */
async function readRecords(paths: string[]): Promise<{ rows: number; cpu: number }> {
  const c0 = process.cpuUsage();
  let rows = 0;
  const m = mergeSources(
    paths.map((p) => openSource(p, { batchSize: INPUT_BATCH, lean: true })),
    4096,
  );
  for await (const b of m.batches()) rows += b.records.length;
  const c = process.cpuUsage(c0);
  return { rows, cpu: (c.user + c.system) / 1000 };
}

/** Reads and merges `paths` as columnar batches (vendor files by the vendor reader): rows read, CPU ms. */
async function readBatches(paths: string[]): Promise<{ rows: number; cpu: number }> {
  const c0 = process.cpuUsage();
  let rows = 0;
  const sources: BatchSource[] = paths.map((p) => {
    const kind = sniffVendorFile(p).kind;
    return kind !== undefined
      ? openVendorBatches(p, { kind, batchSize: INPUT_BATCH })
      : batchesOf(openSource(p, { batchSize: INPUT_BATCH, lean: true }));
  });
  const m = mergeBatchSources(sources, { batchSize: 4096 });
  for await (const b of m.batches()) rows += b.length;
  const c = process.cpuUsage(c0);
  return { rows, cpu: (c.user + c.system) / 1000 };
}

/** The replay/coinapi-merge entry (see the module description). */
export async function vendorMergeBench(dir: string): Promise<BenchResult> {
  const d = join(dir, `coinapi-${EVENTS}`);
  const meta = join(d, 'meta.ndjson');
  const tree = join(d, 'tree');
  const log = join(d, 'log.ndjson');
  if (!existsSync(log)) {
    mkdirSync(d, { recursive: true });
    // About 70 events/s over two days (one file per symbol and day).
    exportVendor(generateLog({ seed: 7, events: EVENTS, rate: 70, start: '2024-03-01T22:00:00Z', exchanges: 12, assets: 20 }), d, {
      vendor: 'coinapi',
      gzip: true,
    });
  }
  ensureCliBuilt();
  const { replay } = (await import(pathToFileURL(join(ROOT, 'dist', 'replay', 'replay.js')).href)) as { replay: typeof replaySource };
  const merge: number[] = [];
  const ndjson: number[] = [];
  let events = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = performance.now();
    const s = await replay({ inputs: [meta, tree], merge: true, out: join(dir, 'bench-out-coinapi.ndjson'), track: [] });
    merge.push(performance.now() - t0);
    events = s.eventsRead;
    t0 = performance.now();
    const n = await replay({ inputs: [log], out: join(dir, 'bench-out-coinapi-ndjson.ndjson'), track: [] });
    ndjson.push(performance.now() - t0);
    if (n.eventsRead !== events) throw new Error(`replay/coinapi-merge: ${events} events merged, ${n.eventsRead} in the NDJSON log`);
  }
  const paths = expandInputs([meta, tree]);
  let rows = 0;
  const readR: number[] = [];
  const readB: number[] = [];
  const cpuR: number[] = [];
  const cpuB: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = performance.now();
    const a = await readRecords(paths);
    readR.push(performance.now() - t0);
    cpuR.push(a.cpu);
    t0 = performance.now();
    const b = await readBatches(paths);
    readB.push(performance.now() - t0);
    cpuB.push(b.cpu);
    if (a.rows !== b.rows) throw new Error(`replay/coinapi-merge: ${a.rows} rows read as records, ${b.rows} as batches`);
    rows = a.rows;
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const med = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
  return {
    name: 'replay/coinapi-merge',
    unit: 'events/s',
    median: (events / med(merge)) * 1000,
    p99: (events / sorted(merge).at(-1)!) * 1000,
    samples: ROUNDS,
    events,
    files: countFiles(tree) + 1,
    ndjson_events_per_s: (events / med(ndjson)) * 1000,
    ratio_to_ndjson: med(ndjson) / med(merge),
    read_records_events_per_s: (rows / med(readR)) * 1000,
    read_records_cpu_ms: med(cpuR),
    read_batches_events_per_s: (rows / med(readB)) * 1000,
    read_batches_cpu_ms: med(cpuB),
    read_speedup: med(readR) / med(readB),
  };
}
