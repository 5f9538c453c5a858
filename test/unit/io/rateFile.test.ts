import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PairRateChange } from '../../../src/core/engine.js';
import { RateFileWriter, rateChangeToNdjson } from '../../../src/io/rateFile.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-ratefile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function change(i: number): PairRateChange {
  return {
    tick: i * 1_000_000,
    pair: 0,
    base: 'BTC',
    quote: 'USD',
    rate: 60_000 + i / 7,
    time: i * 1_000_000 - 5,
    rank: 1,
    used: 2,
    volume: 3.5,
    fresh: true,
  };
}

describe('RateFileWriter', () => {
  it('writes every change in order, waiting for the file between batches when it is behind', async () => {
    const path = join(dir, 'rates.ndjson');
    const w = new RateFileWriter(path);
    const n = 60_000; // several MB: more than the stream's buffer
    let waited = 0;
    for (let i = 0; i < n; i++) {
      w.write(change(i));
      if (i % 4096 === 4095) {
        let settled = false;
        const p = w.drained().then(() => {
          settled = true;
        });
        await Promise.resolve();
        if (!settled) waited++; // the file was behind: the promise waits for its 'drain'
        await p;
      }
    }
    await w.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBe(n);
    expect(lines[0]).toBe(rateChangeToNdjson(change(0)).trimEnd());
    expect(lines[n - 1]).toBe(rateChangeToNdjson(change(n - 1)).trimEnd());
    expect(waited).toBeGreaterThan(0);
  });

  it('does not wait for a drain that came before it was asked', async () => {
    const w = new RateFileWriter(join(dir, 'drained.ndjson'));
    // More than a flush: the stream is full, then left to take it all.
    for (let i = 0; i < 2_000; i++) w.write(change(i));
    const stream = (w as unknown as { stream: { writableNeedDrain: boolean } }).stream;
    expect(stream.writableNeedDrain).toBe(true);
    while (stream.writableNeedDrain) await new Promise((r) => setTimeout(r, 5));
    const late = await Promise.race([w.drained().then(() => 'drained'), new Promise((r) => setTimeout(() => r('still waiting'), 2_000))]);
    expect(late).toBe('drained');
    await w.close();
  });
});
