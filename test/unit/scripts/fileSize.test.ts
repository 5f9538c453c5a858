/**
 * No source file of the repository is over 600 lines (src, test, bench, scripts, ui): a longer one
 * is split along a seam of its own before it lands.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAX_LINES = 600;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' || name === 'vendor' ? [] : sources(p);
    return /\.(ts|mts|mjs|js)$/.test(name) ? [p] : [];
  });
}

describe('file sizes', () => {
  it(`holds every source file to ${MAX_LINES} lines`, () => {
    const files = ['src', 'test', 'bench', 'scripts', 'ui'].flatMap((d) => sources(join(ROOT, d)));
    expect(files.length).toBeGreaterThan(300);
    const long = files
      .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
