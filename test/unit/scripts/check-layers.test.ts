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

/** A table of known violations with one entry, the repository's own table otherwise. */
const WITH_KNOWN = {
  ...readTable(),
  known: [{ file: 'src/io/old.ts', imports: 'src/replay/newer.ts', why: 'known, being fixed' }],
};
const KNOWN = { 'src/io/old.ts': "import { newer } from '../replay/newer.js';\n", 'src/replay/newer.ts': '' };

describe('the layer check', () => {
  it('reports each forbidden import with its file, line and rule, and each impurity of src/core', () => {
    const root = tree({
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
      'package.json': JSON.stringify({ main: './dist/index.js', exports: { './service': { import: './dist/service/index.js' } } }),
      'src/service/index.ts': "export { start } from '../app/serve.js';\nimport { start } from '../app/serve.js';\n",
      'src/app/serve.ts': 'export const start = 1;\n',
    });
    expect(checkLayers(root)).toEqual([
      "src/service/index.ts:2: service may not import app (src/app/serve.ts): import { start } from '../app/serve.js';",
    ]);
  });

  it('allows a known violation while it is there, and says when it is gone', () => {
    expect(checkLayers(tree(KNOWN), WITH_KNOWN)).toEqual([]);
    expect(checkLayers(tree(KNOWN))).toEqual([
      "src/io/old.ts:1: io may not import replay (src/replay/newer.ts): import { newer } from '../replay/newer.js';",
    ]);
    expect(checkLayers(tree({ 'src/io/old.ts': '' }), WITH_KNOWN)).toEqual([
      'scripts/layers.json: the known violation src/io/old.ts -> src/replay/newer.ts is gone: remove it from "known"',
    ]);
  });

  it('keeps the reference out of the library: no layer but the tests imports src/reference', () => {
    const root = tree({
      'src/reference/merge.ts': 'export const merge = 1;\n',
      'src/io/store.ts': "import { merge } from '../reference/merge.js';\n",
    });
    expect(checkLayers(root)).toEqual([
      "src/io/store.ts:1: io may not import reference (src/reference/merge.ts): import { merge } from '../reference/merge.js';",
    ]);
  });

  it('passes on this repository', () => {
    expect(checkLayers()).toEqual([]);
  });
});
