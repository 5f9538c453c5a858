/**
 * What a command loads before it runs: the modules its file imports statically, and theirs, down
 * to the packages (type imports and `import()` left out, as Node leaves them until they run). A
 * query of a replay database, `--help` and a chart of a database need none of the replay's
 * readers: they load the replay's module, and with it the Parquet libraries, only when they read
 * a log. (They loaded 135 modules each before, and started in about 0.33 s against 0.24 s.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsIn, withoutComments } from '../../../scripts/check-layers.mjs';

const SRC = resolve(__dirname, '../../../src');

/** The static imports of `file` (a source file), as source files or `pkg:` names, read as the layer check reads them. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const { spec, typeOnly, dynamic } of importsIn(withoutComments(readFileSync(file, 'utf8')))) {
    if (typeOnly || dynamic) continue;
    if (!spec.startsWith('.')) {
      out.push(`pkg:${spec}`);
      continue;
    }
    const ts = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    if (existsSync(ts)) out.push(ts);
  }
  return out;
}

/** Every module `entry` loads statically. */
function closure(entry: string): Set<string> {
  const seen = new Set<string>([entry]);
  const todo = [entry];
  while (todo.length > 0) {
    const f = todo.pop() as string;
    if (f.startsWith('pkg:')) continue;
    for (const g of importsOf(f)) {
      if (seen.has(g)) continue;
      seen.add(g);
      todo.push(g);
    }
  }
  return seen;
}

const rel = (f: string): string => (f.startsWith('pkg:') ? f : f.slice(SRC.length + 1));

describe('the modules a command loads', () => {
  it.each(['rate', 'history', 'explain', 'periods', 'plot'])(
    'xrate %s loads neither the replay, nor the readers, nor a Parquet library until it reads a log',
    (command) => {
      const loaded = [...closure(join(SRC, 'cli', 'commands', `${command}.ts`))].map(rel);
      expect(loaded).toContain('replay/query.ts');
      expect(loaded.filter((m) => m === 'replay/replay.ts' || m === 'io/source.ts' || m.startsWith('pkg:hyparquet'))).toEqual([]);
    },
  );

  it('xrate keys loads neither the service nor a reader', () => {
    const loaded = [...closure(join(SRC, 'cli', 'commands', 'keys.ts'))].map(rel);
    expect(loaded).toContain('http/keys.ts');
    expect(
      loaded.filter((m) => m.startsWith('app/serve') || m === 'io/source.ts' || m.startsWith('pkg:hyparquet') || m === 'pkg:fastify'),
    ).toEqual([]);
  });

  it('xrate --help loads no reader', () => {
    const loaded = [...closure(join(SRC, 'cli', 'help.ts'))].map(rel);
    expect(loaded.filter((m) => m === 'replay/replay.ts' || m === 'io/source.ts' || m.startsWith('pkg:hyparquet'))).toEqual([]);
  });

  it('xrate replay loads them (the closure is read as Node reads it)', () => {
    const loaded = [...closure(join(SRC, 'cli', 'commands', 'replay.ts'))].map(rel);
    expect(loaded).toEqual(expect.arrayContaining(['replay/replay.ts', 'io/source.ts', 'pkg:hyparquet', 'pkg:hyparquet-writer']));
  });
});
