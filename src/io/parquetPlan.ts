/**
 * What reading a Parquet event log's row groups flat needs of its footer (parquetRead.ts), as
 * parquetFooter.ts reads it: each row group's plan.
 *
 * @module
 */
import { EVENT_COLUMNS } from './parquetSchema.js';

/** The columns read flat: every event column but `input`. */
export const FLAT_COLUMNS = EVENT_COLUMNS.map((c) => c.name).filter((n) => n !== 'input');

/**
 * What reading a row group flat needs of the footer: its rows and compressed bytes, and each of
 * {@link FLAT_COLUMNS}' byte range (`ranges`, from and to in turn) with its physical type and
 * codec (indexes into {@link Plans.names}); or, when it cannot be read so, why. A plan is under
 * half a kilobyte, where hyparquet's parsed footer is about 14 KB of objects per row group.
 */
export interface GroupPlan {
  rows: number;
  compressed: number;
  /** The row group's highest line, from the `line` column's statistics (absent when it has none). */
  lastLine?: number;
  ranges?: Float64Array;
  codes?: Uint8Array;
  unsupported?: string;
}

/** The row groups' plans, with the strings they name (types and codecs) and which columns may be null. */
export interface Plans {
  groups: GroupPlan[];
  names: string[];
  optional: boolean[];
}

/** The `index`-th of `count` runs of a file's row groups (see ParquetReadOptions.slice). */
export interface RowGroupSlice {
  index: number;
  count: number;
}

/** The row groups `[first, end)` of `slice` among `groups` (all of them without one). */
export function sliceOf(groups: number, slice: RowGroupSlice | undefined): [number, number] {
  if (slice === undefined) return [0, groups];
  return [Math.floor((groups * slice.index) / slice.count), Math.floor((groups * (slice.index + 1)) / slice.count)];
}
