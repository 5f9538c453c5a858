/**
 * The layer check (scripts/check-layers.mjs): a small tree with one violation of each kind is
 * reported file:line with the rule broken; what the table allows (a lower layer, an entry point's
 * re-export, a known violation) is not; and this repository passes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLayers, readTable } from '../../../scripts/check-layers.mjs';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A tree of `files` (path -> text) in a new directory. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'xrate-layers-'));
  dirs.push(root);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  return root;
}

const KNOWN = { 'src/io/partitionMerge.ts': "import { trimRateDump } from '../replay/partition.js';\n", 'src/replay/partition.ts': '' };

describe('the layer check', () => {
  it('reports each forbidden import with its file, line and rule, and each impurity of src/core', () => {
    const root = tree({
      ...KNOWN,
      'src/core/a.ts': "import { b } from './b.js';\nimport type { X } from '../service/x.js';\nexport const t = Date.now();\n",
      'src/core/b.ts': '/** Example: `import { y } from "../cli/main.js"` in a comment is no import. */\nexport const b = 1;\n',
      'src/service/x.ts': "export type X = 1;\nimport {\n  y,\n} from '../ems/y.js';\n",
      'src/ems/y.ts': "export const y = 2;\nconst z = await import('../app/z.js');\n",
      'src/app/z.ts': "import { y } from '../ems/y.js';\nimport { x } from '../service/x.js';\n",
      'src/answers/w.ts': "import { listen } from '../http/listen.js';\n",
      'src/http/listen.ts': '',
      'src/lost/v.ts': '',
    });
    expect(checkLayers(root)).toEqual([
      "src/answers/w.ts:1: answers may not import http (src/http/listen.ts): import { listen } from '../http/listen.js';",
      "src/core/a.ts:2: core may not import service (src/service/x.ts): import type { X } from '../service/x.js';",
      'src/core/a.ts:3: core is pure but reads the wall clock or the environment: export const t = Date.now();',
      "src/ems/y.ts:2: ems may not import app (src/app/z.ts): const z = await import('../app/z.js');",
      'src/lost/v.ts:1: lies in no layer of scripts/layers.json (give its directory a row there)',
      'src/service/x.ts:2: service may not import ems (src/ems/y.ts): import {',
    ]);
  });

  it("lets the package's entry points re-export from any layer, but not import from it", () => {
    const root = tree({
      ...KNOWN,
      'package.json': JSON.stringify({ main: './dist/index.js', exports: { './service': { import: './dist/service/index.js' } } }),
      'src/service/index.ts': "export { start } from '../app/serve.js';\nimport { start } from '../app/serve.js';\n",
      'src/app/serve.ts': 'export const start = 1;\n',
    });
    expect(checkLayers(root)).toEqual([
      "src/service/index.ts:2: service may not import app (src/app/serve.ts): import { start } from '../app/serve.js';",
    ]);
  });

  it('allows a known violation while it is there, and says when it is gone', () => {
    expect(checkLayers(tree(KNOWN))).toEqual([]);
    const table = readTable();
    expect(table.known?.map((k) => `${k.file} -> ${k.imports}`)).toEqual(['src/io/partitionMerge.ts -> src/replay/partition.ts']);
    expect(checkLayers(tree({ 'src/io/partitionMerge.ts': '' }))).toEqual([
      'scripts/layers.json: the known violation src/io/partitionMerge.ts -> src/replay/partition.ts is gone: remove it from "known"',
    ]);
  });

  it('passes on this repository', () => {
    expect(checkLayers()).toEqual([]);
  });
});
