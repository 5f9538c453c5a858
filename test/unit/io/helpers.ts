/** Helpers of the reader tests: files in a temporary directory removed after the file's tests, and a whole source read. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openSource, type OpenSourceOptions, type SourceRecord } from '../../../src/io/source.js';

/**
 * A temporary directory removed after the calling test file (`prefix` names it); `path` gives a
 * new path in it ending in `name`, and `file` writes `content` to a new file there and returns its
 * path.
 */
export function tempFiles(prefix: string): {
  path: (name: string) => string;
  file: (name: string, content: string | Buffer) => string;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let seq = 0;
  const path = (name: string): string => join(dir, `${seq++}-${name}`);
  return {
    path,
    file: (name, content) => {
      const p = path(name);
      writeFileSync(p, content);
      return p;
    },
  };
}

/** Every record of the source at `path`, in order. */
export async function readAll(path: string, opts?: OpenSourceOptions): Promise<SourceRecord[]> {
  const src = openSource(path, opts);
  const out: SourceRecord[] = [];
  for await (const b of src.batches()) out.push(...b);
  src.close();
  return out;
}
