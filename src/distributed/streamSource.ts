/**
 * A JetStream stream as a record source of the replay driver (src/replay/recordSource.ts): the
 * replica's part that knows NATS. Messages come in sequence order from an ordered consumer; those
 * delivered together (at most `batchSize`, cut where the stream has no more pending) make one
 * batch, so one transaction of the replica's database. Each message is a record of a published
 * log, the end of a publish run, or a message of an unknown kind (skipped with a warning);
 * feed.ts says what a message holds.
 *
 * @module
 */
import type { JsMsg } from '@nats-io/jetstream';
import { TimeCache } from '../io/fastNdjson.js';
import { LineLimit } from '../io/lineLimit.js';
import { lineRecord } from '../io/ndjson.js';
import type { SourceRecord } from '../io/source.js';
import type { ReplicaState } from '../replay/driverState.js';
import type { RecordSource, SourceBatch } from '../replay/recordSource.js';
import { decodeMessage } from './feed.js';

/** The records of published logs carry lines of any length the publisher let through. */
const NO_LIMIT = new LineLimit(2 ** 31);

/** Options of {@link StreamSource}. */
export interface StreamSourceOptions {
  /** The consumer's messages. */
  messages: AsyncIterable<JsMsg>;
  /** Messages in one batch at most. */
  batchSize: number;
  /** The replica's place in the stream (its stored state): the sequence applied and the logs seen, updated as messages are applied. */
  position: ReplicaState['replica'];
  /** Told the stream's last sequence as each delivery shows it. */
  onDelivery: (lastSeq: number) => void;
  log?: { warn(obj: object, msg: string): void };
}

/** The stream read by a replica (see the module description). */
export class StreamSource implements RecordSource {
  /** Messages in the batch last handed to the driver. */
  delivered = 0;
  private readonly inputIndex: Map<string, number>;
  private readonly times = new TimeCache();

  constructor(private readonly opts: StreamSourceOptions) {
    this.inputIndex = new Map(opts.position.inputs.map((name, i) => [name, i]));
  }

  async *batches(): AsyncGenerator<SourceBatch> {
    let batch: JsMsg[] = [];
    for await (const m of this.opts.messages) {
      batch.push(m);
      this.opts.onDelivery(m.seq + m.info.pending);
      if (batch.length >= this.opts.batchSize || m.info.pending === 0) {
        this.delivered = batch.length;
        yield this.batch(batch);
        batch = [];
      }
    }
    this.delivered = batch.length;
    if (batch.length > 0) yield this.batch(batch);
  }

  /** The input index of a published log, by its name (a new name gets the next index). */
  private inputOf(name: string): number {
    const rs = this.opts.position;
    let i = this.inputIndex.get(name);
    if (i === undefined) {
      i = rs.inputs.length;
      rs.inputs.push(name);
      this.inputIndex.set(name, i);
    }
    return i;
  }

  /** Messages delivered together, as one batch of the driver. */
  private batch(batch: JsMsg[]): SourceBatch {
    const rs = this.opts.position;
    const log = this.opts.log;
    return {
      feed: (sink) => {
        for (const m of batch) {
          // An ordered consumer delivers every sequence in turn; anything else is a gap.
          if (m.seq !== rs.seq + 1)
            throw new Error(`stream message ${m.seq} came after ${rs.seq}: the messages between are gone, and the replica stops there`);
          const item = decodeMessage(m.headers, m.string());
          if (item.kind === 'end') sink.endOfInput();
          else if (item.kind === 'unknown') log?.warn({ seq: m.seq }, `stream message ${m.seq} skipped: ${item.why}`);
          else {
            const input = this.inputOf(item.input);
            const rec: SourceRecord | undefined = item.reject
              ? { line: item.line, raw: item.raw, error: item.reject.error, reason: item.reject.reason }
              : lineRecord(item.raw, 0, item.raw.length, item.line, NO_LIMIT, this.times);
            if (rec !== undefined) sink.record(rec, input);
          }
          rs.seq = m.seq;
        }
        // A replica resumes from its stored sequence, not from an input and line.
        return { input: 0, line: 0 };
      },
    };
  }
}
