/**
 * replay/coinapi-merge: a generated log exported as gzipped CoinAPI flat files (one file per
 * symbol and day, test/helpers/vendorExport.ts), replayed with `merge` as `xrate replay META TREE
 * --merge` does, rate changes written to NDJSON; in alternating rounds with a replay of the same
 * events as one NDJSON log (`ndjson_events_per_s`, and `ratio_to_ndjson` = NDJSON time / merge time:
 * below 1 when the vendor reading and the merge cost more than NDJSON's fast path).
 *
 * @module
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { generateLog } from '../scripts/gen-log.js';
import { replay } from '../src/replay/replay.js';
import { exportVendor } from '../test/helpers/vendorExport.js';
import type { BenchResult } from './run.js';

const EVENTS = 500_000;
const ROUNDS = 3;

function countFiles(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? countFiles(join(dir, e.name)) : 1;
  return n;
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
  };
}
