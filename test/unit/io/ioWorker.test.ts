/**
 * I/O workers started before their job (src/io/ioWorker.ts `startEarly`): the next start of the
 * same file posts the job to the waiting worker; one that stopped before it was taken, or was
 * dropped, is not taken (the job goes to a new worker); a waiting worker keeps no process alive;
 * a replay's reader worker started early reads what a worker started with its job reads, and is
 * ended when the input is read in this thread. Also which `xrate replay` command lines start it
 * (cli/main.ts `readsInWorker`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readsInWorker } from '../../../src/cli/main.js';
import { recordAt } from '../../../src/io/batch.js';
import { openBatchSource, readerWorkers, readerWorkersStarted } from '../../../src/io/batchSource.js';
import { dropEarlyWorkers, earlyWorkers, startEarly, startIoWorker, startReaderEarly } from '../../../src/io/ioWorker.js';
import { openSource, type SourceRecord } from '../../../src/io/source.js';
import { writeLog } from '../../../scripts/gen-log.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-io-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => dropEarlyWorkers());

/** A worker file that answers its job and how it got it: by `workerData`, or (started early) by its first message. */
const ECHO = join(dir, 'echo.mjs');
writeFileSync(
  ECHO,
  `import { parentPort, workerData } from 'node:worker_threads';
if (workerData === undefined) parentPort.once('message', (m) => parentPort.postMessage({ job: m.job, early: true }));
else parentPort.postMessage({ job: workerData, early: false });
`,
);
/** The same, but one started without its job ends at once. */
const QUITTER = join(dir, 'quitter.mjs');
writeFileSync(
  QUITTER,
  `import { parentPort, workerData } from 'node:worker_threads';
if (workerData !== undefined) parentPort.postMessage({ job: workerData, early: false });
`,
);

/** The first message of `w`, then its end. */
async function answer(w: Worker): Promise<unknown> {
  const m = await new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  return m;
}

describe('workers started early', () => {
  it('gives the job of the next start of the same file to the worker waiting for it', async () => {
    const url = pathToFileURL(ECHO);
    startEarly(url);
    startEarly(url); // one waits a file
    expect(earlyWorkers()).toBe(1);
    expect(await answer(startIoWorker(url, { n: 1 }))).toEqual({ job: { n: 1 }, early: true });
    expect(earlyWorkers()).toBe(0);
    // The next start has none waiting: a worker started with its job.
    expect(await answer(startIoWorker(url, { n: 2 }))).toEqual({ job: { n: 2 }, early: false });
  });

  it('starts a new worker for the job when the one started early stopped, or was dropped', async () => {
    const quitter = pathToFileURL(QUITTER);
    startEarly(quitter);
    const w = startIoWorker(pathToFileURL(ECHO), 'other file'); // another file's start leaves it waiting
    expect(await answer(w)).toEqual({ job: 'other file', early: false });
    while (earlyWorkers() > 0) await new Promise((r) => setTimeout(r, 10));
    expect(await answer(startIoWorker(quitter, 'after its end'))).toEqual({ job: 'after its end', early: false });

    const echo = pathToFileURL(ECHO);
    startEarly(echo);
    dropEarlyWorkers();
    expect(earlyWorkers()).toBe(0);
    expect(await answer(startIoWorker(echo, 'after the drop'))).toEqual({ job: 'after the drop', early: false });
  });

  it('keeps no process alive while it waits', () => {
    const script = `import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'src/io/ioWorker.ts')).href)}).then((m) => { m.startReaderEarly(); console.log('started', m.earlyWorkers()); });`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(r.error).toBeUndefined();
    expect([r.status, r.stdout.trim()]).toEqual([0, 'started 1']);
  });
});

function plain(r: SourceRecord): SourceRecord {
  return { ...r, raw: r.raw };
}

describe("a replay's reader worker started early", () => {
  it('reads an input as a worker started with its job does, and is taken by the read', async () => {
    const path = join(dir, 'log.ndjson.gz');
    await writeLog(path, { seed: 7, events: 4_000, badRate: 0.02 });
    const want: SourceRecord[] = [];
    const ref = openSource(path, { batchSize: 300 });
    for await (const b of ref.batches()) want.push(...b.map(plain));
    ref.close();
    for (const early of [true, false]) {
      if (early) startReaderEarly();
      expect(earlyWorkers()).toBe(early ? 1 : 0);
      const started = readerWorkersStarted();
      const src = openBatchSource(path, { threads: 2, batchSize: 300, recycle: true });
      const got: SourceRecord[] = [];
      for await (const b of src.batches()) {
        expect(earlyWorkers()).toBe(0);
        for (let i = 0; i < b.length; i++) got.push(plain(recordAt(b, i)));
      }
      src.close();
      expect(got).toEqual(want);
      expect(readerWorkersStarted() - started).toBe(1);
      expect(readerWorkers()).toBe(0);
    }
  });

  it('is ended when the input is read in this thread', async () => {
    const path = join(dir, 'log.csv');
    await writeLog(path, { seed: 8, events: 500 });
    startReaderEarly();
    expect(earlyWorkers()).toBe(1);
    const src = openBatchSource(path, { threads: 2 });
    expect(earlyWorkers()).toBe(0);
    let n = 0;
    for await (const b of src.batches()) n += b.length;
    src.close();
    expect(n).toBeGreaterThanOrEqual(500);
  });
});

describe('readsInWorker', () => {
  const cores = availableParallelism() > 1;
  it.each([
    [['log.ndjson', '--db', 'x.sqlite'], cores],
    [['log.ndjson', '--threads', '2'], cores],
    [['log.ndjson', '--threads=4'], cores],
    [['log.ndjson', '--workers', '1'], cores],
    [['log.ndjson', '--threads', '1'], false],
    [['log.ndjson', '--threads=1'], false],
    [['a.csv', 'b.csv', '--merge'], false],
    [['log.ndjson', '--workers', '2'], false],
    [['log.ndjson', '--workers=auto'], false],
    [['log.ndjson', '--queue', 'redis://127.0.0.1:6379'], false],
    [['--help'], false],
    [['-h'], false],
    [['--db', 'x.sqlite', '--', '--merge'], cores],
  ])('%j: %s', (args, want) => {
    expect(readsInWorker(args)).toBe(want);
  });
});
