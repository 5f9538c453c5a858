/**
 * A Parquet event log's footer (`readMetadata`), and the bytes of an open file (`readAt`).
 *
 * The footer is read for what reading an event log flat needs (parquetPlan.ts): each row
 * group's plan, which columns may be null, and the key-value metadata, read from the footer's
 * Thrift bytes where they lie. hyparquet's `parquetMetadata` makes an object of every field of
 * every column chunk: 43 MB allocated (21 MB kept) for the 1,526 row groups of a hundred million
 * events, in each thread that opens the file, growing with the file; this allocates 1-7 MB for
 * them, in a third of the time, and keeps the plans (under half a kilobyte a row group).
 *
 * Fields read (parquet.thrift): FileMetaData 2 `schema` (SchemaElement 3 `repetition_type`, 4
 * `name`), 4 `row_groups`, 5 `key_value_metadata`; RowGroup 1 `columns`, 3 `num_rows`, 6
 * `total_compressed_size`; ColumnChunk 3 `meta_data`; ColumnMetaData 1 `type`, 3
 * `path_in_schema`, 4 `codec`, 5 `num_values`, 7 `total_compressed_size`, 9 `data_page_offset`,
 * 11 `dictionary_page_offset`, 12 `statistics` (Statistics 5 `max_value`, of the `line` column).
 *
 * @module
 */
import { readSync } from 'node:fs';
import { type FileMetaData, parquetMetadata } from 'hyparquet';
import { XrateError } from '../core/errors.js';
import { FLAT_COLUMNS, type GroupPlan, type Plans } from './parquetPlan.js';
import { PARQUET_EVENTS_KIND, PARQUET_KIND_KEY } from './parquetSchema.js';
import { Compact } from './thriftCompact.js';

/** Parquet's physical types and codecs, by their Thrift enum values (as hyparquet names them). */
const TYPES = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];
const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];

/** Thrift compact types. */
const I32 = 5;
const I64 = 6;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

const OPTIONAL = 1;
const LINE = FLAT_COLUMNS.indexOf('line');

/** What {@link readFooter} gives. */
export interface Footer {
  plans: Plans;
  /** The key-value metadata (a key without a value: undefined; a key given twice: its first value). */
  kv: Map<string, string | undefined>;
}

/**
 * The footer's Thrift bytes (`FileMetaData`, without the length and magic that follow it) read
 * into a {@link Footer}. Throws an Error when they are damaged.
 */
export function readFooter(bytes: Uint8Array): Footer {
  const r = new Compact(bytes, 0, 'parquet footer', 'its bytes');
  const names: string[] = [];
  const code = (name: string): number => {
    let k = names.indexOf(name);
    if (k < 0) k = names.push(name) - 1;
    return k;
  };
  const optional = new Map<string, boolean>();
  const groups: GroupPlan[] = [];
  const kv = new Map<string, string | undefined>();
  // One row group's columns as read (its rows come after them in the struct).
  const values = new Float64Array(FLAT_COLUMNS.length);
  const readColumn = (plan: Required<Pick<GroupPlan, 'ranges' | 'codes'>> & { lastLine?: number }): void => {
    const column = { k: -1, type: -1, codec: -1, values: 0, compressed: 0, data: -1, dictionary: -1, max: undefined as number | undefined };
    let path = 0;
    r.struct((id, t) => {
      if (id !== 3 || t !== STRUCT) return false;
      r.struct((f, ft) => {
        if (f === 1) column.type = int(r, ft, I32, 'type');
        else if (f === 3) {
          expect(ft, LIST, 'path_in_schema');
          r.list((et) => {
            expect(et, BINARY, 'path_in_schema');
            const name = r.string();
            column.k = path++ === 0 ? FLAT_COLUMNS.indexOf(name) : -1;
          });
        } else if (f === 4) column.codec = int(r, ft, I32, 'codec');
        else if (f === 5) column.values = int(r, ft, I64, 'num_values');
        else if (f === 7) column.compressed = int(r, ft, I64, 'total_compressed_size');
        else if (f === 9) column.data = int(r, ft, I64, 'data_page_offset');
        else if (f === 11) column.dictionary = int(r, ft, I64, 'dictionary_page_offset');
        else if (f === 12 && ft === STRUCT) {
          r.struct((s, st) => {
            if (s !== 5 || st !== BINARY) return false;
            const v = r.binary();
            if (v.length === 8) column.max = Number(new DataView(v.buffer, v.byteOffset, 8).getBigInt64(0, true));
            return true;
          });
        } else return false;
        return true;
      });
      return true;
    });
    const k = path === 1 ? column.k : -1;
    if (k < 0) return;
    if (k === LINE && column.type === TYPES.indexOf('INT64')) plan.lastLine = column.max;
    values[k] = column.values;
    // A dictionary page at offset 0 (where the file's magic is) is a writer's way of saying none.
    const from = column.dictionary > 0 ? column.dictionary : column.data;
    plan.ranges[2 * k] = from;
    plan.ranges[2 * k + 1] = from + column.compressed;
    plan.codes[2 * k] = code(TYPES[column.type] ?? `type ${column.type}`);
    plan.codes[2 * k + 1] = code(CODECS[column.codec] ?? `codec ${column.codec}`);
  };
  const readGroup = (): GroupPlan => {
    const plan = {
      rows: 0,
      compressed: 0,
      ranges: new Float64Array(2 * FLAT_COLUMNS.length).fill(-1),
      codes: new Uint8Array(2 * FLAT_COLUMNS.length),
    };
    values.fill(-1);
    r.struct((id, t) => {
      if (id === 1) {
        expect(t, LIST, 'columns');
        r.list((et) => {
          expect(et, STRUCT, 'columns');
          readColumn(plan);
        });
      } else if (id === 3) plan.rows = int(r, t, I64, 'num_rows');
      else if (id === 6) plan.compressed = int(r, t, I64, 'total_compressed_size');
      else return false;
      return true;
    });
    return finished(plan, values);
  };
  r.struct((id, t) => {
    if (id === 2) {
      expect(t, LIST, 'schema');
      r.list((et) => {
        expect(et, STRUCT, 'schema');
        let name: string | undefined;
        let repetition = -1;
        r.struct((f, ft) => {
          if (f === 3) repetition = int(r, ft, I32, 'repetition_type');
          else if (f === 4 && ft === BINARY) name = r.string();
          else return false;
          return true;
        });
        if (name !== undefined) optional.set(name, repetition === OPTIONAL);
      });
    } else if (id === 4) {
      expect(t, LIST, 'row_groups');
      r.list((et) => {
        expect(et, STRUCT, 'row_groups');
        groups.push(readGroup());
      });
    } else if (id === 5) {
      expect(t, LIST, 'key_value_metadata');
      r.list((et) => {
        expect(et, STRUCT, 'key_value_metadata');
        let key: string | undefined;
        let value: string | undefined;
        r.struct((f, ft) => {
          if (f === 1 && ft === BINARY) key = r.string();
          else if (f === 2 && ft === BINARY) value = r.string();
          else return false;
          return true;
        });
        // A key given twice: its first value, as hyparquet's readers take it.
        if (key !== undefined && !kv.has(key)) kv.set(key, value);
      });
    } else return false;
    return true;
  });
  return { plans: { groups, names, optional: FLAT_COLUMNS.map((n) => optional.get(n) ?? true) }, kv };
}

/** Throws unless a field's compact type `t` is the one it is read as. */
function expect(t: number, want: number, field: string): void {
  if (t !== want) throw new Error(`parquet footer: ${field} of thrift type ${t}`);
}

/** An integer field of compact type `want` (i32 or i64, zigzag-encoded). */
function int(r: Compact, t: number, want: number, field: string): number {
  expect(t, want, field);
  return r.zigzag();
}

/** A row group's plan once its columns are read: unsupported when a column is missing or of another length. */
function finished(plan: GroupPlan & Required<Pick<GroupPlan, 'ranges' | 'codes'>>, values: Float64Array): GroupPlan {
  const unsupported = values.some((n) => n >= 0 && n !== plan.rows)
    ? 'parquet column chunk of another length than its row group'
    : plan.ranges.some((v) => v < 0)
      ? 'parquet row group without every column'
      : undefined;
  if (unsupported === undefined) return plan;
  return { rows: plan.rows, compressed: plan.compressed, lastLine: plan.lastLine, unsupported };
}

/** Reads `length` bytes at `position` of an open file (into `into`, at least that long: a view of it). */
export function readAt(fd: number, position: number, length: number, into?: Uint8Array): Uint8Array {
  const buf = into !== undefined ? into.subarray(0, length) : new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/**
 * The footer of a Parquet event log: read lean (parquetFooter.ts: the plans), or `whole` by
 * hyparquet (what its general decoder reads row groups with). An XrateError (`input`) when the
 * file is not an event log.
 */
export function readMetadata(fd: number, size: number, path: string, whole: true): FileMetaData;
export function readMetadata(fd: number, size: number, path: string, whole: false): Footer;
export function readMetadata(fd: number, size: number, path: string, whole: boolean): FileMetaData | Footer {
  const fail = (why: string): never => {
    throw new XrateError('input', `cannot read "${path}" as a Parquet event log: ${why}`);
  };
  if (size < 12) fail('the file is too short');
  const tail = readAt(fd, size - 8, 8);
  const len = new DataView(tail.buffer).getUint32(0, true);
  if (len + 8 > size) fail('its footer is damaged');
  if (Buffer.from(tail.subarray(4)).toString('latin1') !== 'PAR1') fail('parquet file invalid (footer != PAR1)');
  let kind: string | undefined;
  let read: FileMetaData | Footer;
  try {
    if (whole) {
      const md = parquetMetadata(readAt(fd, size - 8 - len, len + 8));
      kind = md.key_value_metadata?.find((kv) => kv.key === PARQUET_KIND_KEY)?.value;
      read = md;
    } else {
      const footer = readFooter(readAt(fd, size - 8 - len, len));
      kind = footer.kv.get(PARQUET_KIND_KEY);
      read = footer;
    }
  } catch (e) {
    return fail((e as Error).message);
  }
  if (kind !== PARQUET_EVENTS_KIND) fail('it was not written by "xrate convert" (convert the data with it first)');
  return read;
}
