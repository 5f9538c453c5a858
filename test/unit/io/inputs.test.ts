import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { comparePaths, expandInputs } from '../../../src/io/inputs.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function touch(rel: string): string {
  const p = join(dir, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, '');
  return p;
}

describe('expandInputs', () => {
  it('a directory stands for its event logs, recursively, in byte order of the full path; files stand for themselves', () => {
    const t = 'tree';
    const files = [
      touch(`${t}/b/2.csv.gz`),
      touch(`${t}/B/1.ndjson`),
      touch(`${t}/a/Z.csv`),
      touch(`${t}/a/z/x.jsonl`),
      touch(`${t}/a-b.db`),
      touch(`${t}/é.json`),
    ];
    touch(`${t}/a/readme.txt`);
    touch(`${t}/.hidden/x.csv`);
    touch(`${t}/a/.x.csv`);
    symlinkSync(join(dir, t, 'a'), join(dir, t, 'a', 'loop')); // a cycle: read once
    const single = touch('single.txt');
    const got = expandInputs([single, join(dir, t), 'missing.ndjson']);
    const want = [
      join(dir, t, 'B/1.ndjson'),
      join(dir, t, 'a-b.db'),
      join(dir, t, 'a/Z.csv'),
      join(dir, t, 'a/z/x.jsonl'),
      join(dir, t, 'b/2.csv.gz'),
      join(dir, t, 'é.json'),
    ];
    expect(got).toEqual([single, ...want, 'missing.ndjson']);
    expect([...files].sort(comparePaths)).toEqual(want);
  });

  it('a directory with no event log is an error naming it', () => {
    touch('none/notes.txt');
    expect(() => expandInputs([join(dir, 'none')])).toThrow(/directory ".*none" holds no event log/);
  });
});
