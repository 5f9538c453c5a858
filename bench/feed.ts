/**
 * feed/publish and feed/replica: the live feed as a user runs it, on a real
 * `nats-server` with JetStream started for the bench.
 *
 * Each round, with the built CLI as child processes, on the demo log (160,000 events):
 * - `xrate publish DEMO --nats … --stream FEEDn` into a new stream: wall seconds from spawn to exit;
 * - `xrate serve --nats … --stream FEEDn --db FILE` started on the whole stream: seconds from spawn
 *   until `/readyz` reports the last sequence applied (the catch-up of a new replica);
 * - `xrate replay DEMO --db FILE --quiet` for comparison: what the same events cost without NATS.
 * feed/publish is records/s; feed/replica is events/s of the catch-up and carries
 * `ratio_to_replay` = catch-up seconds / replay seconds (same rounds). Medians over the rounds.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binStartAt } from '../test/helpers/process.js';
import { startNats } from '../test/helpers/nats.js';
import { ensureCliBuilt, median, p99 } from './replay-db.js';
import type { BenchResult } from './run.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'xrate.js');
const DEMO = join(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz');
const ROUNDS = 3;

function removeDb(db: string): void {
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
}

function timed(argv: string[]): { seconds: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...argv], { cwd: ROOT, encoding: 'utf8' });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`xrate ${argv[0]} exited with ${r.status}: ${r.stderr || r.error?.message}`);
  return { seconds, stdout: r.stdout };
}

/** Resolves once the replica at `url` reports (`/readyz`) that it has applied sequence `last`; polls every `everyMs`. */
export async function applied(url: string, last: number, everyMs: number): Promise<void> {
  for (;;) {
    const r = (await (await fetch(`${url}/readyz`)).json()) as { applied_seq?: number };
    if (r.applied_seq === last) return;
    await new Promise((f) => setTimeout(f, everyMs));
  }
}

/** Seconds from the replica's spawn until it has applied sequence `last`. */
async function catchUp(nats: string, stream: string, db: string, last: number): Promise<number> {
  const t0 = performance.now();
  const p = binStartAt(BIN, ROOT, ['serve', '--nats', nats, '--stream', stream, '--db', db, '--keys', `${db}.keys`, '--port', '0']);
  try {
    await p.waitErr(/"msg":"listening"/);
    const url = /listening on (http:\/\/\S+)/.exec(p.out())?.[1];
    if (!url) throw new Error(`feed bench: no URL in ${p.out()}`);
    await applied(url, last, 20);
    return (performance.now() - t0) / 1000;
  } finally {
    p.proc.kill('SIGTERM');
    await p.exited;
    removeDb(db);
    removeDb(`${db}.keys`);
  }
}

/** Both entries, from the same rounds. */
export async function feedBench(dir: string): Promise<BenchResult[]> {
  ensureCliBuilt();
  const nats = await startNats();
  const publish: number[] = [];
  const replica: number[] = [];
  const replay: number[] = [];
  let records = 0;
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const stream = `FEED${i}`;
      const pub = timed(['publish', DEMO, '--nats', nats.url, '--stream', stream, '--quiet']);
      records = Number(/published (\d+) records/.exec(pub.stdout)?.[1]);
      const last = Number(/last sequence (\d+)/.exec(pub.stdout)?.[1]);
      publish.push(pub.seconds);
      replica.push(await catchUp(nats.url, stream, join(dir, 'feed-replica.sqlite'), last));
      const db = join(dir, 'feed-replay.sqlite');
      removeDb(db);
      replay.push(timed(['replay', DEMO, '--db', db, '--quiet']).seconds);
      removeDb(db);
    }
  } finally {
    await nats.dispose();
  }
  const rate = (xs: number[]) => xs.map((s) => records / s);
  return [
    {
      name: 'feed/publish',
      unit: 'records/s',
      median: median(rate(publish)),
      p99: Math.min(...rate(publish)),
      samples: ROUNDS,
      seconds: publish,
      records,
    },
    {
      name: 'feed/replica',
      unit: 'events/s',
      median: median(rate(replica)),
      p99: Math.min(...rate(replica)),
      samples: ROUNDS,
      seconds: replica,
      replay_seconds: replay,
      ratio_to_replay: median(replica) / median(replay),
      p99_seconds: p99(replica),
    },
  ];
}
