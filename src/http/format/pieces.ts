/**
 * A long history answer (ExchangeRatesTimeseriesItem[]) rendered a run of items at a time, in
 * every format of {@link render}: a head, the pieces of consecutive runs of items, a tail. Joined,
 * the pieces are exactly the bytes {@link render} gives for the whole array, so an answer written
 * a slice at a time is the same answer (and compresses to the same gzip/deflate bytes).
 *
 * @module
 */
import { Encoder } from '@msgpack/msgpack';
import { csvHistoryPieces } from './csv.js';
import { CONTENT_TYPES, type OutputFormat } from './negotiate.js';
import { xmlHistoryPieces } from './xml.js';

/** A history answer in pieces (see the module description). */
export interface HistoryPieces {
  type: string;
  head: string | Buffer;
  /** The piece of `items`, a run of the array starting at index `at`. */
  items(items: readonly unknown[], at: number): string | Buffer;
  tail: string | Buffer;
}

/** The MessagePack header of an array of `n` items (fixarray, array 16 or array 32). */
function msgpackArrayHeader(n: number): Buffer {
  if (n < 16) return Buffer.from([0x90 | n]);
  if (n < 0x10000) return Buffer.from([0xdc, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = 0xdd;
  b.writeUInt32BE(n, 1);
  return b;
}

/**
 * The pieces of a history of `count` items in `format` (see the module description).
 *
 * @param first - the array's first item (XML cuts its head from it)
 */
export function historyPieces(format: OutputFormat, count: number, first: unknown): HistoryPieces {
  switch (format.kind) {
    case 'json':
      return {
        type: CONTENT_TYPES.json,
        head: '[',
        items: (items, at) => (at > 0 ? ',' : '') + items.map((x) => JSON.stringify(x)).join(','),
        tail: ']',
      };
    case 'msgpack': {
      // Array items are encoded one after the other, as the whole array's encoding holds them.
      const encoder = new Encoder({ ignoreUndefined: true });
      return {
        type: CONTENT_TYPES.msgpack,
        head: msgpackArrayHeader(count),
        items: (items) => Buffer.concat(items.map((x) => encoder.encode(x))),
        tail: Buffer.alloc(0),
      };
    }
    case 'xml': {
      const p = xmlHistoryPieces(first);
      return { type: CONTENT_TYPES.xml, head: p.head, items: (items) => p.items(items), tail: p.tail };
    }
    case 'csv': {
      const p = csvHistoryPieces(format.csv);
      return { type: CONTENT_TYPES.csv, head: p.header, items: (items) => p.rows(items), tail: '' };
    }
  }
}
