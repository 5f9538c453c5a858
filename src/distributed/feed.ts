/**
 * The live feed on NATS JetStream: what `xrate publish` puts on a stream and what the replicas of
 * `xrate serve --nats` read back (docs/deploy.md).
 *
 * - **One stream, one total order.** A stream `NAME` holds the subjects `NAME.>`: every record of
 *   the published logs goes to `NAME.ev.{EXCHANGE}` (the event's exchange, or `_` when it has none
 *   or cannot be read), in log order. The stream's sequence numbers are the order every replica
 *   applies them in, whatever the subjects: replicas read the whole stream with an ordered
 *   consumer, so they apply the same records in the same order and, the engine being
 *   deterministic, compute the same rates with no coordination.
 * - **A message is a record**, as the readers give it: its text (an NDJSON line as it is; a CSV or
 *   SQLite row as its JSON object) and the headers `Xrate-Input` (the log's path as given to `xrate publish`) and `Xrate-Line`
 *   (its line or rowid). A record the reader already refused (a line over `--max-line-bytes`, a
 *   malformed CSV row) carries `Xrate-Reject` (its reason) and `Xrate-Error` (the message), so
 *   that each replica stores the same reject as a replay of the log would.
 * - **The end of a publish run** is a message on `NAME.ctl` with `Xrate-Control: end`: a replica
 *   then ticks through the second of the last event it accepted, as `xrate replay` does at the end
 *   of its input, so that a replica that has read a whole published log answers exactly as a replay
 *   of that log.
 *
 * @module
 */
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import type { RejectReason } from '../core/types.js';
import type { SourceRecord } from '../io/source.js';

/** Header naming the log a record comes from. */
const H_INPUT = 'Xrate-Input';
/** Header giving the record's line (rowid for SQLite). */
const H_LINE = 'Xrate-Line';
/** Header with the reject reason of a record the reader refused. */
const H_REJECT = 'Xrate-Reject';
/** Header with the reader's message for such a record. */
const H_ERROR = 'Xrate-Error';
/** Header of a control message. */
const H_CONTROL = 'Xrate-Control';

/** The subjects of stream `stream`. */
export function streamSubjects(stream: string): string[] {
  return [`${stream}.>`];
}

/** The subject of control messages of `stream`. */
export function controlSubject(stream: string): string {
  return `${stream}.ctl`;
}

/**
 * The subject of a record of exchange `exchange` (undefined: `_`). Characters a subject token
 * cannot hold (`.`, `*`, `>`, white space) become `_`: `BINANCE.hedge` → `NAME.ev.BINANCE_hedge`.
 */
export function eventSubject(stream: string, exchange: string | undefined): string {
  const token = exchange === undefined || exchange === '' ? '_' : exchange.replace(/[.*>\s]/g, '_');
  return `${stream}.ev.${token}`;
}

/** The exchange of a record, for its subject: its `exchange_id`, or the part of its `symbol_id` before the first `_`. */
export function exchangeOf(rec: SourceRecord): string | undefined {
  const fields = (rec.event ?? rec.record) as Record<string, unknown> | undefined;
  if (!fields) return undefined;
  const ex = fields.exchange_id;
  if (typeof ex === 'string' && ex !== '') return ex;
  const sym = fields.symbol_id;
  if (typeof sym === 'string') {
    const i = sym.indexOf('_');
    if (i > 0) return sym.slice(0, i);
  }
  return undefined;
}

/** A record as published: its payload (UTF-8 text) and headers. */
export interface FeedMessage {
  data: string;
  headers: MsgHdrs;
}

/** The message of record `rec` of the log named `input`. */
export function encodeRecord(rec: SourceRecord, input: string): FeedMessage {
  const h = natsHeaders();
  h.set(H_INPUT, input);
  h.set(H_LINE, String(rec.line));
  if (rec.error !== undefined) {
    h.set(H_REJECT, rec.reason ?? 'bad_json');
    // A header value is one line.
    h.set(H_ERROR, rec.error.replace(/[\r\n]+/g, ' '));
  }
  return { data: rec.raw, headers: h };
}

/** The end-of-run control message. */
export function endMessage(): FeedMessage {
  const h = natsHeaders();
  h.set(H_CONTROL, 'end');
  return { data: '', headers: h };
}

/** What a replica reads from a message: a record of a log, or a control message. */
export type FeedItem =
  | { kind: 'record'; input: string; line: number; raw: string; reject?: { reason: RejectReason; error: string } }
  | { kind: 'end' }
  | { kind: 'unknown'; why: string };

/** Reads a message's headers and text (see the module description). */
export function decodeMessage(headers: MsgHdrs | undefined, data: string): FeedItem {
  const control = headers?.get(H_CONTROL);
  if (control) return control === 'end' ? { kind: 'end' } : { kind: 'unknown', why: `unknown control message "${control}"` };
  const input = headers?.get(H_INPUT) || 'nats';
  const line = Number(headers?.get(H_LINE));
  const reason = headers?.get(H_REJECT);
  return {
    kind: 'record',
    input,
    line: Number.isSafeInteger(line) && line > 0 ? line : 0,
    raw: data,
    reject: reason ? { reason: reason as RejectReason, error: headers?.get(H_ERROR) || 'unreadable record' } : undefined,
  };
}
