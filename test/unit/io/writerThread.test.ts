/**
 * The replay database written by its writer thread (src/io/writerThread.ts) holds what the same
 * writes on its own connection leave: every table, every row in rowid order, the snapshots' bytes;
 * a batch rolled back writes nothing; a failed write fails the run with the connection's message.
 * A batch's job lists each string once and gives its rows back as written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { OwnMetricBatch } from '../../../src/core/engine/ownMetricBatch.js';
import type { PairRateChange } from '../../../src/core/engine.js';
import { parseDec } from '../../../src/core/decimal.js';
import { type ReplayCheckpoint, ReplayStore } from '../../../src/io/store.js';
import { forEachRow, multiRowSql, orFail, type RowJob, RowJobBuilder } from '../../../src/io/rowJob.js';
import { WriterThread } from '../../../src/io/writerThread.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Every table of a database, each row in rowid order (key order without rowid), wall-clock columns left out. */
function dump(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  try {
    const tables = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as {
      name: string;
      sql: string;
    }[];
    const out: Record<string, unknown[]> = {};
    for (const { name, sql } of tables) {
      const order = sql.includes('WITHOUT ROWID') ? '' : ' ORDER BY rowid';
      const rows = db.prepare(`SELECT * FROM ${name}${order}`).all() as Record<string, unknown>[];
      out[name] = rows.map(({ started_at, finished_at, created_at, pid, ...r }) => r);
    }
    return out;
  } finally {
    db.close();
  }
}

const change = (tick: number, base: string, rate: number | null): PairRateChange =>
  ({
    tick,
    base,
    quote: 'USD',
    rate,
    time: rate === null ? null : tick - 5,
    rank: 1.5,
    used: 2,
    fresh: rate !== null,
    volume: 0.25,
    pair: -1,
  }) as PairRateChange;

function checkpoint(batch: number): ReplayCheckpoint {
  return { input: 0, line: batch * 10, batch, final: false, engine: { lastTick: batch * 1e6 } as never, driver: { n: batch } };
}

/** A batch of {@link write}: its rate rows, OHLC rows of keys that repeat (written amid the rates, at `split`). */
interface Batch {
  rates: [number, string, number | null][];
  buckets: [number, number][];
  split: number;
  rollback: boolean;
}

/** One run of batches on a store: rows of every table, a snapshot, a rolled-back batch, a batch that clears. */
function write(store: ReplayStore, batches: Batch[]): void {
  const run = store.beginRun(['log'], {}, {}, '2024-01-01T00:00:00Z', false);
  const w = store.writers();
  const own = new OwnMetricBatch();
  batches.forEach((b, i) => {
    const batch = i + 1;
    store.begin();
    if (i === 0) store.clearOutputs(run);
    // Runs of rows of one statement, longer and shorter than the writer thread inserts at once,
    // and buckets of one key replaced within a run.
    const cut = b.split % (b.rates.length + 1);
    for (const [tick, base, rate] of b.rates.slice(0, cut)) w.rate(change(tick, base, rate), batch);
    for (const [start, close] of b.buckets)
      w.bucket(
        'ETH',
        'USD',
        '1MIN',
        { start, end: start + 60, timeOpen: start, timeClose: start + 1, open: 1, high: 2, low: 0.5, close, count: 2 },
        batch,
      );
    for (const [tick, base, rate] of b.rates.slice(cut)) w.rate(change(tick, base, rate), batch);
    w.bucket(
      'BTC',
      'USD',
      '1MIN',
      { start: 0, end: 60, timeOpen: 1, timeClose: 2, open: 1, high: 2, low: 0.5, close: batch, count: batch },
      batch,
    );
    w.series('BTC', 'USD', batch, batch % 2 ? Number.NaN : batch, batch % 3 === 0, batch);
    w.reject(0, 'log', batch, 'bad_json', 'm', `raw ${batch}`, batch);
    w.point({ type: 'metric', time: batch, metricId: 'M', exchangeId: 'X', value: { kind: 'text', text: 't' } }, batch, batch);
    w.point({ type: 'metric', time: batch, metricId: 'M', exchangeId: 'X', assetId: 'A', value: { kind: 'time', us: 7 } }, batch, batch);
    own.reset(batch, { marketNames: ['X_SPOT_A_B'], marketExchange: [0], exchangeNames: ['X'], assetNames: ['A'] });
    own.push(0, 0, 1.5);
    own.push(4, 0, 2, '2.000');
    w.ownPoints(own, 100 * batch, batch);
    w.definition({ type: 'metric_definition', time: batch, metricId: 'M', description: 'd' }, batch, batch);
    w.connectivity({ type: 'connectivity', time: batch, exchangeId: 'X', reachable: batch % 2 === 0 } as never, batch, batch);
    w.position(
      {
        type: 'position',
        time: batch,
        account: 'X:1',
        symbolIdExchange: 'AB',
        avgEntryPrice: parseDec('1.50'),
        quantity: parseDec('2'),
        side: 'long',
      } as never,
      { base: 'A', quote: 'B' },
      batch,
      batch,
    );
    store.saveSnapshot(run, checkpoint(batch), '2024-01-01T00:00:00Z');
    if (b.rollback) store.rollback();
    else store.commit();
  });
  store.finishRun(run, {
    finished_at: 'x',
    status: 'complete',
    events_read: 1,
    events_accepted: 1,
    events_rejected: 0,
    rejects_by_reason: '{}',
    quotes_discarded: 0,
    ticks: 1,
    first_tick: 1,
    last_tick: 1,
    pairs_with_rate: 1,
    rate_changes: 1,
    buckets: 1,
    duration_ms: 1,
    stopped: 0,
  });
}

describe('the writer thread', () => {
  it('writes every table as the connection does, batch by batch (fast-check, fixed seed)', () => {
    const batches = fc.array(
      fc.record({
        rates: fc.array(fc.tuple(fc.nat(1e6), fc.constantFrom('BTC', 'ETH', 'é'), fc.option(fc.double({ noNaN: true }), { nil: null })), {
          maxLength: 300,
        }),
        buckets: fc.array(fc.tuple(fc.nat(4), fc.double({ noNaN: true, min: -1e9, max: 1e9 })), { maxLength: 80 }),
        split: fc.nat(),
        rollback: fc.boolean(),
      }),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(batches, (bs) => {
        const direct = join(dir, `direct-${++n}.sqlite`);
        const threaded = join(dir, `threaded-${n}.sqlite`);
        for (const [path, writerThread] of [
          [direct, false],
          [threaded, true],
        ] as const) {
          // A previous run's outputs, cleared by the first batch.
          const before = ReplayStore.open(path);
          before.transaction(() => before.writers().rate(change(1, 'OLD', 1), 1));
          before.close();
          const s = ReplayStore.open(path, { writerThread });
          write(s, bs);
          s.close();
        }
        expect(dump(threaded)).toEqual(dump(direct));
      }),
      { seed: 27, numRuns: 8 },
    );
  });

  it('fails the run with the message of the failed write, and writes no batch after it', () => {
    const errors: string[] = [];
    for (const writerThread of [false, true]) {
      const path = join(dir, `fail-${writerThread}.sqlite`);
      const s = ReplayStore.open(path, { writerThread });
      const run = s.beginRun(['log'], {}, {}, '2024-01-01T00:00:00Z', false);
      const w = s.writers();
      let error: unknown;
      try {
        for (let batch = 1; batch <= 3; batch++) {
          s.begin();
          try {
            w.rate(change(batch, 'BTC', 1), batch);
            // A row the table refuses (base is NOT NULL).
            if (batch === 2) w.rate(change(batch, null as unknown as string, 1), batch);
            s.commit();
          } catch (e) {
            s.rollback();
            throw e;
          }
        }
        s.finishRun(run, {} as never);
      } catch (e) {
        error = e;
        s.failRun(run, (e as Error).message, 'x');
      }
      s.close();
      expect(error).toBeInstanceOf(Error);
      errors.push((error as Error).message);
      const db = new Database(path, { readonly: true });
      expect(db.prepare('SELECT batch FROM rates ORDER BY rowid').pluck().all()).toEqual([1]);
      expect(db.prepare('SELECT status FROM runs').pluck().get()).toBe(`failed: ${errors.at(-1)}`);
      db.close();
    }
    expect(errors[1]).toBe(errors[0]);
    expect(errors[0]).toContain('NOT NULL constraint failed: rates.base');
  });

  it('marks the run failed when the last batch fails, at finishRun', () => {
    const path = join(dir, 'fail-last.sqlite');
    const s = ReplayStore.open(path, { writerThread: true });
    const run = s.beginRun(['log'], {}, {}, '2024-01-01T00:00:00Z', false);
    const w = s.writers();
    s.begin();
    w.rate(change(1, null as unknown as string, 1), 1);
    // Posted: the thread fails it later.
    s.commit();
    expect(() => s.finishRun(run, {} as never)).toThrow('NOT NULL constraint failed: rates.base');
    s.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT status FROM runs').pluck().get()).toBe('failed: NOT NULL constraint failed: rates.base');
    expect(db.prepare('SELECT count(*) FROM rates').pluck().get()).toBe(0);
    db.close();
  });
});

describe('a writer thread that ends by an error outside any job', () => {
  it('fails the run with a clear error at the next wait, once, and closes without waiting', () => {
    const path = join(dir, `ended-${n++}.sqlite`);
    ReplayStore.open(path).close(); // the schema
    const w = new WriterThread(path);
    const sink = w.sink('INSERT INTO meta(key, value) VALUES (?, ?)');
    try {
      w.begin();
      sink('a', '1');
      w.commit();
      w.drain();
      // A message the thread cannot read: an error no job catches ends it.
      (w as unknown as { worker: Worker }).worker.postMessage(null);
      w.begin();
      sink('b', '2');
      w.commit();
      expect(() => w.drain()).toThrow(/writer thread ended unexpectedly, 1 batch of rows not written/);
      w.drain(); // thrown once: the run has failed
      w.begin();
      sink('c', '3');
      expect(() => w.commit()).not.toThrow();
    } finally {
      w.close();
    }
    const db = new Database(path, { readonly: true });
    const keys = db.prepare(`SELECT key FROM meta WHERE key IN ('a', 'b', 'c') ORDER BY key`).all() as { key: string }[];
    db.close();
    expect(keys.map((r) => r.key)).toEqual(['a']);
  });
});

describe('jobs that wait for the writer thread', () => {
  const RATE = 'INSERT INTO rates(tick, base, quote, rate, time, rank, used, fresh, volume, batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
  /** Posts a batch of `rows` rate rows (a base of null is refused by the table: NOT NULL); returns the error thrown, if any. */
  function post(w: WriterThread, batch: number, rows: number, base: string | null = 'BTC'): unknown {
    const sink = w.sink(RATE);
    w.begin();
    for (let i = 0; i < rows; i++) sink(batch * 1e6 + i, base, 'USD', 1, 0, 1, 1, 1, 0, batch);
    try {
      w.commit();
    } catch (e) {
      return e;
    }
    return undefined;
  }
  const batches = (path: string): Record<number, number> => {
    const db = new Database(path, { readonly: true });
    const rows = db.prepare('SELECT batch, count(*) AS n FROM rates GROUP BY batch ORDER BY batch').all() as { batch: number; n: number }[];
    db.close();
    return Object.fromEntries(rows.map((r) => [r.batch, r.n]));
  };

  /**
   * Posts the batches while another connection holds the database's write lock, so that they all
   * wait behind the first (whose first insert waits for the lock), then lets the thread go on.
   */
  function postBehindLock(path: string, w: WriterThread, bases: (string | null)[]): unknown {
    const lock = new Database(path);
    lock.prepare('BEGIN IMMEDIATE').run();
    let error: unknown;
    try {
      for (let b = 0; b < bases.length && error === undefined; b++) error = post(w, b + 1, 1000, bases[b]);
    } finally {
      lock.prepare('COMMIT').run();
      lock.close();
    }
    try {
      w.drain();
    } catch (e) {
      error ??= e;
    }
    return error;
  }

  it('are committed together, each whole, in the order posted', () => {
    const path = join(dir, `group-${n++}.sqlite`);
    ReplayStore.open(path).close(); // the schema
    const w = new WriterThread(path);
    try {
      expect(postBehindLock(path, w, ['BTC', 'ETH', 'SOL'])).toBeUndefined();
      expect(w.commits).toBe(1);
      // Alone, a job commits by itself.
      post(w, 4, 10);
      w.drain();
      expect(w.commits).toBe(2);
    } finally {
      w.close();
    }
    expect(batches(path)).toEqual({ 1: 1000, 2: 1000, 3: 1000, 4: 10 });
    const db = new Database(path, { readonly: true });
    const ticks = db.prepare('SELECT tick FROM rates ORDER BY rowid').pluck().all() as number[];
    db.close();
    expect(ticks.every((t, i) => i === 0 || t > ticks[i - 1])).toBe(true);
  });

  it('commit the jobs before a failed one, and none after it', () => {
    const path = join(dir, `group-fail-${n++}.sqlite`);
    ReplayStore.open(path).close();
    const w = new WriterThread(path);
    let error: unknown;
    try {
      // 1, 2 and 3 wait together, 3 fails: 1 and 2 are committed.
      error = postBehindLock(path, w, ['BTC', 'ETH', null]);
      expect(w.commits).toBe(1);
      // After a failure nothing more is written.
      expect(post(w, 4, 10)).toBeUndefined();
      w.drain();
    } finally {
      w.close();
    }
    expect((error as Error).message).toContain('NOT NULL constraint failed: rates.base');
    expect(batches(path)).toEqual({ 1: 1000, 2: 1000 });
  });
});

/** The batch and the blob of every snapshot of a database, in order. */
function snapshotsOf(path: string): { batch: number; state: Buffer }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT batch, state FROM snapshots ORDER BY id').all() as { batch: number; state: Buffer }[];
  } finally {
    db.close();
  }
}

describe('a snapshot blob handed to the writer thread', () => {
  it('moves to the thread (not copied) when it owns its memory, and is stored byte for byte', () => {
    const path = join(dir, `moved-${n++}.sqlite`);
    ReplayStore.open(path).close(); // the schema
    const w = new WriterThread(path);
    const blob = Buffer.alloc(1 << 20, 7);
    const small = Buffer.from('a slice of the shared pool');
    try {
      w.begin();
      w.saveSnapshot([1, 1, 0, 0, 0, 0, blob, 'now']);
      w.commit();
      expect(blob.byteLength).toBe(0); // detached: it moved
      w.begin();
      w.saveSnapshot([1, 2, 0, 0, 0, 0, small, 'now']);
      w.commit();
      expect(small.toString()).toBe('a slice of the shared pool'); // pooled: copied, still usable
      w.drain();
    } finally {
      w.close();
    }
    const rows = snapshotsOf(path);
    expect(rows.map((r) => r.batch)).toEqual([1, 2]);
    expect(rows[0].state.equals(Buffer.alloc(1 << 20, 7))).toBe(true);
    expect(rows[1].state.toString()).toBe('a slice of the shared pool');
  });

  it('handed over twice, fails the second job with a clear error, and the thread goes on', () => {
    const path = join(dir, `twice-${n++}.sqlite`);
    ReplayStore.open(path).close(); // the schema
    const w = new WriterThread(path);
    const blob = Buffer.alloc(1 << 16, 3);
    try {
      w.begin();
      w.saveSnapshot([1, 1, 0, 0, 0, 0, blob, 'now']);
      w.commit();
      w.begin();
      w.saveSnapshot([1, 2, 0, 0, 0, 0, blob, 'now']);
      expect(() => w.commit()).toThrow(/already moved to the writer thread/);
      w.begin();
      w.saveSnapshot([1, 3, 0, 0, 0, 0, Buffer.alloc(1 << 16, 4), 'now']);
      w.commit();
      w.drain();
    } finally {
      w.close();
    }
    const rows = snapshotsOf(path);
    expect(rows.map((r) => r.batch)).toEqual([1, 3]);
    expect(rows[0].state.equals(Buffer.alloc(1 << 16, 3))).toBe(true);
    expect(rows[1].state.equals(Buffer.alloc(1 << 16, 4))).toBe(true);
  });
});

describe("a batch's job of rows", () => {
  /** A row's value: a string, a number, null, or bytes (a BLOB; a slice of a larger buffer too, as Node's pool gives). */
  const value = fc.oneof(
    fc.constantFrom('BTC', 'USD', 'ETH', ''),
    fc.double(),
    fc.constant(null),
    fc.uint8Array({ maxLength: 300 }),
    fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.nat()).map(([b, at]) => Buffer.from(b).subarray(at % b.length)),
  );

  it('lists each string once, and gives every row its values back in order, in columns given back and written again', () => {
    fc.assert(
      fc.property(
        // Jobs of rows of two values, and whether each job's columns are given back once read.
        fc.array(fc.tuple(fc.array(fc.array(value, { minLength: 2, maxLength: 2 }), { maxLength: 60 }), fc.boolean()), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.boolean(),
        (jobs, dropFirst) => {
          const b = new RowJobBuilder();
          const sink = b.sink('INSERT INTO t(a, b) VALUES (?, ?)');
          if (dropFirst) {
            // A rolled-back batch's strings are not the next job's.
            sink('XRP', 'XRP');
            b.drop();
          }
          const plain = (r: unknown[]) => r.map((v) => (v instanceof Uint8Array ? [...v] : v));
          const readBack = (job: RowJob): unknown[][] => {
            const back: unknown[][] = [];
            forEachRow(
              job,
              (_, values) => back.push(plain(values)),
              () => 2,
            );
            return back;
          };
          const kept: [RowJob, unknown[][]][] = [];
          for (const [rows, giveBack] of jobs) {
            for (const [x, y] of rows) sink(x, y);
            const job = b.take();
            expect(new Set(job.strings).size).toBe(job.strings.length);
            expect(job.strings.includes('XRP')).toBe(false);
            expect(readBack(job)).toEqual(rows.map(plain));
            if (giveBack) b.reuse(job);
            else kept.push([job, rows.map(plain)]);
          }
          // Nothing is written into a job's columns once taken, but for columns given back.
          for (const [job, rows] of kept) expect(readBack(job)).toEqual(rows);
        },
      ),
      { seed: 45, numRuns: 200 },
    );
  });
});

describe('the multi-row form of a statement (the writer thread inserts rows that follow each other so)', () => {
  it("repeats a one-row INSERT's tuple of parameters; a statement of another shape has none", () => {
    expect(multiRowSql('INSERT INTO t(a, b) VALUES (?, ?)', 3)).toBe('INSERT INTO t(a, b) VALUES (?, ?), (?, ?), (?, ?)');
    expect(multiRowSql('INSERT OR REPLACE INTO ohlc(a, "end")\n       VALUES (?,?)  ', 2)).toBe(
      'INSERT OR REPLACE INTO ohlc(a, "end")\n       VALUES (?,?), (?,?)',
    );
    for (const sql of [
      'INSERT INTO t(a, b) VALUES (?, 0)',
      'INSERT INTO t(a) SELECT ?',
      'INSERT INTO t(a) VALUES (?) ON CONFLICT(a) DO NOTHING',
      'UPDATE t SET a = ?',
      'INSERT INTO t(a, b) VALUES (?, ?), (?, ?)',
    ])
      expect(multiRowSql(sql, 2), sql).toBeUndefined();
    // The form inserts the rows in order, as one statement a row does (later rows replace earlier ones).
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)');
    db.prepare(multiRowSql('INSERT OR REPLACE INTO t(k, v) VALUES (?, ?)', 3)!).run(1, 'a', 2, 'b', 1, 'c');
    expect(db.prepare('SELECT k, v FROM t ORDER BY k').raw().all()).toEqual([
      [1, 'c'],
      [2, 'b'],
    ]);
    db.close();
  });

  it('of a plain INSERT is made INSERT OR FAIL (no statement journal); one with a conflict clause of its own is not', () => {
    expect(orFail('INSERT INTO t(a, b) VALUES (?, ?)')).toBe('INSERT OR FAIL INTO t(a, b) VALUES (?, ?)');
    expect(orFail('  insert\n into t(a) VALUES (?)')).toBe('  insert OR FAIL\n into t(a) VALUES (?)');
    for (const sql of [
      'INSERT OR REPLACE INTO t(a) VALUES (?)',
      'INSERT OR IGNORE INTO t(a) VALUES (?)',
      'UPDATE t SET a = ?',
      'INSERT INTOt',
    ])
      expect(orFail(sql), sql).toBeUndefined();
    // OR FAIL keeps the rows before the one that failed: the writer thread undoes the whole job (above).
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t(k INTEGER NOT NULL)');
    db.exec('BEGIN');
    expect(() => db.prepare(multiRowSql(orFail('INSERT INTO t(k) VALUES (?)')!, 3)!).run(1, 2, null)).toThrow(
      'NOT NULL constraint failed: t.k',
    );
    expect(db.prepare('SELECT k FROM t').pluck().all()).toEqual([1, 2]);
    db.exec('ROLLBACK');
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
    db.close();
  });
});
