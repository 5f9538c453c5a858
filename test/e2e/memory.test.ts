/**
 * A log of 2,000,000 events (about 300 MB of NDJSON) is replayed in a subprocess in bounded
 * memory: the replay streams its input and output, so its peak resident set stays far below the
 * size of the file. Prints the measured peak RSS and throughput.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { bin, ensureBuilt } from './helpers.js';

const EVENTS = 2_000_000;
const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-mem-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => ensureBuilt(), 180_000);

describe('a log of a few million events', () => {
  it('is streamed in bounded memory', async () => {
    const log = join(dir, 'big.ndjson');
    const out = join(dir, 'rates.ndjson');
    const t0 = performance.now();
    // 2M events at 20 events/s: about 28 hours of event time, across seven eligibility refreshes.
    const w = await writeLog(log, { seed: 11, events: EVENTS, badRate: 0.0005, lateRate: 0.0005 });
    const genS = (performance.now() - t0) / 1000;
    const fileMb = w.bytes / (1024 * 1024);

    const r = bin(['replay', log, '--out', out, '--json'], { timeout: 200_000 });
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as {
      eventsRead: number;
      eventsRejected: number;
      rateChanges: number;
      durationMs: number;
      eventsPerSecond: number;
      peakRssMb: number;
    };
    console.log(
      `memory e2e: ${EVENTS} events, ${fileMb.toFixed(0)} MiB NDJSON (generated in ${genS.toFixed(1)} s); ` +
        `replay --out: ${(s.durationMs / 1000).toFixed(1)} s, ${Math.round(s.eventsPerSecond)} events/s, ` +
        `peak RSS ${s.peakRssMb} MB, ${s.rateChanges} rate changes, ${s.eventsRejected} rejects`,
    );
    expect(s.eventsRead).toBe(EVENTS);
    expect(s.eventsRejected).toBeGreaterThan(0);
    expect(s.rateChanges).toBeGreaterThan(100_000);
    expect(statSync(out).size).toBeGreaterThan(10_000_000);
    // Streaming: the whole process peaks well below the file it read.
    expect(fileMb).toBeGreaterThan(280);
    // The goal: no replay above 256 MB, whatever the length of its log (src/io/heapBudget.ts).
    expect(s.peakRssMb).toBeLessThan(256);
    expect(s.peakRssMb).toBeLessThan(fileMb);
  }, 240_000);
});
