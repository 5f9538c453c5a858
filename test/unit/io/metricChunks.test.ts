/**
 * The own metrics' chunk writer (src/io/metricChunks.ts) over long runs of a few busy series and
 * many quiet ones: every point comes back from its chunks in order, whatever room the series keep
 * between chunks, and the room kept by empty series stays within its bound.
 */
import { describe, expect, it } from 'vitest';
import { OWN_METRIC_IDS, OwnMetricBatch } from '../../../src/core/engine.js';
import { decodeChunk, OwnChunkWriter } from '../../../src/io/metricChunks.js';

const NAMES = {
  marketNames: Array.from({ length: 400 }, (_, m) => `K_SPOT_A${m}_USD`),
  marketExchange: new Array(400).fill(0),
  exchangeNames: ['K'],
  assetNames: ['USD'],
};
/** XRATE_MARKET_SPREAD: a metric per market, no text. */
const SPREAD = OWN_METRIC_IDS.indexOf('XRATE_MARKET_SPREAD');

function run(chunkPoints: number, series: number, busy: number, ticks: number, batchTicks: number) {
  const rows: unknown[][] = [];
  const w = new OwnChunkWriter(
    () =>
      (...v) =>
        void rows.push(v),
    chunkPoints,
  );
  const want = new Map<number, number[]>();
  let seq = 1;
  let maxRoom = 0;
  for (let t = 0; t < ticks; t++) {
    const b = new OwnMetricBatch();
    b.reset(1_700_000_000_000_000 + t * 1_000_000, NAMES);
    // The first `busy` series have a point every tick, the others one now and then.
    for (let m = 0; m < series; m++) {
      if (m >= busy && (t + m) % 97 !== 0) continue;
      const v = t * 1000 + m + 0.5;
      b.push(SPREAD, m, v);
      want.set(m, [...(want.get(m) ?? []), v]);
    }
    const batch = Math.floor(t / batchTicks) + 1;
    w.add(b, seq, batch);
    seq += b.length;
    if ((t + 1) % batchTicks === 0) {
      w.flush(t + 1 === ticks);
      maxRoom = Math.max(maxRoom, w.retainedRoom);
    }
  }
  w.flush(true);
  const got = new Map<number, number[]>();
  for (const r of rows) {
    const m = NAMES.marketNames.indexOf(r[2] as string);
    const p = decodeChunk({ n: r[6] as number, points: r[9] as Uint8Array, texts: r[10] as string | null });
    got.set(m, [...(got.get(m) ?? []), ...p.values]);
  }
  return { want, got, maxRoom, chunks: rows.length };
}

describe('own metric chunks', () => {
  it('give back every point of busy series, chunk after chunk, with their room kept between chunks', () => {
    const r = run(100, 40, 4, 3_000, 50);
    expect(r.got).toEqual(r.want);
    expect(r.chunks).toBeGreaterThan(100);
    // The busy series keep their room (more than the starting 16 points each).
    expect(r.maxRoom).toBeGreaterThan(4 * 64);
  });

  it('keeps no more room than twice the points it may gather', () => {
    // 1 point a chunk: at most 2 x 1,024 points of room kept, with 300 series of 100 points a batch.
    const r = run(1, 300, 300, 400, 100);
    expect(r.got).toEqual(r.want);
    expect(r.maxRoom).toBeGreaterThan(0);
    expect(r.maxRoom).toBeLessThanOrEqual(2 * 1024);
  });

  it('keeps none when it writes a chunk per batch', () => {
    const r = run(0, 40, 4, 600, 200);
    expect(r.got).toEqual(r.want);
    expect(r.maxRoom).toBe(0);
  });

  it("writes a chunk's times, values and seqs as columns, and only the texts that are not their value's own", () => {
    const VOLUME = OWN_METRIC_IDS.indexOf('XRATE_MARKET_VOLUME_24H');
    const rows: unknown[][] = [];
    const w = new OwnChunkWriter(
      () =>
        (...v) =>
          void rows.push(v),
      256,
    );
    const texts = ['1.50', '2', '0.1', '3.000', '-0', '7.25'];
    const T0 = 1_700_000_000_000_000;
    for (let t = 0; t < texts.length; t++) {
      const b = new OwnMetricBatch();
      b.reset(T0 + t * 1_000_000, NAMES);
      b.push(SPREAD, 1, t + 0.5);
      b.push(VOLUME, 1, Number(texts[t]), texts[t]);
      w.add(b, 10 + 2 * t, 1);
    }
    w.flush(true);
    expect(rows.length).toBe(2);
    const [spread, volume] = rows;
    // first, last, n, seq_first, seq_last; the texts column only where the text is not String(value).
    expect(volume.slice(4, 9)).toEqual([T0, T0 + 5_000_000, 6, 11, 21]);
    expect(JSON.parse(volume[10] as string)).toEqual([
      [0, '1.50'],
      [3, '3.000'],
      [4, '-0'],
    ]);
    expect(spread[10]).toBeNull();
    const p = decodeChunk({ n: 6, points: volume[9] as Uint8Array, texts: volume[10] as string | null });
    expect(Array.from(p.times)).toEqual(texts.map((_, t) => T0 + t * 1_000_000));
    expect(Array.from(p.values)).toEqual([1.5, 2, 0.1, 3, 0, 7.25]);
    expect(Array.from(p.seqs)).toEqual([11, 13, 15, 17, 19, 21]);
    expect(texts.map((_, i) => p.text(i))).toEqual(texts);
  });
});
