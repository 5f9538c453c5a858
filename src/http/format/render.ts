/**
 * Serializing a payload in the negotiated format: JSON (the interface's shapes, field order of the
 * schemas, numbers as JSON numbers), MessagePack (the same maps as JSON, plain maps with no
 * extension types, times as the same strings, rates as float64), XML or CSV.
 *
 * @module
 */
import { encode } from '@msgpack/msgpack';
import { toCsv } from './csv.js';
import { CONTENT_TYPES, type OutputFormat, type PayloadKind } from './negotiate.js';
import { toXml } from './xml.js';

/** MessagePack bytes of a payload (plain maps, the JSON shapes; non-integer numbers as float64). */
export function toMsgpack(value: unknown): Buffer {
  const bytes = encode(value, { ignoreUndefined: true });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Serializes `value` in `format`: the body and its Content-Type. */
export function render(kind: PayloadKind, value: unknown, format: OutputFormat): { body: string | Buffer; type: string } {
  switch (format.kind) {
    case 'json':
      return { body: JSON.stringify(value), type: CONTENT_TYPES.json };
    case 'msgpack':
      return { body: toMsgpack(value), type: CONTENT_TYPES.msgpack };
    case 'xml':
      return { body: toXml(kind, value), type: CONTENT_TYPES.xml };
    case 'csv':
      return { body: toCsv(kind, value, format.csv), type: CONTENT_TYPES.csv };
  }
}
