/**
 * A run whose inputs change while it reads them fails, naming the file and what changed, and is
 * never stored as complete: serially (the file truncated, appended to, edited in place with the same
 * size and time, replaced; a directory given a new log) and in partitions (a file truncated while the
 * partitions run: nothing is merged).
 */
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../../scripts/gen-log.js';
import { expandEach, FNV_BASIS, fnv } from '../../../src/io/inputs.js';
import { watchInputs } from '../../../src/io/inputWatch.js';
import { replayParallel, runPartitionHere } from '../../../src/replay/parallel.js';
import { replay } from '../../../src/replay/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-input-changed-'));
const SOURCE = join(dir, 'source.ndjson');
const CONFIG = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
let n = 0;

beforeAll(async () => {
  await writeLog(SOURCE, { seed: 7, events: 12_000, rate: 0.2 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh copy of the generated log, and a database path beside it. */
function fresh(): { log: string; db: string } {
  n++;
  const log = join(dir, `log-${n}.ndjson`);
  copyFileSync(SOURCE, log);
  return { log, db: join(dir, `out-${n}.sqlite`) };
}

/** The status and error of the newest run stored in `db`. */
function lastRun(db: string): string {
  const h = new Database(db, { readonly: true });
  try {
    return (h.prepare('SELECT status FROM runs ORDER BY id DESC LIMIT 1').get() as { status: string }).status;
  } finally {
    h.close();
  }
}

/** Replays `log` serially, running `change` once the replay has read its first batch. */
async function replayChanging(log: string, db: string, change: () => void): Promise<unknown> {
  let changed = false;
  return replay({
    inputs: [log],
    db,
    config: CONFIG,
    batchSize: 500,
    progressEveryMs: 0,
    onProgress: () => {
      if (changed) return;
      changed = true;
      change();
    },
  }).then(
    () => undefined,
    (e: Error) => e,
  );
}

describe('a serial replay whose input changes', () => {
  it('fails when the file is truncated under it, naming the file and the sizes; the run is stored as failed', async () => {
    const { log, db } = fresh();
    const size = statSync(log).size;
    const err = await replayChanging(log, db, () => truncateSync(log, Math.floor(size / 2)));
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    expect(msg).toContain(`input "${log}" changed while the replay read it`);
    expect(msg).toContain(`its size went from ${size} to ${Math.floor(size / 2)} bytes`);
    expect(msg).toContain('the run is not complete');
    const status = lastRun(db);
    expect(status).toMatch(/^failed: input ".*" changed while the replay read it/);
  });

  it('fails when lines are appended while it reads', async () => {
    const { log, db } = fresh();
    const err = await replayChanging(log, db, () =>
      appendFileSync(log, '{"type":"trade","time":"2099-01-01T00:00:00Z","symbol_id":"X_SPOT_A_B","price":1,"size":1}\n'),
    );
    expect((err as Error).message).toMatch(/its size went from \d+ to \d+ bytes/);
    expect(lastRun(db)).toMatch(/^failed: /);
  });

  it('fails when the file is edited in place with the same size and modification time (its fingerprint)', async () => {
    const { log, db } = fresh();
    // A whole second, which every file system keeps exactly.
    utimesSync(log, 1_700_000_000, 1_700_000_000);
    const st = statSync(log);
    const err = await replayChanging(log, db, () => {
      const text = readFileSync(log);
      // The last line's last digit before the closing brace, changed to another digit.
      let i = text.length - 1;
      while (i > 0 && !(text[i] >= 0x30 && text[i] <= 0x39)) i--;
      text[i] = text[i] === 0x30 ? 0x31 : 0x30;
      writeFileSync(log, text);
      utimesSync(log, 1_700_000_000, 1_700_000_000);
    });
    expect(statSync(log).mtimeMs).toBe(st.mtimeMs);
    expect((err as Error).message).toContain('its first or last bytes differ');
  });

  it('fails when the file is replaced by another one', async () => {
    const { log, db } = fresh();
    const err = await replayChanging(log, db, () => {
      // Another file (another inode, both exist at once) takes the name.
      const other = `${log}.new`;
      copyFileSync(log, other);
      renameSync(other, log);
    });
    expect((err as Error).message).toContain('it was replaced by another file');
  });

  it('fails when a directory given as input gets a new event log', async () => {
    const logs = join(dir, 'dir-input');
    mkdirSync(logs);
    copyFileSync(SOURCE, join(logs, 'a.ndjson'));
    const db = join(dir, 'dir.sqlite');
    const err = await replayChanging(logs, db, () => writeFileSync(join(logs, 'b.ndjson'), ''));
    expect((err as Error).message).toContain(
      `the event logs of input directory "${logs}" changed while the replay read them: added ${join(logs, 'b.ndjson')}`,
    );
    expect(lastRun(db)).toMatch(/^failed: /);
  });

  it('completes as before when nothing changes', async () => {
    const { log, db } = fresh();
    const s = await replay({ inputs: [log], db, config: CONFIG });
    expect(s.eventsRead).toBeGreaterThan(0);
    expect(lastRun(db)).toBe('complete');
  });
});

describe('a partitioned replay whose input changes', () => {
  it('fails naming the file when it is truncated while the partitions run, and merges nothing', async () => {
    const { log, db } = fresh();
    const size = statSync(log).size;
    let first = true;
    const err = await replayParallel({
      inputs: [log],
      db,
      config: CONFIG,
      workers: 2,
      // One partition at a time here: the file is cut once the first has run, before the second.
      run: async (job, progress) => {
        const r = await runPartitionHere(job, progress);
        if (first) {
          first = false;
          truncateSync(log, Math.floor(size * 0.6));
        }
        return r;
      },
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(`input "${log}" changed while the replay read it`);
    // Nothing merged: no database was made.
    expect(existsSync(db)).toBe(false);
  });
});

describe('watchInputs', () => {
  it('reports nothing for inputs left alone, and each changed input once', () => {
    const a = join(dir, 'w-a.ndjson');
    const b = join(dir, 'w-b.ndjson');
    writeFileSync(a, '{"x":1}\n');
    writeFileSync(b, '{"x":2}\n');
    const w = watchInputs([a, b, a], [[a], [b], [a]]);
    expect(w.changes()).toEqual([]);
    expect(() => w.check()).not.toThrow();
    appendFileSync(b, '{"x":3}\n');
    const c = w.changes();
    expect(c).toHaveLength(1);
    expect(c[0]).toContain(`input "${b}" changed while the replay read it: its size went from 8 to 16 bytes`);
    rmSync(a);
    expect(w.changes()[0]).toBe(`input "${a}" was removed while the replay read it`);
    expect(() => w.check()).toThrow(/^input .* was removed .*; input .* changed .*; the run is not complete/);
    expect(() => w.check()).toThrow(expect.objectContaining({ code: 'input_changed' }));
  });

  it('names the changed files in the order of the inputs, a change seen where the fingerprint reads', () => {
    const d = join(dir, 'w-order');
    mkdirSync(d);
    const files = Array.from({ length: 60 }, (_v, k) => join(d, `f${String(k).padStart(2, '0')}.ndjson`));
    // Files of a few bytes and of more than the fingerprint's two ends (16 KiB each), modified at a
    // whole second, which every file system keeps exactly (the edits below keep it).
    files.forEach((f, k) => {
      writeFileSync(f, k % 3 === 0 ? `${'{"x":1}\n'.repeat(5000)}` : `{"k":${k}}\n`);
      utimesSync(f, 1_700_000_000, 1_700_000_000);
    });
    const w = watchInputs(
      files,
      files.map((f) => [f]),
    );
    expect(w.changes()).toEqual([]);
    appendFileSync(files[41], '{"x":2}\n');
    rmSync(files[50]);
    appendFileSync(files[7], '{"x":2}\n');
    // The same size and time, other bytes in the middle of a long file: unseen (the ends are the same).
    const mid = readFileSync(files[24]);
    mid[20_000] = 0x20;
    writeFileSync(files[24], mid);
    utimesSync(files[24], 1_700_000_000, 1_700_000_000);
    // At its end: seen.
    const end = readFileSync(files[33]);
    end[end.length - 3] = 0x32;
    writeFileSync(files[33], end);
    utimesSync(files[33], 1_700_000_000, 1_700_000_000);
    const c = w.changes();
    expect(c.map((m) => /input "([^"]+)"/.exec(m)?.[1])).toEqual([files[7], files[33], files[41], files[50]]);
    expect(c[1]).toContain('its first or last bytes differ');
    expect(c[3]).toBe(`input "${files[50]}" was removed while the replay read it`);
  });

  it('tells two paths apart whose hashes are one: each is marked, a change to either is seen', () => {
    // Two file names whose full paths have the same FNV-1a hash (the watch meets paths by it).
    const byHash = new Map<number, number>();
    const start = fnv(FNV_BASIS, join(dir, 'h'));
    let pair: [number, number] | undefined;
    for (let k = 0; pair === undefined; k++) {
      const h = fnv(start, `${k}.ndjson`);
      const other = byHash.get(h);
      if (other !== undefined) pair = [other, k];
      else byHash.set(h, k);
    }
    const [p, q] = pair.map((k) => join(dir, `h${k}.ndjson`));
    expect(fnv(FNV_BASIS, p)).toBe(fnv(FNV_BASIS, q));
    writeFileSync(p, '{"x":1}\n');
    writeFileSync(q, '{"x":2}\n');
    const w = watchInputs([p, q, p, q], [[p], [q], [p], [q]]);
    expect(w.changes()).toEqual([]);
    appendFileSync(q, '{"x":3}\n');
    const c = w.changes();
    expect(c).toHaveLength(1);
    expect(c[0]).toContain(`input "${q}" changed while the replay read it: its size went from 8 to 16 bytes`);
    appendFileSync(p, '{"x":3}\n');
    expect(w.changes().map((m) => /input "([^"]+)"/.exec(m)?.[1])).toEqual([p, q]);
  });

  it("compares a directory's event logs with the listing the run read, without listing it again", () => {
    const d = join(dir, 'w-dir');
    mkdirSync(d);
    const [x, y] = [join(d, 'x.ndjson'), join(d, 'y.ndjson')];
    writeFileSync(x, '{"x":1}\n');
    writeFileSync(y, '{"x":2}\n');
    // The run read x only (y came after its listing): y is an event log added while it read them.
    const w = watchInputs([d], [[x]]);
    expect(w.changes()).toEqual([`the event logs of input directory "${d}" changed while the replay read them: added ${y}`]);
    expect(watchInputs([d], expandEach([d])).changes()).toEqual([]);
  });

  it('names every event log added to and removed from a directory, its listing given in any order', () => {
    const d = join(dir, 'w-many');
    mkdirSync(d);
    const f = (n: string) => join(d, `${n}.ndjson`);
    for (const n of ['a', 'b', 'c', 'e']) writeFileSync(f(n), '{}\n');
    // The run's listing: a, c, d (d since removed), e; b was added after it. Given in another order too.
    writeFileSync(f('d'), '{}\n');
    const listed = [f('a'), f('c'), f('d'), f('e')];
    rmSync(f('d'));
    const want = [`the event logs of input directory "${d}" changed while the replay read them: added ${f('b')}; removed ${f('d')}`];
    expect(watchInputs([d], [listed]).changes()).toEqual(expect.arrayContaining(want));
    expect(watchInputs([d], [[...listed].reverse()]).changes()).toEqual(expect.arrayContaining(want));
    writeFileSync(f('d'), '{}\n');
    writeFileSync(f('0'), '{}\n');
    for (const n of ['x', 'y', 'z', 'zz']) writeFileSync(f(n), '{}\n');
    expect(watchInputs([d], [listed]).changes()[0]).toBe(
      `the event logs of input directory "${d}" changed while the replay read them: added ${f('0')}, ${f('b')}, ${f('x')} and 3 more`,
    );
  });
});
