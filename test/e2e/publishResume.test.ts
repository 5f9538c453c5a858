/**
 * `xrate publish` says where the stream stands when a publish fails, and continues from there
 * (docs/deploy.md): a real nats-server (JetStream file store in a temporary directory) is killed
 * with SIGKILL while a log is being published and started again; the publisher stops naming the
 * last line the stream holds, `--resume` publishes the rest, and the stream then holds every line
 * of the log once, in order, then the end-of-run message, so that a replica of it writes the
 * outputs of a replay of the log. A record the stream refuses is never followed by the ones after
 * it. `--from-line` starts at a line; `--resume` refuses logs that are not the stream's.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { startNats, type NatsServer } from '../helpers/nats.js';
import { type BinProcess, bin, binStart, cli, ensureBuilt, expectSameOutputs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-publish-resume-'));
const LOG = join(dir, 'log.ndjson');
const SERIAL = join(dir, 'serial.sqlite');
const EVENTS = 20_000;
const TABLES = ['rates', 'series', 'rejects', 'metric_points', 'metric_definitions'];

let nats: NatsServer;
const started: BinProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  nats = await startNats();
  await writeLog(LOG, { seed: 29, events: EVENTS, rate: 2, badRate: 0.01, lateRate: 0.01 });
  const r = await cli('replay', LOG, '--db', SERIAL, '--quiet');
  expect(r.code, r.err).toBe(0);
}, 180_000);

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  await nats?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** A message of the stream, as its headers say: a record (log and line) or the end of a run. */
interface Stored {
  seq: number;
  input?: string;
  line?: number;
  control?: string;
}

/** Every message of `stream`, in sequence order, read with an ordered consumer. */
async function readStream(stream: string): Promise<Stored[]> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: nats.url });
  try {
    const last = (await (await jetstreamManager(nc)).streams.info(stream)).state.last_seq;
    const out: Stored[] = [];
    if (last === 0) return out;
    const consumer = await jetstream(nc).consumers.get(stream);
    const messages = await consumer.consume();
    for await (const m of messages) {
      const line = m.headers?.get('Xrate-Line');
      out.push({
        seq: m.seq,
        input: m.headers?.get('Xrate-Input') || undefined,
        line: line ? Number(line) : undefined,
        control: m.headers?.get('Xrate-Control') || undefined,
      });
      if (m.seq >= last) break;
    }
    await messages.close();
    return out;
  } finally {
    await nc.close();
  }
}

/** The lines the records of `msgs` carry, asserting that every one is of LOG. */
function linesOf(msgs: Stored[]): number[] {
  const records = msgs.filter((m) => m.control === undefined);
  expect(new Set(records.map((m) => m.input))).toEqual(new Set(records.length ? [LOG] : []));
  return records.map((m) => m.line!);
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('a publish whose NATS server is killed and restarted', () => {
  it('stops naming the last line the stream holds; --resume publishes the rest, none twice and none left out', async () => {
    const p = binStart(['publish', LOG, '--nats', nats.url, '--stream', 'CRASH', '--rate', '2500']);
    started.push(p);
    // A few thousand records stored, the publisher still going: the server dies.
    await p.waitErr(/stream sequence ([3-9]\d{3}|\d{5,})\)/);
    await nats.crash();
    // The publisher finds a checkpoint not acknowledged, and waits for NATS to say where the stream stands.
    await p.waitErr(/which line the stream holds last/);
    await nats.restart();
    expect(await p.exited, p.err()).toBe(1);
    const said =
      /\nxrate: the stream did not take line (\d+) of (\S+) \(sequence \d+ expected[^\n]*\. The stream CRASH holds line (\d+) of (\S+) last \(sequence (\d+)\): run the same command with --resume to publish from line (\d+)\n$/.exec(
        p.err(),
      );
    expect(said, p.err()).not.toBeNull();
    const [, , failedLog, lastLine, lastLog, lastSeq, next] = said!;
    expect([failedLog, lastLog]).toEqual([LOG, LOG]);
    expect(Number(next)).toBe(Number(lastLine) + 1);
    expect(Number(lastLine)).toBeLessThan(EVENTS);

    // What the message says is what the stream holds: the log's lines up to it, once each, in order.
    const before = await readStream('CRASH');
    expect(before.map((m) => m.seq)).toEqual(range(1, Number(lastSeq)));
    expect(linesOf(before)).toEqual(range(1, Number(lastLine)));

    const resumed = bin(['publish', LOG, '--nats', nats.url, '--stream', 'CRASH', '--resume', '--quiet'], { timeout: 120_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).toBe(`xrate publish: continuing after line ${lastLine} of ${LOG} (stream sequence ${lastSeq})\n`);
    expect(resumed.stdout).toMatch(
      new RegExp(
        `^published ${EVENTS - Number(lastLine)} records to the stream CRASH after line ${lastLine} of \\S+ \\(last sequence ${EVENTS + 1}\\)`,
      ),
    );
    const all = await readStream('CRASH');
    expect(all.map((m) => m.seq)).toEqual(range(1, EVENTS + 1));
    expect(linesOf(all)).toEqual(range(1, EVENTS));
    expect(all.at(-1)?.control).toBe('end');

    // Nothing is left to resume.
    const again = bin(['publish', LOG, '--nats', nats.url, '--stream', 'CRASH', '--resume']);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toBe(
      `nothing to resume: the stream CRASH ends with the end-of-run message of a publish run (sequence ${EVENTS + 1}); to publish logs after it, run without --resume\n`,
    );

    // A replica of the stream writes what a replay of the log writes.
    const db = join(dir, 'replica.sqlite');
    const replica = binStart(['serve', '--nats', nats.url, '--stream', 'CRASH', '--db', db, '--keys', `${db}.keys`, '--port', '0']);
    started.push(replica);
    await replica.waitErr(/"msg":"listening"/);
    for (let i = 0; i < 100 && !/listening on http/.test(replica.out()); i++) await new Promise((f) => setTimeout(f, 50));
    const url = /listening on (http:\/\/\S+)/.exec(replica.out())?.[1];
    for (let i = 0; i < 1800; i++) {
      const body = (await (await fetch(`${url}/readyz`)).json()) as { applied_seq?: number };
      if (body.applied_seq === EVENTS + 1) break;
      await new Promise((f) => setTimeout(f, 100));
    }
    replica.proc.kill('SIGTERM');
    expect(await replica.exited).toBe(0);
    expectSameOutputs(db, SERIAL, TABLES);
  }, 240_000);
});

describe('a record the stream refuses in the middle of a run', () => {
  it('is never followed by the records after it: the stream holds the log up to the line before, and says so', async () => {
    // Line 500 is longer than the stream takes; the records after it go out unacknowledged until
    // the checkpoint of line 1000.
    const lines = readFileSync(LOG, 'utf8').split('\n').slice(0, 2000);
    lines[499] = `${lines[499].slice(0, -1)},"pad":"${'x'.repeat(2000)}"}`;
    const padded = join(dir, 'padded.ndjson');
    writeFileSync(padded, `${lines.join('\n')}\n`);
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: nats.url });
    try {
      await (await jetstreamManager(nc)).streams.add({ name: 'NARROW', subjects: ['NARROW.>'], max_msg_size: 1024 });
    } finally {
      await nc.close();
    }
    const r = bin(['publish', padded, '--nats', nats.url, '--stream', 'NARROW', '--quiet']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^xrate: the stream did not take line 1000 of \S+padded\.ndjson \(sequence 1000 expected: a record before it was not stored, or another publisher wrote the stream\): wrong last sequence: 499\. The stream NARROW holds line 499 of \S+padded\.ndjson last \(sequence 499\): run the same command with --resume to publish from line 500\n$/,
    );
    const stored = await readStream('NARROW');
    expect(stored.map((m) => m.line)).toEqual(range(1, 499));
  }, 60_000);
});

describe('where a publish starts', () => {
  it('--from-line N starts at line N of the first LOG; --resume on an empty stream starts at the first line', async () => {
    const from = bin(['publish', LOG, '--nats', nats.url, '--stream', 'FROM', '--from-line', '19990', '--quiet']);
    expect(from.status, from.stderr).toBe(0);
    expect(from.stdout).toMatch(/^published 11 records to the stream FROM after line 19989 of \S+ \(last sequence 12\)/);
    expect(linesOf(await readStream('FROM'))).toEqual(range(19_990, EVENTS));

    const empty = bin(['publish', LOG, '--nats', nats.url, '--stream', 'EMPTY', '--resume', '--quiet']);
    expect(empty.status, empty.stderr).toBe(0);
    expect(empty.stdout).toMatch(/^published 20000 records to the stream EMPTY \(last sequence 20001\)/);
  }, 120_000);

  it('--resume refuses LOGs the stream does not end with; --from-line must be a line number, and not with --resume', async () => {
    const other = join(dir, 'other.ndjson');
    await writeLog(other, { seed: 3, events: 10, rate: 2 });
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    // A stream whose last message is a record of LOG, with no end-of-run message after it.
    const cut = bin(['publish', LOG, '--nats', nats.url, '--stream', 'CUT', '--quiet']);
    expect(cut.status, cut.stderr).toBe(0);
    const nc = await connect({ servers: nats.url });
    try {
      await (await jetstreamManager(nc)).streams.deleteMessage('CUT', EVENTS + 1);
    } finally {
      await nc.close();
    }
    const r = bin(['publish', other, '--nats', nats.url, '--stream', 'CUT', '--resume']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `xrate: --resume: the last record of the stream CUT (sequence ${EVENTS}) is line ${EVENTS} of "${LOG}", which is none of the LOGs given ("${other}"): give the LOGs of the run to resume, in the same order\n`,
    );
    for (const [args, msg] of [
      [['--from-line', '0'], /--from-line must be an integer in 1\.\.\d+, got "0"/],
      [['--from-line', 'ten'], /--from-line must be an integer/],
      [['--from-line', '3', '--resume'], /give --resume or --from-line, not both/],
    ] as const) {
      const u = bin(['publish', LOG, '--nats', nats.url, ...args]);
      expect(u.status, u.stderr).toBe(2);
      expect(u.stderr).toMatch(msg);
    }
  }, 120_000);
});
