import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLog } from '../../../scripts/gen-log.js';
import { parseTime } from '../../../src/core/time.js';
import { COMPARED_TABLES, compareReplays } from '../../../src/io/compareReplays.js';
import { MERGE_READ_AHEAD_THREADS } from '../../../src/replay/recordSource.js';
import { replay } from '../../../src/replay/replay.js';
import { type ExportOptions, exportVendor } from '../../helpers/vendorExport.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-vendor-eq-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A log over two days (files per day), with bad and late lines the export leaves out, metric
// events and a listing.
const LINES = [
  ...generateLog({
    seed: 7,
    events: 12_000,
    exchanges: 3,
    assets: 5,
    start: '2024-03-01T20:00:00Z',
    rate: 1 / 2,
    badRate: 0.01,
    lateRate: 0.005,
  }),
];

let n = 0;
async function sameOutputs(
  opts: ExportOptions,
  span: { from?: number; to?: number } = {},
  threads?: number,
): Promise<Record<string, number>> {
  const d = join(dir, `case-${n++}`);
  mkdirSync(d);
  const x = exportVendor(LINES, d, opts);
  expect(x.files.length).toBeGreaterThan(4);
  const want = await replay({ inputs: [x.ndjson], db: join(d, 'ndjson.sqlite'), ...span });
  const got = await replay({ inputs: [x.meta, x.tree], merge: true, time: opts.time, db: join(d, 'vendor.sqlite'), threads, ...span });
  expect(got.inputs).toEqual([x.meta, ...x.files.map((f) => join(x.tree, f))]);
  for (const k of ['eventsRead', 'eventsAccepted', 'eventsRejected', 'rateChanges', 'buckets', 'ticks', 'lastTick'] as const)
    expect(got[k], k).toEqual(want[k]);
  if (span.to === undefined) expect(want.eventsRead).toBe(x.events);
  else expect(want.eventsRead).toBeLessThan(x.events);
  expect(want.eventsRejected).toBe(0);
  expect(want.rateChanges).toBeGreaterThan(100);
  const compared = compareReplays(join(d, 'ndjson.sqlite'), join(d, 'vendor.sqlite'));
  expect(compared.map((t) => t.table)).toEqual(COMPARED_TABLES);
  for (const t of compared) expect(t.difference, t.table).toBeUndefined();
  return Object.fromEntries(compared.map((t) => [t.table, t.rows[0]]));
}

describe('a log replayed as NDJSON and as vendor files (merged) gives the same outputs', () => {
  it('CoinAPI flat files: ; delimited, ISO times with 7 digits, gzipped, id_site_coinapi', async () => {
    const rows = await sameOutputs({ vendor: 'coinapi', gzip: true, idSite: true });
    expect(rows.rates).toBeGreaterThan(100);
    expect(rows.ohlc).toBeGreaterThan(10);
  });

  it('CoinAPI flat files: , delimited, times of day, plain, by time_exchange', async () => {
    await sameOutputs({ vendor: 'coinapi', delimiter: ',', timeOfDay: true, time: 'exchange' });
  });

  it('tardis CSV: one file per exchange, day and data type, gzipped', async () => {
    await sameOutputs({ vendor: 'tardis', gzip: true });
  });

  it('with --from and --to: the merge stops where the NDJSON replay stops', async () => {
    await sameOutputs(
      { vendor: 'coinapi', gzip: true },
      { from: parseTime('2024-03-01T22:00:00Z'), to: parseTime('2024-03-02T01:30:00.5Z') },
    );
  });

  it('tardis CSV by exchange timestamp (--time exchange)', async () => {
    await sameOutputs({ vendor: 'tardis', time: 'exchange' });
  });

  it('read in the replay thread (--threads 1) or ahead of the merge in a worker (--threads 3)', async () => {
    for (const threads of [1, MERGE_READ_AHEAD_THREADS]) {
      await sameOutputs({ vendor: 'coinapi', gzip: true, idSite: true }, {}, threads);
      await sameOutputs({ vendor: 'tardis', gzip: true }, {}, threads);
    }
  });
});
