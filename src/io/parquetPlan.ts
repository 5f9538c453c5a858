/**
 * What reading a Parquet event log's row groups flat needs of its footer (parquetRead.ts): the
 * footer parsed whole is let go, the plans kept.
 *
 * @module
 */
import type { FileMetaData } from 'hyparquet';
import { EVENT_COLUMNS } from './parquetSchema.js';

/** The columns read flat: every event column but `input`. */
export const FLAT_COLUMNS = EVENT_COLUMNS.map((c) => c.name).filter((n) => n !== 'input');

/**
 * What reading a row group flat needs of the footer: its rows and compressed bytes, and each of
 * {@link FLAT_COLUMNS}' byte range (`ranges`, from and to in turn) with its physical type and
 * codec (indexes into {@link Plans.names}); or, when it cannot be read so, why. The footer
 * itself is let go: parsed, it is about 14 KB of objects per row group (21 MB for the 1,526 row
 * groups of a hundred million events), growing with the file; a plan is under half a kilobyte.
 */
export interface GroupPlan {
  rows: number;
  compressed: number;
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

/** The plans of every row group of `md` (see {@link GroupPlan}). */
export function plansOf(md: FileMetaData): Plans {
  const names: string[] = [];
  const code = (name: string): number => {
    let k = names.indexOf(name);
    if (k < 0) k = names.push(name) - 1;
    return k;
  };
  const optional = new Map(md.schema.map((e) => [e.name, e.repetition_type === 'OPTIONAL']));
  const groups = md.row_groups.map((rg): GroupPlan => {
    const rows = Number(rg.num_rows);
    const plan: GroupPlan = { rows, compressed: Number(rg.total_compressed_size ?? 0n) };
    const ranges = new Float64Array(2 * FLAT_COLUMNS.length).fill(-1);
    const codes = new Uint8Array(2 * FLAT_COLUMNS.length);
    for (const c of rg.columns) {
      const m = c.meta_data;
      const k = m?.path_in_schema.length === 1 ? FLAT_COLUMNS.indexOf(m.path_in_schema[0]) : -1;
      if (m === undefined || k < 0) continue;
      if (Number(m.num_values) !== rows) {
        plan.unsupported = 'parquet column chunk of another length than its row group';
        return plan;
      }
      const from = Number(m.dictionary_page_offset ?? m.data_page_offset);
      ranges[2 * k] = from;
      ranges[2 * k + 1] = from + Number(m.total_compressed_size);
      codes[2 * k] = code(m.type);
      codes[2 * k + 1] = code(m.codec);
    }
    if (ranges.some((v) => v < 0)) plan.unsupported = 'parquet row group without every column';
    else Object.assign(plan, { ranges, codes });
    return plan;
  });
  return { groups, names, optional: FLAT_COLUMNS.map((n) => optional.get(n) ?? true) };
}
