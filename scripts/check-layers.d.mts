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

/** `text` with its comments blanked (the same offsets and lines). */
export function withoutComments(text: string): string;

/** One import of a module's code, as {@link importsIn} finds it. */
export interface FoundImport {
  /** Its offset in the code. */
  at: number;
  kind: 'import' | 'export';
  /** The module it names, as written. */
  spec: string;
  /** `import type` or `export type`: nothing is loaded. */
  typeOnly: boolean;
  /** `import('...')`: loaded when it runs. */
  dynamic: boolean;
}

/** The imports of a module's code, its comments blanked ({@link withoutComments}). */
export function importsIn(code: string): FoundImport[];
