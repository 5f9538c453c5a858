/**
 * The probes and observations of test/e2e/flags.test.ts that need more than a run: a running
 * server's answers, the built command stopped as an operator stops it, the partitions an
 * `xrate worker` takes, the queue's Redis lost.
 */
import { spawn } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { startRedis } from '../helpers/redis.js';
import { cli, cliRunning, type Env, fresh, freshStream, normalise, type Observation, type Probe } from './flagsKit.js';
import { BIN, ROOT } from './helpers.js';

/** 20 history requests at once with a limit above 1000 (heavy): the distinct 429 messages. */
export const heavyProbe: Probe = async (url, key) => {
  const q = `${url}/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-01T00:00:00Z&time_end=2024-03-01T01:00:00Z&limit=5000`;
  const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(q, { headers: { 'X-CoinAPI-Key': key } })));
  const messages = new Set<string>();
  for (const a of answers) {
    const body = await a.text();
    if (a.status === 429) messages.add(body);
  }
  return [...messages].sort();
};

/** GET /readyz at once: its status and message (a replica far behind its stream). */
export const readyProbe: Probe = async (url) => {
  const r = await fetch(`${url}/readyz`);
  const body = (await r.json()) as { message?: string };
  return [r.status, body.message?.replace(/Not ready: \d+ messages/, 'Not ready: N messages')];
};

/** GET `path` without a key (the EMS gateway's self-hosted mode). */
export const getProbe =
  (path: string): Probe =>
  async (url) => {
    const r = await fetch(`${url}${path}`);
    return [r.status, await r.text()];
  };

/** `xrate serve` run as the built command until it listens, then stopped: its JSON log lines saying it listens (`--log-level`). */
export async function spawnedServeObservation(argv: string[]): Promise<Observation> {
  const p = spawn(process.execPath, [BIN, ...argv], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let asked = false;
  p.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    const url = /listening on (\S+)/.exec(out)?.[1];
    if (url === undefined || asked) return;
    asked = true;
    // Answered: the command has set its signal handlers (after it listened); stopped as by an operator.
    void fetch(`${url}/healthz`).finally(() => p.kill('SIGTERM'));
  });
  p.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const code = await new Promise<number>((res) => p.once('close', (c) => res(c ?? -1)));
  return { code, err, seen: { logLines: err.split('\n').filter((l) => l.startsWith('{')).length } };
}

/** `xrate worker` in-process until it waits for partitions, then stopped: what it printed, and the workers on the queue "chosen". */
export async function workerObservation(env: Env, argv: string[]): Promise<Observation> {
  const r = await cliRunning(argv);
  let chosen: number | undefined;
  try {
    if (r.stop) {
      const conn = new Redis(env.redis.url, { maxRetriesPerRequest: null });
      const q = new Queue('chosen', { connection: conn });
      chosen = (await q.getWorkers()).length;
      await q.close();
      await conn.quit();
    }
  } finally {
    await r.stop?.();
  }
  return { code: r.code, err: r.err(), seen: { out: r.out(), err: normalise(r.err(), env.dir), chosen } };
}

/**
 * The built `xrate worker` with `argv` on a queue of its own, while a replay in 3 partitions runs
 * on that queue: the order in which its partitions started and finished (`--concurrency`), and
 * whether the locks of its partitions in Redis lasted more than 1.5 s (`--lock-ms`).
 */
export async function workerJobsObservation(env: Env, argv: string[]): Promise<Observation> {
  const name = freshStream();
  const w = spawn(process.execPath, [BIN, ...argv, '--queue-name', name], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  w.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const conn = new Redis(env.redis.url);
  let longest = 0;
  try {
    for (let i = 0; i < 200 && !err.includes('waiting for partitions'); i++) await new Promise((res) => setTimeout(res, 50));
    const db = fresh(env, 'queued.sqlite')();
    const replay = cli('replay', env.log, '--db', db, '--queue', env.redis.url, '--queue-name', name, '--workers', '3', '--quiet');
    let finished = false;
    void replay.then(() => {
      finished = true;
    });
    while (!finished) {
      for (const k of await conn.keys(`bull:${name}:*:lock`)) longest = Math.max(longest, await conn.pttl(k));
      await new Promise((res) => setTimeout(res, 10));
    }
    expect((await replay).code).toBe(0);
  } finally {
    w.kill('SIGKILL');
    await conn.quit();
  }
  const order = [...err.matchAll(/partition \d+ \(job [^)]*\): (started|done)/g)].map((m) => m[1][0]).join('');
  return { code: 0, err, seen: { order: order.replace(/(SD)+$/, '(SD)*'), longLocks: longest > 1500 } };
}

/**
 * The built command with `argv` on the Redis that is then lost: how long it says it waits for it
 * (`--queue-wait`); the command is killed, and the Redis started again.
 */
export async function redisLostObservation(env: Env, argv: string[]): Promise<Observation> {
  const p = spawn(process.execPath, [BIN, ...argv], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  p.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<void>((res) => p.once('exit', () => res()));
  try {
    const until = async (re: RegExp): Promise<void> => {
      for (let i = 0; i < 400 && !re.test(err); i++) await new Promise((res) => setTimeout(res, 50));
    };
    await until(/waiting for partitions|partition|submitted|queue/);
    await new Promise((res) => setTimeout(res, 300));
    await env.redisLost.stop();
    await until(/waiting up to \d+ s/);
  } finally {
    p.kill('SIGKILL');
    await exited;
    env.redisLost = await startRedis({ port: env.redisLost.port });
  }
  return { code: 0, err, seen: /waiting up to (\d+) s/.exec(err)?.[1] ?? err };
}
