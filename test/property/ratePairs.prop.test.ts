/**
 * The pairs of a replay database's `rates` (src/io/store.ts), read by a loose index scan: every pair
 * with rows (`ratePairs`) and every pair with a rate in some row (`pairsWithRate`, what the second
 * phase of a partitioned replay reads of each partition) equal the plain DISTINCT queries, sorted,
 * whatever the pairs (bases with one quote or several, names that are prefixes of others) and
 * however the rows without a rate lie.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayStore } from '../../src/io/store.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-pairs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const name = fc.constantFrom('BTC', 'BT', 'BTCB', 'ETH', 'USD', 'USDT', 'a', 'Z', 'É');
const rowArb = fc.record({ base: name, quote: name, rate: fc.option(fc.double({ min: 0.001, max: 1e5, noNaN: true }), { nil: null }) });

describe('pairs of the rates table', () => {
  it('equal the DISTINCT queries, sorted', () => {
    let run = 0;
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 120 }), (rows) => {
        const path = join(dir, `${run++}.sqlite`);
        ReplayStore.open(path).close();
        const db = new Database(path);
        const insert = db.prepare(
          'INSERT INTO rates(tick, base, quote, rate, time, rank, used, fresh, volume, batch) VALUES (?, ?, ?, ?, 0, 0, 0, 0, 0, 0)',
        );
        rows.forEach((r, i) => void insert.run(i * 1_000_000, r.base, r.quote, r.rate));
        const all = db.prepare('SELECT DISTINCT base, quote FROM rates ORDER BY base, quote').all();
        const withRate = (
          db.prepare('SELECT DISTINCT base, quote FROM rates WHERE rate IS NOT NULL ORDER BY base, quote').all() as {
            base: string;
            quote: string;
          }[]
        ).map((p) => `${p.base}/${p.quote}`);
        db.close();
        const store = ReplayStore.open(path, { readonly: true });
        try {
          expect(store.ratePairs()).toEqual(all);
          expect(store.pairsWithRate()).toEqual(withRate);
        } finally {
          store.close();
        }
      }),
      { seed: 5, numRuns: 150 },
    );
  });
});
