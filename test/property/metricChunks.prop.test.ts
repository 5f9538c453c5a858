/**
 * xrate's own metric points stored as columns (src/io/metricChunks.ts) answer exactly as the rows
 * of `metric_points` they replace (the reference reader and writer: test/helpers/metricRows.ts):
 * random streams of own points tick by tick, with the log's points (xrate's ids among them, in the
 * same series) and definitions between them, in random batches, written once as the replay writes
 * them (chunks, through the connection or the writer thread, a chunk per batch or gathered over
 * batches up to a snapshot, some replays stopped after a batch and resumed from an earlier
 * snapshot: cut back by `batch`) and once as rows; then random queries, each answer the same to
 * the byte (the chart's values at given times among them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type EngineSnapshot, OWN_METRIC_IDS, OWN_METRICS, OwnMetricBatch } from '../../src/core/engine.js';
import type { OwnMetricNames } from '../../src/core/engine/ownMetricBatch.js';
import type { MetricDefinitionEvent, MetricEvent, SeriesKey } from '../../src/core/metrics/events.js';
import type { MetricFilter, MetricsSource } from '../../src/core/metrics/source.js';
import { DatabaseMetrics } from '../../src/io/metricStore.js';
import { ReplayStore } from '../../src/io/store.js';
import { RowMetrics, writeOwnRows } from '../helpers/metricRows.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-metric-chunks-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const S = 1_000_000;
const T0 = 1_700_000_000 * S;
const NAMES: OwnMetricNames = {
  marketNames: ['K_SPOT_A_USD', 'K_SPOT_B_USD', 'B_SPOT_A_USD'],
  marketExchange: [0, 0, 1],
  exchangeNames: ['K', 'B'],
  assetNames: ['A', 'B'],
};
/** Subjects of each own metric's scope, by metric index (OWN_METRIC_IDS order). */
const SUBJECTS = OWN_METRIC_IDS.map((id) => (id.startsWith('XRATE_MARKET_') ? 3 : 2));
const VOLUME = OWN_METRIC_IDS.indexOf('XRATE_MARKET_VOLUME_24H');

const valueArb = fc.constantFrom(0, -0, 1.5, 0.1 + 0.2, 1e21, 123456.789, -2.5, Number.NaN, Number.POSITIVE_INFINITY, 7);
const itemArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      tick: fc.nat(3),
      points: fc.array(fc.record({ metric: fc.nat(OWN_METRIC_IDS.length - 1), subject: fc.nat(2), value: valueArb, odd: fc.boolean() }), {
        maxLength: 6,
      }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      log: fc.constantFrom('M1', 'XRATE_MARKET_SPREAD', 'XRATE_ASSET_USD_RATE'),
      dt: fc.integer({ min: -5, max: 40 }),
      kind: fc.constantFrom('decimal', 'text', 'time'),
      value: valueArb,
    }),
  },
  { weight: 1, arbitrary: fc.record({ definition: fc.constantFrom('M1', 'M2') }) },
  { weight: 1, arbitrary: fc.constant({ cut: true as const }) },
);
type Item = typeof itemArb extends fc.Arbitrary<infer T> ? T : never;

/** One batch's writes: own ticks (a batch of points each) and the log's events, in order. */
type Write = { own: OwnMetricBatch } | { point: MetricEvent } | { definition: MetricDefinitionEvent };

/** The drawn items as batches of writes (each own tick a batch of its own, reused by no other). */
function batchesOf(items: readonly Item[]): Write[][] {
  const batches: Write[][] = [[]];
  let time = T0;
  for (const it of items) {
    const cur = batches[batches.length - 1];
    if ('cut' in it) batches.push([]);
    else if ('tick' in it) {
      time += it.tick * S;
      const b = new OwnMetricBatch();
      b.reset(time, NAMES);
      for (const p of it.points) {
        const text = p.metric === VOLUME ? (p.odd ? `${p.value}0` : String(p.value)) : undefined;
        b.push(p.metric, p.subject % SUBJECTS[p.metric], p.value, text);
      }
      if (b.length > 0) cur.push({ own: b });
    } else if ('log' in it) {
      const v =
        it.kind === 'decimal'
          ? { kind: 'decimal' as const, dec: { value: it.value, text: String(it.value) } }
          : it.kind === 'text'
            ? { kind: 'text' as const, text: 'open' }
            : { kind: 'time' as const, us: T0 + 5 };
      const asset = it.log === 'XRATE_ASSET_USD_RATE';
      const point: MetricEvent = {
        type: 'metric',
        time: time + it.dt * (S / 4),
        metricId: it.log,
        exchangeId: asset ? 'XRATE' : 'K',
        ...(asset ? { assetId: 'A' } : { symbolId: 'K_SPOT_A_USD' }),
        value: v,
      };
      cur.push({ point });
    } else
      cur.push({ definition: { type: 'metric_definition', time, metricId: it.definition, description: `${it.definition} at ${time}` } });
  }
  return batches;
}

/** A snapshot of batch `batch` (what the store needs of one: where its own points are all written). */
const snapshot = (batch: number) => ({
  input: 0,
  line: 0,
  batch,
  final: false,
  engine: { lastTick: 0 } as unknown as EngineSnapshot,
  driver: null,
});

/**
 * Writes batches `from`..`to` - 1 (numbered from 1) into `store`, seqs going on from `seq`, a
 * snapshot in those whose number is in `snaps`; the seq after them.
 */
function writeBatches(
  store: ReplayStore,
  batches: Write[][],
  from: number,
  to: number,
  seq: number,
  rows: boolean,
  snaps: ReadonlySet<number> = new Set(),
): number {
  const w = store.writers();
  for (let k = from; k < to; k++) {
    store.begin();
    if (snaps.has(k + 1)) store.saveSnapshot(1, snapshot(k + 1), 'then');
    for (const x of batches[k]) {
      if ('own' in x) {
        if (rows) writeOwnRows(w, x.own, seq + 1, k + 1);
        else w.ownPoints(x.own, seq + 1, k + 1);
        seq += x.own.length;
      } else if ('point' in x) w.point(x.point, ++seq, k + 1);
      else w.definition(x.definition, ++seq, k + 1);
    }
    store.commit();
  }
  return seq;
}

/** The seq after batches 0..k - 1. */
const seqAfter = (batches: Write[][], k: number): number =>
  batches.slice(0, k).reduce((n, b) => n + b.reduce((m, x) => m + ('own' in x ? x.own.length : 1), 0), 0);

const filterArb: fc.Arbitrary<MetricFilter> = fc.record(
  {
    metric_id: fc.constantFrom('XRATE_MARKET_SPREAD', 'XRATE_ASSET_USD_RATE', 'XRATE_EXCHANGE_RANK', 'M1', 'NONE'),
    exchange_id: fc.constantFrom('K', 'B', 'XRATE'),
    symbol_id: fc.constantFrom('K_SPOT_A_USD', 'B_SPOT_A_USD'),
    asset_id: fc.constantFrom('A', 'B'),
    scope: fc.constantFrom('symbol' as const, 'asset' as const, 'exchange' as const),
  },
  { requiredKeys: [] },
);
const queryArb = fc.record({
  filter: filterArb,
  at: fc.option(fc.integer({ min: -3 * S, max: 60 * S }), { nil: undefined }),
  from: fc.integer({ min: -3 * S, max: 60 * S }),
  span: fc.integer({ min: 0, max: 60 * S }),
});

/** The series a chart samples (xrate's own, one of the log's in the same series, one of neither). */
const KEYS: SeriesKey[] = [
  { metric_id: 'XRATE_MARKET_SPREAD', exchange_id: 'K', symbol_id: 'K_SPOT_A_USD', asset_id: '' },
  { metric_id: 'XRATE_MARKET_WEIGHT_SHARE', exchange_id: 'B', symbol_id: 'B_SPOT_A_USD', asset_id: '' },
  { metric_id: 'XRATE_ASSET_USD_RATE', exchange_id: 'XRATE', symbol_id: '', asset_id: 'A' },
  { metric_id: 'M1', exchange_id: 'K', symbol_id: 'K_SPOT_A_USD', asset_id: '' },
];

/** Every answer of `m` to query `q`, as the routes serialise them. */
function answers(
  m: MetricsSource & Pick<DatabaseMetrics, 'valuesAt' | 'hasSeries'>,
  q: typeof queryArb extends fc.Arbitrary<infer T> ? T : never,
): Record<string, unknown> {
  const at = q.at === undefined ? undefined : T0 + q.at;
  const from = T0 + q.from;
  const cols = m.pointColumns(q.filter, from, from + q.span);
  return {
    listing: m.listing(at),
    series: m.series(q.filter, at),
    current: m.current(q.filter, at),
    spans: m.spans(q.filter, at),
    points: m.points(q.filter, from, from + q.span),
    columns: { times: Array.from(cols.times), values: Array.from(cols.values), texts: Array.from(cols.texts) },
    // The chart's samples of a series, at times in any order, and whether it has a point by then.
    valuesAt: KEYS.map((k) => m.valuesAt(k, [from + q.span, from, at ?? from, from + q.span / 2])),
    hasSeries: KEYS.map((k) => m.hasSeries(k, at)),
  };
}

let run = 0;

describe('own metric points stored as chunks', () => {
  it('answer every query as the same points stored as rows, resumed or not, with or without the writer thread, gathered over batches or not', () => {
    const seen = { resumed: 0, thread: 0, chunks: 0, mixed: 0, gathered: 0, long: 0 };
    fc.assert(
      fc.property(
        fc.array(itemArb, { minLength: 1, maxLength: 60 }),
        fc.array(queryArb, { minLength: 1, maxLength: 6 }),
        fc.option(fc.tuple(fc.nat(), fc.nat()), { nil: undefined }),
        fc.nat(7),
        // Points a chunk gathers over batches (0: a chunk per batch), and a snapshot every so many batches.
        fc.constantFrom(0, 0, 1, 2, 3, 7),
        fc.integer({ min: 1, max: 4 }),
        (items, queries, resume, threadDraw, chunkPoints, every) => {
          const batches = batchesOf(items);
          const n = batches.length;
          // The last batch stores a snapshot, as a replay's end does.
          const snaps = new Set(Array.from({ length: n }, (_, k) => k + 1).filter((b) => b % every === 0 || b === n));
          const opts = { writerThread: threadDraw === 0, ownChunkPoints: chunkPoints };
          const ref = join(dir, `r${run}-rows.sqlite`);
          const got = join(dir, `r${run++}-chunks.sqlite`);
          const rowStore = ReplayStore.open(ref, { scratch: true });
          writeBatches(rowStore, batches, 0, n, 0, true);
          rowStore.close();
          let store = ReplayStore.open(got, opts);
          if (resume !== undefined) {
            // Stopped after batch `stop` (what it gathered and did not write lost), resumed from
            // the snapshot of batch `back` <= stop (any batch when each has its chunks).
            const stop = resume[0] % (n + 1);
            let back = resume[1] % (stop + 1);
            if (chunkPoints > 0) while (back > 0 && !snaps.has(back)) back--;
            writeBatches(store, batches, 0, stop, 0, false, snaps);
            store.close();
            store = ReplayStore.open(got, opts);
            store.truncateAfter(back);
            writeBatches(store, batches, back, n, seqAfter(batches, back), false, snaps);
            if (back < stop) seen.resumed++;
          } else writeBatches(store, batches, 0, n, 0, false, snaps);
          store.close();
          if (opts.writerThread) seen.thread++;
          const a = new Database(got, { readonly: true });
          const b = new Database(ref, { readonly: true });
          try {
            const chunks = a.prepare('SELECT count(*) FROM metric_chunks').pluck().get() as number;
            seen.chunks += chunks;
            if (chunkPoints > 0) {
              seen.gathered++;
              // A chunk over batches: more points than any one batch gave its series.
              const most = a.prepare('SELECT max(n) FROM metric_chunks').pluck().get() as number | null;
              if ((most ?? 0) > chunkPoints) seen.long++;
            }
            const rows = a.prepare(`SELECT count(*) FROM metric_points WHERE metric_id LIKE 'XRATE%'`).pluck().get() as number;
            if (chunks > 0 && rows > 0) seen.mixed++;
            const mine = new DatabaseMetrics(a, OWN_METRICS);
            const theirs = new RowMetrics(b, OWN_METRICS);
            for (const q of queries) {
              const x = answers(mine, q);
              const y = answers(theirs, q);
              expect(x).toEqual(y);
              expect(JSON.stringify(x)).toBe(JSON.stringify(y));
            }
          } finally {
            a.close();
            b.close();
            rmSync(got, { force: true });
            rmSync(ref, { force: true });
          }
        },
      ),
      { seed: 4242, numRuns: 80 },
    );
    expect(seen.resumed).toBeGreaterThan(10);
    expect(seen.thread).toBeGreaterThan(3);
    expect(seen.chunks).toBeGreaterThan(300);
    expect(seen.mixed).toBeGreaterThan(10);
    expect(seen.gathered).toBeGreaterThan(20);
    expect(seen.long).toBeGreaterThan(5);
  }, 300_000);
});
