/**
 * `xrate publish`: puts the records of event logs on a JetStream stream (feed.ts), creating the
 * stream when it does not exist, at full speed or at a given rate, or following a growing log.
 *
 * Order and delivery: the records are published from one connection, in log order; NATS keeps
 * one connection's messages in order, so the stream's sequence is the logs' order. Most records go
 * out without waiting for an acknowledgement (the client library makes one object with a stack trace
 * per acknowledged publish, which cost most of the time); every {@link CHECK_EVERY}-th record, the
 * last record of each batch read and the end-of-run message are checkpoints: published with
 * JetStream's acknowledgement and the header that makes the server refuse them unless the stream's
 * last sequence is the one expected (`Nats-Expected-Last-Sequence`). So a checkpoint acknowledged
 * proves that every record before it was stored, in order, with no other message in between; one
 * refused stops the run, naming the log and line of the checkpoint (the records since the previous
 * checkpoint may be missing: publish again from there with care, as a record published twice is
 * applied twice). At most {@link PublishOptions.window} checkpoints are outstanding. One publisher
 * writes a stream at a time: a second one is caught by the first checkpoint of either.
 *
 * @module
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type PubAck } from '@nats-io/jetstream';
import { openSource, type SourceFormat, type SourceRecord } from '../io/source.js';
import { FileTail } from '../io/tail.js';
import { controlSubject, encodeRecord, endMessage, eventSubject, exchangeOf, streamSubjects, type FeedMessage } from './feed.js';
import { connectNats } from './natsConnect.js';
import type { NatsSecurity } from './security.js';

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
      throw new Error(`xrate: the stream "${name}" exists with subjects ${JSON.stringify(have)}, not ${JSON.stringify(subjects)}`);
    return;
  } catch (e) {
    if ((e as Error).message.startsWith('xrate:')) throw e;
    if (!/not found/i.test((e as Error).message)) throw new Error(`xrate: cannot read the stream "${name}": ${(e as Error).message}`);
  }
  try {
    await jsm.streams.add({ name, subjects });
  } catch (e) {
    throw new Error(`xrate: cannot create the stream "${name}": ${(e as Error).message}`);
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
    throw new Error(
      `xrate: "${path}" is a ${f} file: a stream carries xrate's own records (NDJSON, CSV, SQLite); replay vendor files with "xrate replay", or convert them to NDJSON first`,
    );
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A record out of this many is a checkpoint (see the module description). */
export const CHECK_EVERY = 1000;

/**
 * Publishes `opts.inputs` (see the module description).
 *
 * @throws `xrate:` errors when NATS cannot be reached, the stream cannot be made, or a log cannot be opened
 * @example
 * ```ts
 * const run = await publish({ inputs: ['day.ndjson.gz'], nats: 'nats://127.0.0.1:4222', stream: 'XRATE' });
 * const { published, lastSeq } = await run.done;
 * ```
 */
export async function publish(opts: PublishOptions): Promise<PublishRun> {
  if (opts.follow && (opts.inputs.length !== 1 || opts.rate !== undefined))
    throw new Error('xrate: --follow publishes one plain NDJSON log as it grows (without --rate)');
  const now = opts.now ?? Date.now;
  // The logs are checked before connecting: a missing file or a vendor file is reported as such.
  if (!opts.follow) for (const path of opts.inputs) checkPublishable(path, opts.format);
  const tail = opts.follow ? FileTail.open(opts.inputs[0], { maxLineBytes: opts.maxLineBytes }) : undefined;
  const nc = await connectNats(opts.nats, 'xrate publish', opts.natsSecurity);
  let js: JetStreamClient;
  /** The stream's last sequence once every record published so far is stored. */
  let expected: number;
  try {
    const jsm = await jetstreamManager(nc);
    await ensureStream(jsm, opts.stream);
    expected = (await jsm.streams.info(opts.stream)).state.last_seq;
    js = jetstream(nc);
  } catch (e) {
    tail?.close();
    await nc.close();
    throw e;
  }
  const window = Math.max(1, opts.window ?? 8);
  const started = now();
  let stopped = false;
  let published = 0;
  let lastSeq = expected;
  let input = opts.inputs[0] ?? '';
  let failure: Error | undefined;
  const inflight: Promise<unknown>[] = [];
  let lastProgress = started;
  const progress = (): PublishProgress => ({ published, lastSeq, input, elapsedMs: now() - started });

  /** Publishes `m`; a checkpoint waits for its acknowledgement (at most `window` outstanding). */
  const send = async (subject: string, m: FeedMessage, checkpoint: boolean, where: string): Promise<void> => {
    if (failure) throw failure;
    expected++;
    if (!checkpoint) {
      nc.publish(subject, m.data, { headers: m.headers });
      return;
    }
    const want = expected;
    const p = js.publish(subject, m.data, { headers: m.headers, expect: { lastSequence: want - 1 } }).then(
      (ack: PubAck) => {
        if (ack.seq > lastSeq) lastSeq = ack.seq;
      },
      (e: Error) => {
        failure ??= new Error(
          `xrate: the stream did not take ${where} (sequence ${want} expected: a record before it was not stored, or another publisher wrote the stream): ${e.message}`,
        );
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

  const sendRecords = async (records: readonly SourceRecord[], name: string): Promise<void> => {
    for (let i = 0; i < records.length; i++) {
      const rec = records[i];
      await pace();
      const checkpoint = i === records.length - 1 || (published + 1) % CHECK_EVERY === 0;
      await send(eventSubject(opts.stream, exchangeOf(rec)), encodeRecord(rec, name), checkpoint, `line ${rec.line} of ${name}`);
      published++;
    }
  };

  const run = async (): Promise<PublishProgress> => {
    try {
      if (tail) {
        const name = tail.path;
        while (!stopped) {
          const batches: SourceRecord[][] = [];
          tail.read((records) => batches.push(records));
          for (const b of batches) await sendRecords(b, name);
          if (batches.length === 0) await sleep(opts.pollMs ?? 200);
        }
      } else {
        for (const path of opts.inputs) {
          if (stopped) break;
          input = path;
          const src = openSource(path, { format: opts.format, maxLineBytes: opts.maxLineBytes });
          try {
            for await (const records of src.batches()) {
              await sendRecords(records, path);
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
    } finally {
      tail?.close();
      await Promise.allSettled(inflight);
      await nc.drain().catch(() => nc.close());
    }
  };
  return {
    done: run(),
    stop: () => {
      stopped = true;
    },
  };
}
