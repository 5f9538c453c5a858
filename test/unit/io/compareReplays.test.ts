import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../../scripts/gen-log.js';
import { COMPARED_TABLES, compareReplays, replaysEqual } from '../../../src/io/compareReplays.js';
import { replay } from '../../../src/replay/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-compare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = { maxRateAgeSeconds: 600, volumeWindowSeconds: 600, refreshEverySeconds: 300 };
const LOG = join(dir, 'log.ndjson');
const A = join(dir, 'a.sqlite');
const B = join(dir, 'b.sqlite');

beforeAll(async () => {
  await writeLog(LOG, { seed: 5, events: 3_000, rate: 2, badRate: 0.02, lateRate: 0.01 });
  // Two metric definitions after the last line (the generator writes none).
  const lines = readFileSync(LOG, 'utf8').trimEnd().split('\n');
  const times = lines.map((l) => Date.parse(/"time":"([^"]+)"/.exec(l)?.[1] ?? '') || 0);
  const end = times.reduce((a, b) => Math.max(a, b), 0) + 1000;
  for (const [id, k] of [
    ['A_METRIC', 0],
    ['B_METRIC', 1],
  ] as const)
    appendFileSync(
      LOG,
      `${JSON.stringify({ type: 'metric_definition', time: new Date(end + k * 1000).toISOString(), metric_id: id, description: id })}\n`,
    );
  // Two points of a metric of the log (xrate's own are stored as chunks), so that metric_points has rows.
  for (const k of [0, 1])
    appendFileSync(
      LOG,
      `${JSON.stringify({ type: 'metric', time: new Date(end + 1500 + k * 200).toISOString(), metric_id: 'FUNDING_RATE', exchange_id: 'BINANCE', value_decimal: `0.000${k + 1}` })}\n`,
    );
  // A position and a connectivity change, so that their tables have rows too.
  const at = (s: number) => new Date(end + s * 1000).toISOString();
  appendFileSync(
    LOG,
    `${JSON.stringify({ type: 'position', time: at(2), exchange_id: 'BINANCE~hedge', symbol_id_exchange: 'BTCUSDT', avg_entry_price: '60000', quantity: '0.5', side: 'BUY' })}\n` +
      `${JSON.stringify({ type: 'connectivity', time: at(3), exchange_id: 'KRAKEN', reachable: false })}\n`,
  );
  await replay({ inputs: [LOG], db: A, config, ownMetrics: true });
  await replay({ inputs: [LOG], db: B, config, ownMetrics: true, batchSize: 100 });
}, 60_000);

/** A copy of `from` (default A) changed by `sql`. */
function changed(name: string, sql: string, from = A): string {
  const path = join(dir, `${name}.sqlite`);
  copyFileSync(from, path);
  const d = new Database(path);
  d.exec(sql);
  d.close();
  return path;
}

describe('compareReplays', () => {
  it('finds two replays of one log equal in every table (batches, run ids and times aside), with their row counts', () => {
    const r = compareReplays(A, B);
    expect(r.map((t) => t.table)).toEqual(COMPARED_TABLES);
    expect(replaysEqual(r)).toBe(true);
    for (const t of r) {
      expect(t.rows[0], t.table).toBeGreaterThan(0);
      expect(t.rows[1], t.table).toBe(t.rows[0]);
    }
    // The second replay wrote smaller batches: the batch numbers differ, and are left out.
    const batches = (p: string) => new Database(p, { readonly: true }).prepare('SELECT max(batch) AS b FROM rates').get();
    expect(batches(A)).not.toEqual(batches(B));
    expect(compareReplays(A, B, { tables: ['ohlc', 'runs'] }).map((t) => t.table)).toEqual(['ohlc', 'runs']);
  });

  // One changed, one missing and one extra row in each table: found, at the right row. A row is
  // named by its key: rowid, seq, or the primary key of a table without rowid.
  const tables: [string, string[], string][] = [
    ['rates', ['rowid'], 'rate = rate * (1 + 1e-15)'],
    ['ohlc', ['base', 'quote', 'period_id', 'start'], 'count = count + 1'],
    ['series', ['base', 'quote', 'tick'], 'follow = 1 - follow'],
    ['rejects', ['rowid'], `reason = 'other'`],
    ['metric_points', ['seq'], 'recv_time = recv_time + 1'],
    ['metric_definitions', ['seq'], `description = description || '.'`],
  ];
  for (const [table, key, set] of tables) {
    it(`reports a changed, a missing and an extra row of ${table}`, () => {
      // metric_points: the log's points alone (xrate's own, chunks, are compared as rows below).
      const base = table === 'metric_points' ? changed('rows-only', 'DELETE FROM metric_chunks') : A;
      const d = new Database(base, { readonly: true });
      const all = d
        .prepare(`SELECT ${key.join(', ')} FROM ${table} ORDER BY ${key.join(', ')}`)
        .raw()
        .all() as unknown[][];
      const cols = (d.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((x) => `"${x.name}"`);
      d.close();
      expect(all.length).toBeGreaterThan(1);
      const sqlValue = (v: unknown) => (typeof v === 'string' ? `'${v}'` : String(v));
      const where = (row: unknown[]) => key.map((c, i) => `${c} = ${sqlValue(row[i])}`).join(' AND ');
      const k = Math.floor(all.length / 2);

      const c = only(compareReplays(base, changed(`${table}-changed`, `UPDATE ${table} SET ${set} WHERE ${where(all[k])}`, base)));
      expect(c.map((t) => t.table)).toEqual([table]);
      expect(c[0].difference!.index).toBe(k);
      expect(c[0].rows).toEqual([all.length, all.length]);
      expect(c[0].difference!.columns).toHaveLength(1);

      const m = only(compareReplays(base, changed(`${table}-missing`, `DELETE FROM ${table} WHERE ${where(all[k])}`, base)));
      expect(m.map((t) => t.table)).toEqual([table]);
      expect(m[0].rows).toEqual([all.length, all.length - 1]);
      expect(m[0].difference!.index).toBe(k);

      // An extra row after the last one: a copy of it (with a quote sorting last, or a greater seq, where the key needs it).
      const copy = cols.map((c) => (c === '"quote"' ? `'~'` : c === '"seq"' ? 'seq + 1000000' : c)).join(', ');
      const extra = changed(
        `${table}-extra`,
        `INSERT INTO ${table}(${cols.join(', ')}) SELECT ${copy} FROM ${table} WHERE ${where(all[all.length - 1])}`,
        base,
      );
      const x = only(compareReplays(base, extra));
      expect(x.map((t) => t.table)).toEqual([table]);
      expect(x[0].rows).toEqual([all.length, all.length + 1]);
      expect(x[0].difference!.index).toBe(all.length);
      expect(x[0].difference!.a).toBeUndefined();
      expect(x[0].difference!.b).toBeDefined();
    });
  }

  it("compares xrate's own points, stored as chunks, as the rows they stand for: a changed, a missing and an extra point", () => {
    const d = new Database(A, { readonly: true });
    const chunk = d.prepare('SELECT rowid AS id, n, seq_first FROM metric_chunks ORDER BY seq_first LIMIT 1 OFFSET 5').get() as {
      id: number;
      n: number;
      seq_first: number;
    };
    d.close();
    const total = compareReplays(A, A, { tables: ['metric_points'] })[0].rows[0];
    expect(total).toBeGreaterThan(100);

    const c = only(compareReplays(A, changed('own-changed', `UPDATE metric_chunks SET texts = '[[0,"x"]]' WHERE rowid = ${chunk.id}`)));
    expect(c.map((t) => t.table)).toEqual(['metric_points']);
    expect(c[0].rows).toEqual([total, total]);
    expect(c[0].difference!.columns).toEqual(['text']);
    expect(c[0].difference!.b!.seq).toBe(chunk.seq_first);

    const m = only(compareReplays(A, changed('own-missing', `DELETE FROM metric_chunks WHERE rowid = ${chunk.id}`)));
    expect(m[0].rows).toEqual([total, total - chunk.n]);
    expect(m[0].difference!.a!.seq).toBe(chunk.seq_first);

    const x = only(
      compareReplays(A, changed('own-extra', `INSERT INTO metric_chunks SELECT * FROM metric_chunks WHERE rowid = ${chunk.id}`)),
    );
    expect(x[0].rows).toEqual([total, total + chunk.n]);
    expect(x[0].difference).toBeDefined();
  });

  it('reports a run whose counts differ, not one whose times, id or options do; rejects by reason in any key order', () => {
    const same = changed(
      'run-same',
      `UPDATE runs SET started_at = 'x', finished_at = 'y', duration_ms = 1, pid = 1, host = 'h', options = '{"workers":4}', id = id + 10;
       UPDATE meta SET value = value + 10 WHERE key = 'outputs_run';
       UPDATE rates SET batch = 0`,
    );
    expect(replaysEqual(compareReplays(A, same))).toBe(true);
    const d = new Database(A, { readonly: true });
    const byReason = JSON.parse((d.prepare('SELECT rejects_by_reason AS r FROM runs').get() as { r: string }).r) as Record<string, number>;
    d.close();
    expect(Object.keys(byReason).length).toBeGreaterThan(1);
    const reversed = JSON.stringify(Object.fromEntries(Object.entries(byReason).reverse()));
    expect(replaysEqual(compareReplays(A, changed('run-order', `UPDATE runs SET rejects_by_reason = '${reversed}'`)))).toBe(true);
    const other = only(compareReplays(A, changed('run-other', 'UPDATE runs SET events_read = events_read + 1')));
    expect(other.map((t) => [t.table, t.difference!.columns])).toEqual([['runs', ['events_read']]]);
  });

  it('refuses a file that is not a replay database', () => {
    expect(() => compareReplays(A, join(dir, 'none.sqlite'))).toThrow(/^cannot open database/);
  });
});

function only(r: ReturnType<typeof compareReplays>) {
  return r.filter((t) => t.difference);
}
