/**
 * `xrate publish`: puts the records of event logs on a JetStream stream (feed.ts), creating the
 * stream when it does not exist, at full speed or at a given rate, or following a growing log.
 *
 * Order and delivery: the records are published from one connection, in log order; NATS keeps
 * one connection's messages in order, so the stream's sequence is the logs' order. Most records go
 * out without waiting for an acknowledgement (the client library makes one object with a stack trace
 * per acknowledged publish, which cost most of the time); every {@link CHECK_EVERY}-th record, the
 * last record of each batch read and the end-of-run message are checkpoints: published with
 * JetStream's acknowledgement. Every message carries the header that makes the server refuse it
 * unless the stream's last sequence is the one before it (`Nats-Expected-Last-Sequence`), so the
 * stream never stores a message after one that was lost (NATS restarting, a connection dropped and
 * remade): what it holds is always the logs up to a line, and a checkpoint acknowledged proves that
 * every record before it was stored, in order, with no other message in between. A checkpoint
 * refused or not acknowledged stops the run, naming its log and line and, once NATS answers, the
 * last line the stream holds; {@link PublishOptions.resume} continues after that line, so that
 * nothing is published twice (a record published twice is applied twice) and nothing is left out.
 * At most {@link PublishOptions.window} checkpoints are outstanding. One publisher writes a stream
 * at a time: a second one is caught by the first checkpoint of either.
 *
 * @module
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type PubAck } from '@nats-io/jetstream';
import { openSource, type SourceFormat, type SourceRecord } from '../io/source.js';
import { FileTail } from '../io/tail.js';
import { realpathSync } from 'node:fs';
import {
  controlSubject,
  decodeMessage,
  encodeRecord,
  endMessage,
  eventSubject,
  exchangeOf,
  type FeedItem,
  type FeedMessage,
  streamSubjects,
} from './feed.js';
import { connectNats } from './natsConnect.js';
import type { NatsSecurity } from './security.js';
import { isXrateError, XrateError } from '../core/errors.js';

/** Options of {@link publish}. */
export interface PublishOptions {
  /** Event logs, published in this order. */
  inputs: string[];
  /** NATS server URL(s), comma-separated. */
  nats: string;
  /** Credentials and TLS of the connection to NATS. */
  natsSecurity?: NatsSecurity;
  /** The stream (created with subjects `NAME.>` when missing). */
  stream: string;
  /** At most this many events per second (default: as fast as the server acknowledges). */
  rate?: number;
  /** Keep reading the (single, plain NDJSON) log as it grows, until {@link PublishRun.stop}. */
  follow?: boolean;
  /** Follow: how often to look for appended lines, ms (default 200). */
  pollMs?: number;
  format?: SourceFormat;
  maxLineBytes?: number;
  /** Checkpoints (acknowledged publishes) outstanding at most (default 8). */
  window?: number;
  /** Called every `progressEveryMs` (default 1000) and at the end. */
  onProgress?: (p: PublishProgress) => void;
  progressEveryMs?: number;
  /** Wall clock, ms. */
  now?: () => number;
  /** Start at this line (rowid) of the first input: its earlier records are not published. */
  fromLine?: number;
  /**
   * Continue after the last record the stream holds: ask the stream for its last message, find its
   * log among the inputs (the path as given, or the same file), and publish from the next line.
   */
  resume?: boolean;
  /** After a failure, how long to wait for NATS to say where the stream stands, ms (default 60000). */
  positionWaitMs?: number;
  /** Told where a resumed run starts, and that a failure is being looked into. */
  onNotice?: (text: string) => void;
}

/** Progress and result of a publish run. */
export interface PublishProgress {
  /** Records published (acknowledged or in flight). */
  published: number;
  /** The stream's sequence of the last acknowledged record. */
  lastSeq: number;
  /** The log being read. */
  input: string;
  elapsedMs: number;
  /** Resumed (or `fromLine`): publishing started after this line of this input. */
  startedAfter?: { input: string; line: number };
  /** `resume` found nothing to publish: why. */
  nothingToResume?: string;
}

/** A running publish. */
export interface PublishRun {
  /** Settles when every input is published (follow: once stopped), with the totals. */
  done: Promise<PublishProgress>;
  /** Stops reading (follow, or a run to be interrupted); what was read is still published. */
  stop(): void;
}

/**
 * Creates the stream `name` (file storage, subjects `NAME.>`, everything kept) unless it exists;
 * an existing stream must hold those subjects.
 */
export async function ensureStream(jsm: JetStreamManager, name: string): Promise<void> {
  const subjects = streamSubjects(name);
  try {
    const info = await jsm.streams.info(name);
    const have = info.config.subjects ?? [];
    if (!subjects.every((s) => have.includes(s)))
      throw new XrateError(
        'conflict',
        `the stream "${name}" exists with subjects ${JSON.stringify(have)}, not ${JSON.stringify(subjects)}`,
      );
    return;
  } catch (e) {
    if (isXrateError(e)) throw e;
    if (!/not found/i.test((e as Error).message))
      throw new XrateError('unavailable', `cannot read the stream "${name}": ${(e as Error).message}`);
  }
  try {
    await jsm.streams.add({ name, subjects });
  } catch (e) {
    throw new XrateError('unavailable', `cannot create the stream "${name}": ${(e as Error).message}`);
  }
}

/**
 * Throws when `path` cannot be published: it cannot be opened, or it is a vendor file (CoinAPI,
 * tardis), whose rows need the state of a replay (the `symbol` events mapping tardis symbols, the
 * date of a CoinAPI folder) to become events: a stream carries records a replica reads alone.
 */
function checkPublishable(path: string, format: SourceFormat | undefined): void {
  const src = openSource(path, { format });
  const f = src.format;
  src.close();
  if (f === 'coinapi' || f === 'tardis')
    throw new XrateError(
      'input',
      `"${path}" is a ${f} file: a stream carries xrate's own records (NDJSON, CSV, SQLite); replay vendor files with "xrate replay", or convert them to NDJSON first`,
    );
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A record out of this many is a checkpoint (see the module description). */
export const CHECK_EVERY = 1000;

/** The header that makes JetStream store a message only as the next one after this sequence. */
const EXPECTED_LAST_SEQUENCE = 'Nats-Expected-Last-Sequence';

/** The end of a stream: its last sequence (0 when nothing was ever stored) and its last message. */
export interface StreamEnd {
  seq: number;
  /** The last message it holds, read back (undefined when it holds none). */
  last?: FeedItem & { seq: number };
}

/** Reads the last message of `stream` (its headers say which log and line it is). */
export async function streamEnd(jsm: JetStreamManager, stream: string): Promise<StreamEnd> {
  const seq = (await jsm.streams.info(stream)).state.last_seq;
  if (seq === 0) return { seq };
  // The last message of any subject: a deleted message is skipped.
  const m = await jsm.streams.getMessage(stream, { last_by_subj: `${stream}.>` });
  return { seq, last: m ? { ...decodeMessage(m.header, m.string()), seq: m.seq } : undefined };
}

/** Where a run starts: the input at `index`, after its line `after` (0: from its first line). */
interface Start {
  index: number;
  after: number;
}

/** The same file, by path as given or by real path. */
function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * Where `resume` starts, from the end of the stream: after the last record's line in its log
 * (found among `inputs`), from the start when the stream is empty; a string when there is nothing
 * to resume (the stream ends with an end-of-run message).
 *
 * @throws XrateError when the last message is a record of none of the inputs, or not a record
 */
function resumeStart(end: StreamEnd, inputs: readonly string[], stream: string): Start | string {
  const last = end.last;
  if (last === undefined) return { index: 0, after: 0 };
  if (last.kind === 'end') {
    return `the stream ${stream} ends with the end-of-run message of a publish run (sequence ${last.seq}); to publish logs after it, run without --resume`;
  }
  if (last.kind !== 'record' || last.line === 0) {
    throw new XrateError(
      'conflict',
      `--resume: the last message of the stream ${stream} (sequence ${last.seq}) is not a record of "xrate publish"${last.kind === 'unknown' ? ` (${last.why})` : ''}, so where to continue is not known: use --from-line`,
      { field: '--resume' },
    );
  }
  const index = inputs.findIndex((p) => sameFile(p, last.input));
  if (index < 0) {
    throw new XrateError(
      'conflict',
      `--resume: the last record of the stream ${stream} (sequence ${last.seq}) is line ${last.line} of "${last.input}", which is none of the LOGs given (${inputs.map((p) => `"${p}"`).join(', ')}): give the LOGs of the run to resume, in the same order`,
      { field: '--resume' },
    );
  }
  return { index, after: last.line };
}

/** Resolves as `p`, or rejects after `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Publishes `opts.inputs` (see the module description).
 *
 * @throws XrateErrors when NATS cannot be reached, the stream cannot be made, or a log cannot be opened
 * @example
 * ```ts
 * const run = await publish({ inputs: ['day.ndjson.gz'], nats: 'nats://127.0.0.1:4222', stream: 'XRATE' });
 * const { published, lastSeq } = await run.done;
 * ```
 */
export async function publish(opts: PublishOptions): Promise<PublishRun> {
  if (opts.follow && (opts.inputs.length !== 1 || opts.rate !== undefined))
    throw new XrateError('usage', '--follow publishes one plain NDJSON log as it grows (without --rate)', { field: '--follow' });
  if (opts.resume && opts.fromLine !== undefined)
    throw new XrateError('usage', 'give --resume or --from-line, not both', { field: '--resume' });
  const now = opts.now ?? Date.now;
  // The logs are checked before connecting: a missing file or a vendor file is reported as such.
  if (!opts.follow) for (const path of opts.inputs) checkPublishable(path, opts.format);
  const tail = opts.follow ? FileTail.open(opts.inputs[0], { maxLineBytes: opts.maxLineBytes }) : undefined;
  const nc = await connectNats(opts.nats, 'xrate publish', opts.natsSecurity);
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  /** The stream's last sequence once every record published so far is stored. */
  let expected: number;
  let start: Start | string = { index: 0, after: Math.max(0, (opts.fromLine ?? 1) - 1) };
  try {
    jsm = await jetstreamManager(nc);
    await ensureStream(jsm, opts.stream);
    const end = await streamEnd(jsm, opts.stream);
    expected = end.seq;
    if (opts.resume) start = resumeStart(end, opts.inputs, opts.stream);
    js = jetstream(nc);
  } catch (e) {
    tail?.close();
    await nc.close();
    throw e;
  }
  const startSeq = expected;
  const window = Math.max(1, opts.window ?? 8);
  const started = now();
  let stopped = false;
  let published = 0;
  let lastSeq = expected;
  let input = opts.inputs[typeof start === 'string' ? 0 : start.index] ?? '';
  let failure: XrateError | undefined;
  const inflight: Promise<unknown>[] = [];
  let lastProgress = started;
  const startedAfter = typeof start !== 'string' && start.after > 0 ? { input, line: start.after } : undefined;
  const progress = (): PublishProgress => ({
    published,
    lastSeq,
    input,
    elapsedMs: now() - started,
    ...(startedAfter ? { startedAfter } : {}),
    ...(typeof start === 'string' ? { nothingToResume: start } : {}),
  });
  if (startedAfter) opts.onNotice?.(`continuing after line ${startedAfter.line} of ${startedAfter.input} (stream sequence ${startSeq})`);

  /**
   * Publishes `m` as the stream's message `expected + 1`: the server stores it only as the next
   * message after `expected` (so a message lost on the way, when NATS restarts, is never followed
   * by the ones sent after it, and what the stream holds is always the logs up to a line); a
   * checkpoint waits for its acknowledgement (at most `window` outstanding).
   */
  const send = async (subject: string, m: FeedMessage, checkpoint: boolean, where: string): Promise<void> => {
    if (failure) throw failure;
    expected++;
    if (!checkpoint) {
      m.headers.set(EXPECTED_LAST_SEQUENCE, String(expected - 1));
      nc.publish(subject, m.data, { headers: m.headers });
      return;
    }
    const want = expected;
    const p = js.publish(subject, m.data, { headers: m.headers, expect: { lastSequence: want - 1 } }).then(
      (ack: PubAck) => {
        if (ack.seq > lastSeq) lastSeq = ack.seq;
      },
      (e: Error) => {
        const why = /wrong last sequence/i.test(e.message)
          ? ': a record before it was not stored, or another publisher wrote the stream'
          : '';
        failure ??= new XrateError('failed', `the stream did not take ${where} (sequence ${want} expected${why}): ${e.message}`);
      },
    );
    inflight.push(p);
    if (inflight.length >= window) await inflight.shift();
    if (opts.onProgress && now() - lastProgress >= (opts.progressEveryMs ?? 1000)) {
      lastProgress = now();
      opts.onProgress(progress());
    }
  };

  // --rate: the n-th record leaves no earlier than n / rate seconds after the start.
  const pace = async (): Promise<void> => {
    if (opts.rate === undefined) return;
    const due = started + (published * 1000) / opts.rate;
    const wait = due - now();
    if (wait > 1) await sleep(wait);
  };

  /** Sends the records after line `after` of `records`. */
  const sendRecords = async (all: readonly SourceRecord[], name: string, after: number): Promise<void> => {
    const records = after > 0 && all.length > 0 && all[0].line <= after ? all.filter((r) => r.line > after) : all;
    for (let i = 0; i < records.length; i++) {
      const rec = records[i];
      await pace();
      const checkpoint = i === records.length - 1 || (published + 1) % CHECK_EVERY === 0;
      await send(eventSubject(opts.stream, exchangeOf(rec)), encodeRecord(rec, name), checkpoint, `line ${rec.line} of ${name}`);
      published++;
    }
  };

  /**
   * After a failure: the last record the stream holds, read once every message sent has reached
   * the server (NATS may be restarting: asked again until `positionWaitMs`), in a sentence.
   */
  const whereItStands = async (f: Error): Promise<string> => {
    const waitMs = opts.positionWaitMs ?? 60_000;
    const deadline = Date.now() + waitMs;
    let why = '';
    for (let attempt = 0; ; attempt++) {
      if (attempt === 1) {
        opts.onNotice?.(
          `${f.message}; NATS does not answer (${why}): asking it again, for up to ${Math.round(waitMs / 1000)} s, which line the stream holds last`,
        );
      }
      try {
        await within(nc.flush(), 5000, 'NATS');
        const end = await streamEnd(jsm, opts.stream);
        const last = end.last;
        if (end.seq <= startSeq || last === undefined) {
          return `No record of this run was stored (the stream ${opts.stream} ends at sequence ${end.seq}, as when the run started): run it again as it was`;
        }
        if (last.kind === 'end') {
          return `The stream ${opts.stream} holds the whole run, its end-of-run message included (sequence ${last.seq}): nothing is left to publish`;
        }
        if (last.kind === 'record') {
          return `The stream ${opts.stream} holds line ${last.line} of ${last.input} last (sequence ${last.seq}): run the same command with --resume to publish from line ${last.line + 1}`;
        }
        return `The last message of the stream ${opts.stream} (sequence ${last.seq}) is not a record of this run`;
      } catch (e) {
        why = (e as Error).message;
      }
      if (Date.now() >= deadline) break;
      await sleep(500);
    }
    return `Which line the stream holds last could not be read (${why}): once NATS is back, the same command with --resume publishes from the line after it`;
  };

  const run = async (): Promise<PublishProgress> => {
    try {
      if (typeof start === 'string') return progress();
      const from = start;
      if (tail) {
        const name = tail.path;
        while (!stopped) {
          const batches: SourceRecord[][] = [];
          tail.read((records) => batches.push(records));
          for (const b of batches) await sendRecords(b, name, from.after);
          if (batches.length === 0) await sleep(opts.pollMs ?? 200);
        }
      } else {
        for (let k = from.index; k < opts.inputs.length; k++) {
          if (stopped) break;
          const path = opts.inputs[k];
          input = path;
          const after = k === from.index ? from.after : 0;
          const src = openSource(path, { format: opts.format, maxLineBytes: opts.maxLineBytes });
          try {
            for await (const records of src.batches()) {
              await sendRecords(records, path, after);
              if (stopped) break;
            }
          } finally {
            src.close();
          }
        }
        if (!stopped) await send(controlSubject(opts.stream), endMessage(), true, 'the end-of-run message');
      }
      await Promise.all(inflight);
      if (failure) throw failure;
      const p = progress();
      opts.onProgress?.(p);
      return p;
    } catch (e) {
      if (failure === undefined) throw e;
      await Promise.allSettled(inflight);
      throw new XrateError(failure.code, `${failure.message}. ${await whereItStands(failure)}`, { cause: failure });
    } finally {
      tail?.close();
      await Promise.allSettled(inflight);
      // NATS may still be away: the connection is then closed rather than drained.
      await within(nc.drain(), 10_000, 'NATS').catch(() => nc.close());
    }
  };
  return {
    done: run(),
    stop: () => {
      stopped = true;
    },
  };
}
