/** The table of scripts/layers.json. */
export interface LayerTable {
  order: string;
  layers: Record<string, { dir?: string; file?: string; forbidden: string[]; pure?: boolean }>;
  known?: { file: string; imports: string; why: string }[];
}

/** The table of `root`/scripts/layers.json (default: this repository's). */
export function readTable(root?: string): LayerTable;

/** Every violation of the tree at `root` against `table`, as `file:line: rule: the line`, in file and line order. */
export function checkLayers(root?: string, table?: LayerTable): string[];
