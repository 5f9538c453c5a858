import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  comparePaths,
  duplicateMessage,
  expandEach,
  expandInputs,
  findDuplicateInput,
  flatList,
  listedInputs,
  listInputs,
} from '../../../src/io/inputs.js';

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

describe('findDuplicateInput', () => {
  const a = touch('dup/a.ndjson');
  const b = touch('dup/sub/b.csv');
  symlinkSync(a, join(dir, 'dup-link.ndjson'));
  symlinkSync(join(dir, 'dup/sub'), join(dir, 'dup-sublink'));
  const real = (p: string) => realpathSync(p);

  it('is undefined when every file is reached once, directly or through directories', () => {
    expect(findDuplicateInput([a, join(dir, 'dup/sub')])).toBeUndefined();
    expect(findDuplicateInput([join(dir, 'dup')])).toBeUndefined();
    expect(findDuplicateInput([])).toBeUndefined();
  });

  it('finds a file given twice by the same path, or by two paths to it (./a and a, a symbolic link)', () => {
    expect(findDuplicateInput([a, b, a])).toEqual({ real: real(a), first: { path: a, arg: a }, second: { path: a, arg: a } });
    const rel = relative(process.cwd(), a);
    const dotted = `./${rel}`;
    expect(findDuplicateInput([rel, dotted])).toEqual({
      real: real(a),
      first: { path: rel, arg: rel },
      second: { path: dotted, arg: dotted },
    });
    const link = join(dir, 'dup-link.ndjson');
    expect(findDuplicateInput([link, a])?.second).toEqual({ path: a, arg: a });
  });

  it('finds a file given alone and in a directory, or a directory given twice or through a link to it', () => {
    const d = join(dir, 'dup');
    expect(findDuplicateInput([b, d])).toEqual({
      real: real(b),
      first: { path: b, arg: b },
      second: { path: join(d, 'sub/b.csv'), arg: d },
    });
    expect(findDuplicateInput([d, d])?.second).toEqual({ path: a, arg: d });
    const link = join(dir, 'dup-sublink');
    expect(findDuplicateInput([link, d])).toMatchObject({ real: real(b), first: { arg: link }, second: { arg: d } });
  });

  it('resolves a symbolic link inside a directory to the file it leads to', () => {
    const c = touch('elsewhere/c.ndjson');
    const held = join(dir, 'holds-link');
    mkdirSync(held, { recursive: true });
    symlinkSync(c, join(held, 'c-link.ndjson'));
    expect(findDuplicateInput([held])).toBeUndefined();
    expect(findDuplicateInput([c, held])).toEqual({
      real: real(c),
      first: { path: c, arg: c },
      second: { path: join(held, 'c-link.ndjson'), arg: held },
    });
  });

  it('words the refusal with the file, the ways it came and the flag', () => {
    const d = join(dir, 'dup');
    expect(duplicateMessage(findDuplicateInput([a, a])!, '--allow-duplicates')).toBe(
      `"${a}" is given twice (${real(a)}): its records would be applied twice; give it once, or add --allow-duplicates if that is meant`,
    );
    expect(duplicateMessage(findDuplicateInput([b, d])!, '--allow-duplicates')).toBe(
      `the same file is given twice, as "${b}" and as "${join(d, 'sub/b.csv')}" (in the directory "${d}") (${real(b)}): its records would be applied twice; give it once, or add --allow-duplicates if that is meant`,
    );
  });
});

describe('listInputs and listedInputs', () => {
  it("lists each input's files once with the first duplicate; a replay takes a listing given for its inputs", () => {
    const a = touch('listed/a.ndjson');
    const b = touch('listed/sub/b.csv');
    const d = join(dir, 'listed');
    const got = listInputs([a, d]);
    expect(got.each.map((l) => [...l])).toEqual([[a], [a, b]]);
    expect(got.duplicate).toEqual({ real: realpathSync(a), first: { path: a, arg: a }, second: { path: a, arg: d } });
    expect(listInputs([d]).each.map((l) => [...l])).toEqual(expandEach([d]).map((l) => [...l]));
    const listed = [[b], [a]];
    expect(listedInputs({ inputs: [b, a], listed })).toBe(listed);
    expect(listedInputs({ inputs: [d] }).map((l) => flatList([l]))).toEqual([[a, b]]);
    expect(() => listedInputs({ inputs: [d], listed })).toThrow(
      expect.objectContaining({ code: 'usage', message: 'listed gives the files of 2 inputs, for 1 inputs' }),
    );
  });
});
