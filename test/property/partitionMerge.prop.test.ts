/**
 * The SQL merge of a partitioned replay's databases (src/io/partitionMerge.ts, through
 * ReplayStore.mergePartitions) against its in-memory reference (src/reference/partitionMerge.ts),
 * on random partition outputs written into partition databases: the merged rate changes, OHLC
 * buckets, change series, rejects, metric points and definitions are the reference's, row for row,
 * whether the partitions are merged into a new database or into the first partition's own.
 *
 * The outputs are drawn from small pools, so that a row at a cut often repeats the last merged
 * one (and is dropped), and the pairs' ids include characters whose order by UTF-16 code unit (the
 * engine's) differs from their order by UTF-8 byte (SQLite's).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { OWN_METRIC_IDS, OwnMetricBatch, type PairRateChange } from '../../src/core/engine.js';
import type { OwnMetricNames } from '../../src/core/engine/ownMetricBatch.js';
import type { MetricDefinitionEvent, MetricEvent } from '../../src/core/metrics/events.js';
import { byCodeUnit } from '../../src/core/metrics/source.js';
import { pointRowsBySeq } from '../../src/io/metricMerge.js';
import { ReplayStore } from '../../src/io/store.js';
import {
  mergeBuckets,
  mergeOwnMetricPoints,
  mergeRateChanges,
  type PartitionBucket,
  trimFirstPerSeries,
} from '../../src/reference/index.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-prop-partition-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const S = 1_000_000;
/** Seconds of a partition's span: partition k outputs the ticks [SPAN k, SPAN (k + 1)) s. */
const SPAN = 6;
/** Pairs: '\u{1F600}' sorts before '\uFF21' by code unit, after it by UTF-8 byte. */
const PAIRS: readonly [string, string][] = [
  ['BTC', 'USD'],
  ['ETH', 'BTC'],
  ['ETH', 'USD'],
  ['\u{1F600}', 'USD'],
  ['\uFF21', 'USD'],
  ['\uFF21', '\u{1F600}'],
];
const PERIODS = ['1SEC', '5SEC', '1MIN'];
/** States of a pair (rate, time, rank, used, volume, fresh): the last is no rate. */
const STATES: readonly Pick<PairRateChange, 'rate' | 'time' | 'rank' | 'used' | 'volume' | 'fresh'>[] = [
  { rate: 1.5, time: 2 * S, rank: 1, used: 2, volume: 10, fresh: true },
  { rate: 1.5, time: 2 * S, rank: 1, used: 2, volume: 10, fresh: false },
  { rate: 1.5, time: 3 * S, rank: 1, used: 2, volume: 10.5, fresh: true },
  { rate: 2.25, time: 3 * S, rank: 2, used: 1, volume: 10, fresh: true },
  { rate: null, time: null, rank: null, used: 0, volume: 0, fresh: false },
];
/** Decimal texts of metric values: '1.50' and '1.5' differ as texts (and so as values written). */
const TEXTS = ['1', '1.5', '1.50', '2'];

/** One partition's output rows, as it writes them. */
interface PartOut {
  /** Its cut (the first: none). */
  from: number | undefined;
  changes: PairRateChange[];
  buckets: PartitionBucket[];
  series: { base: string; quote: string; tick: number; rate: number | null; follow: boolean }[];
  rejects: { input: number; source: string; line: number; reason: string; message: string; raw: string }[];
  /** Metric points and definitions in the order written (`seq` = index + 1). */
  metrics: (MetricEvent | MetricDefinitionEvent)[];
}

const pairOrder = (a: { base: string; quote: string }, b: { base: string; quote: string }): number =>
  byCodeUnit(a.base, b.base) || byCodeUnit(a.quote, b.quote);

/** Drops repeated keys (the first kept). */
function unique<T>(rows: readonly T[], key: (r: T) => string): T[] {
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(key(r)) && seen.add(key(r)) !== undefined);
}

const rateArb = fc.array(fc.tuple(fc.nat(SPAN - 1), fc.nat(PAIRS.length - 1), fc.nat(STATES.length - 1)), { maxLength: 24 });
const bucketArb = fc.array(
  fc.tuple(
    fc.nat(PAIRS.length - 1),
    fc.nat(PERIODS.length - 1),
    fc.nat(3),
    fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 4, maxLength: 4 }),
  ),
  { maxLength: 8 },
);
const seriesArb = fc.array(fc.tuple(fc.nat(SPAN - 1), fc.nat(PAIRS.length - 1), fc.constantFrom(null, 1.5, 2), fc.boolean()), {
  maxLength: 16,
});
const metricArb = fc.array(
  fc.oneof(
    fc.record({
      own: fc.nat(OWN_METRIC_IDS.length - 1),
      exchange: fc.constantFrom('KRAKEN', 'BINANCE'),
      subject: fc.nat(1),
      text: fc.nat(3),
    }),
    fc.record({ log: fc.constantFrom('FUNDING_RATE', 'OPEN_INTEREST'), text: fc.nat(3) }),
    fc.record({ definition: fc.constantFrom('FUNDING_RATE', 'OPEN_INTEREST') }),
  ),
  { maxLength: 20 },
);
const partArb = fc.record({ rates: rateArb, buckets: bucketArb, series: seriesArb, rejects: fc.nat(2), metrics: metricArb });
type Drawn = typeof partArb extends fc.Arbitrary<infer T> ? T : never;

/** Partition k's outputs from drawn values: rows in tick order, a tick's rows in the engine's order of pairs. */
function partOut(k: number, d: Drawn): PartOut {
  const t0 = SPAN * k * S;
  const changes = unique(d.rates, ([dt, p]) => `${dt}|${p}`)
    .map(([dt, p, st]) => ({ tick: t0 + dt * S, pair: p, base: PAIRS[p][0], quote: PAIRS[p][1], ...STATES[st] }))
    .sort((a, b) => a.tick - b.tick || pairOrder(a, b));
  const buckets = unique(d.buckets, ([p, pe, st]) => `${p}|${pe}|${st}`).map(([p, pe, st, [a, b, c, n]]) => {
    // The bucket straddling the partition's start (also the partition before's last), two inside, the one straddling its end.
    const start = (SPAN * k + [-1, 1, 3, SPAN - 1][st]) * S;
    return {
      track: `${PAIRS[p][0]}/${PAIRS[p][1]}`,
      period: PERIODS[pe],
      bucket: {
        start,
        end: start + S,
        timeOpen: t0 + a,
        timeClose: t0 + 10 + b,
        open: a,
        high: Math.max(a, b, c),
        low: Math.min(a, b, c),
        close: b,
        count: n,
      },
    };
  });
  const series = unique(d.series, ([dt, p]) => `${dt}|${p}`)
    .map(([dt, p, rate, follow]) => ({ base: PAIRS[p][0], quote: PAIRS[p][1], tick: t0 + dt * S, rate, follow }))
    .sort((a, b) => a.tick - b.tick);
  const rejects = Array.from({ length: d.rejects }, (_, i) => ({
    input: 0,
    source: 'log.ndjson',
    line: 10 * k + i,
    reason: 'bad_json',
    message: `line ${i} of partition ${k}`,
    raw: '{',
  }));
  const metrics = d.metrics.map((m, i): MetricEvent | MetricDefinitionEvent => {
    const time = t0 + i;
    if ('definition' in m) return { type: 'metric_definition', time, metricId: m.definition, description: `${m.definition} ${k}` };
    const text = TEXTS[m.text];
    const value = { kind: 'decimal' as const, dec: { value: Number(text), text } };
    if ('log' in m) return { type: 'metric', time, metricId: m.log, exchangeId: 'KRAKEN', symbolId: 'KRAKEN_SPOT_BTC_USD', value };
    const id = OWN_METRIC_IDS[m.own];
    const scope = id.startsWith('XRATE_MARKET_') ? 'symbolId' : id.startsWith('XRATE_ASSET_') ? 'assetId' : undefined;
    const subject = scope === undefined ? {} : { [scope]: scope === 'symbolId' ? `${m.exchange}_SPOT_${m.subject}` : `A${m.subject}` };
    // xrate writes its own points' floats as JavaScript does, but for the exact volumes.
    const own =
      id === 'XRATE_MARKET_VOLUME_24H' ? value : { kind: 'decimal' as const, dec: { value: Number(text), text: String(Number(text)) } };
    return { type: 'metric', time, metricId: id, exchangeId: scope === 'assetId' ? 'XRATE' : m.exchange, ...subject, value: own };
  });
  return { from: k === 0 ? undefined : t0, changes, buckets, series, rejects, metrics };
}

const OWN_IDS = new Set<string>(OWN_METRIC_IDS);
/** The engine's tables of the own points drawn: markets `${exchange}_SPOT_${subject}`, assets `A${subject}`. */
const NAMES: OwnMetricNames = {
  marketNames: ['KRAKEN_SPOT_0', 'KRAKEN_SPOT_1', 'BINANCE_SPOT_0', 'BINANCE_SPOT_1'],
  marketExchange: [0, 0, 1, 1],
  exchangeNames: ['KRAKEN', 'BINANCE'],
  assetNames: ['A0', 'A1'],
};

/** An own point as the engine hands it out: a tick's batch of one point. */
function ownBatch(m: MetricEvent): OwnMetricBatch {
  const b = new OwnMetricBatch();
  b.reset(m.time, NAMES);
  const metric = OWN_METRIC_IDS.indexOf(m.metricId as (typeof OWN_METRIC_IDS)[number]);
  const subject =
    m.assetId !== undefined
      ? NAMES.assetNames.indexOf(m.assetId)
      : m.symbolId !== undefined
        ? NAMES.marketNames.indexOf(m.symbolId)
        : NAMES.exchangeNames.indexOf(m.exchangeId);
  const dec = m.value.kind === 'decimal' ? m.value.dec : { value: Number.NaN, text: '' };
  b.push(metric, subject, dec.value, dec.text);
  return b;
}

/** Writes a partition's rows into the replay database `path` (batch `k + 1`): xrate's own points as the replay writes them (chunks). */
function write(path: string, p: PartOut, batch: number): void {
  const store = ReplayStore.open(path, { scratch: true });
  try {
    const w = store.writers();
    store.transaction(() => {
      for (const c of p.changes) w.rate(c, batch);
      for (const b of p.buckets) {
        const [base, quote] = b.track.split('/');
        w.bucket(base, quote, b.period, b.bucket, batch);
      }
      for (const s of p.series) w.series(s.base, s.quote, s.tick, s.rate ?? Number.NaN, s.follow, batch);
      for (const r of p.rejects) w.reject(r.input, r.source, r.line, r.reason, r.message, r.raw, batch);
      p.metrics.forEach((m, i) => {
        if (m.type === 'metric_definition') w.definition(m, i + 1, batch);
        else if (OWN_IDS.has(m.metricId)) w.ownPoints(ownBatch(m), i + 1, batch);
        else w.point(m, i + 1, batch);
      });
    });
  } finally {
    store.close();
  }
}

/** Every stored point (rows and chunks) as the rows of `metric_points` it is, in seq order. */
function points(path: string, db: Database.Database): Record<string, unknown>[] {
  const chunks = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT * FROM metric_points ORDER BY seq').iterate() as IterableIterator<Record<string, unknown>>;
    return [...pointRowsBySeq(rows, chunks)].map(({ metric_id, exchange_id, symbol_id, asset_id, time, kind, value, text, seq }) => ({
      metric_id,
      exchange_id,
      symbol_id,
      asset_id,
      time,
      kind,
      value,
      text,
      seq,
    }));
  } finally {
    chunks.close();
  }
}

/** The merged tables as the test compares them. */
function read(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    const all = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
    return {
      buckets: all('SELECT base, quote, period_id, start, "end", time_open, time_close, open, high, low, close, count FROM ohlc').sort(
        (a, b) =>
          pairOrder(a as { base: string; quote: string }, b as { base: string; quote: string }) ||
          byCodeUnit(a.period_id as string, b.period_id as string) ||
          (a.start as number) - (b.start as number),
      ),
      series: all('SELECT base, quote, tick, rate, follow FROM series').sort(
        (a, b) =>
          pairOrder(a as { base: string; quote: string }, b as { base: string; quote: string }) || (a.tick as number) - (b.tick as number),
      ),
      rejects: all('SELECT input, source, line, reason, message, raw FROM rejects ORDER BY rowid'),
      points: points(path, db),
      definitions: all('SELECT metric_id, description, time, seq FROM metric_definitions ORDER BY seq'),
    };
  } finally {
    db.close();
  }
}

/** What the reference says the merged tables hold, in the shapes of {@link read}. */
function expected(parts: readonly PartOut[]) {
  const buckets = mergeBuckets(parts.map((p) => p.buckets)).map(({ track, period, bucket: b }) => {
    const [base, quote] = track.split('/');
    const { start, end, timeOpen, timeClose, open, high, low, close, count } = b;
    return { base, quote, period_id: period, start, end, time_open: timeOpen, time_close: timeClose, open, high, low, close, count };
  });
  const series = trimFirstPerSeries(
    parts.map((p) => p.series),
    (s) => `${s.base}/${s.quote}`,
    (s) => `${s.rate}|${s.follow}`,
  )
    .map((s) => ({ ...s, follow: s.follow ? 1 : 0 }))
    .sort((a, b) => pairOrder(a, b) || a.tick - b.tick);
  const own = new Set<unknown>(OWN_METRIC_IDS);
  const kept = new Set<unknown>(
    mergeOwnMetricPoints(
      parts.map((p) => ({ points: p.metrics.filter((m): m is MetricEvent => m.type === 'metric' && own.has(m.metricId)) })),
    ),
  );
  const rows = parts.flatMap((p) => p.metrics.filter((m) => m.type !== 'metric' || !own.has(m.metricId) || kept.has(m)));
  const points: Record<string, unknown>[] = [];
  const definitions: Record<string, unknown>[] = [];
  rows.forEach((m, i) => {
    if (m.type === 'metric_definition') definitions.push({ metric_id: m.metricId, description: m.description, time: m.time, seq: i + 1 });
    else if (m.value.kind === 'decimal')
      points.push({
        metric_id: m.metricId,
        exchange_id: m.exchangeId,
        symbol_id: m.symbolId ?? '',
        asset_id: m.assetId ?? '',
        time: m.time,
        kind: 'decimal',
        value: m.value.dec.value,
        text: m.value.dec.text,
        seq: i + 1,
      });
  });
  return { buckets, series, rejects: parts.flatMap((p) => p.rejects), points, definitions };
}

let run = 0;

describe('the SQL merge of partition databases (src/io/partitionMerge.ts)', () => {
  it('writes the in-memory reference merge, table for table, row for row', () => {
    // What the draws exercised: rate rows at a cut dropped and kept, no-rate rows added at a cut,
    // first series rows and own-metric points dropped, buckets joined across a cut.
    const seen = { cutDropped: 0, cutKept: 0, expired: 0, seriesDropped: 0, pointsDropped: 0, joined: 0 };
    fc.assert(
      fc.property(fc.array(partArb, { minLength: 1, maxLength: 4 }), fc.boolean(), (drawn, intoFirst) => {
        const parts = drawn.map((d, k) => partOut(k, d));
        const paths = parts.map((_, k) => join(dir, `r${run}-p${k}.sqlite`));
        const target = join(dir, `r${run++}-merged.sqlite`);
        parts.forEach((p, k) => {
          write(k === 0 && intoFirst ? target : paths[k], p, k + 1);
        });
        const store = ReplayStore.open(target);
        try {
          const rest = (intoFirst ? parts.slice(1) : parts).map((p) => ({ path: paths[parts.indexOf(p)], from: p.from }));
          store.mergePartitions(rest);
          const merged = [...store.rateChanges()];
          const want = mergeRateChanges(parts.map((p) => ({ from: p.from ?? 0, dumpsState: p.from !== undefined, changes: p.changes })));
          expect(merged).toEqual(want);
          for (const p of parts.slice(1)) {
            const dumped = p.changes.filter((c) => c.tick === p.from).length;
            const kept = want.filter((c) => c.tick === p.from);
            const expired = kept.filter(
              (c) => !p.changes.some((d) => d.tick === p.from && d.base === c.base && d.quote === c.quote),
            ).length;
            seen.expired += expired;
            seen.cutKept += kept.length - expired;
            seen.cutDropped += dumped - (kept.length - expired);
          }
        } finally {
          store.close();
        }
        const got = read(target);
        const ref = expected(parts);
        expect(got).toEqual(ref);
        seen.seriesDropped += parts.reduce((n, p) => n + p.series.length, 0) - ref.series.length;
        seen.pointsDropped += parts.reduce((n, p) => n + p.metrics.length, 0) - ref.points.length - ref.definitions.length;
        seen.joined += parts.reduce((n, p) => n + p.buckets.length, 0) - ref.buckets.length;
        for (const p of paths) rmSync(p, { force: true });
        rmSync(target, { force: true });
      }),
      { seed: 2025, numRuns: 150 },
    );
    expect(seen.cutDropped).toBeGreaterThan(20);
    expect(seen.cutKept).toBeGreaterThan(20);
    expect(seen.expired).toBeGreaterThan(10);
    expect(seen.seriesDropped).toBeGreaterThan(10);
    expect(seen.pointsDropped).toBeGreaterThan(10);
    expect(seen.joined).toBeGreaterThan(10);
  });
});
