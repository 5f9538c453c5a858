/**
 * One list of rights: `xrate keys --help`, the `--rights` error, `keys create`'s output and
 * docs/service.md (its "Rights:" sentence and the "key right" column of its route table) list
 * exactly the rights of the code (RIGHTS), in its order.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../e2e/helpers.js';
import { RIGHTS } from '../../src/http/keys.js';
import { ROOT, tempDir } from './helpers.js';

const tmp = tempDir('xrate-rights-list-');
afterAll(() => tmp.remove());

/** The CLI run in process, its output captured (test/e2e/helpers.ts). */
const xrate = cli;

/** The names of a comma list (`a, b`, `a,b`, or `` `a`, `b` ``). */
function names(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.replace(/`/g, '').trim())
    .filter(Boolean);
}

describe('the list of rights', () => {
  it('the code has seven rights, in the order of the route table', () => {
    expect(RIGHTS).toEqual(['rate', 'rates', 'periods', 'history', 'explain', 'metrics', 'symbols']);
  });

  it('xrate keys --help lists exactly the rights of the code', async () => {
    const r = await xrate('keys', '--help');
    expect(r.code).toBe(0);
    const m = /--rights: all \([^)]*\) or a comma list of\s+([a-z, ]+)\n/.exec(r.out);
    expect(m, r.out).not.toBeNull();
    expect(names(m![1])).toEqual([...RIGHTS]);
  });

  it('an unknown right is a usage error (exit 2) naming --rights and listing exactly the rights of the code', async () => {
    const r = await xrate('keys', 'create', '--keys', join(tmp.dir, 'k.sqlite'), '--rights', 'rate,charts');
    expect(r.code).toBe(2);
    const m = /^xrate: --rights: unknown right "charts" \(one of ([a-z, ]+), or all\)\n$/.exec(r.err);
    expect(m, r.err).not.toBeNull();
    expect(names(m![1])).toEqual([...RIGHTS]);
    const empty = await xrate('keys', 'create', '--keys', join(tmp.dir, 'k.sqlite'), '--rights', ' , ');
    expect(empty.code).toBe(2);
    const e = /^xrate: --rights: no right listed \(all, or a comma list of ([a-z, ]+)\)\n$/.exec(empty.err);
    expect(e, empty.err).not.toBeNull();
    expect(names(e![1])).toEqual([...RIGHTS]);
  });

  it('keys create prints the rights of the key in the order of the code', async () => {
    const every = await xrate('keys', 'create', '--keys', join(tmp.dir, 'k.sqlite'));
    expect(every.code).toBe(0);
    expect(names(/ rights ([a-z,]+), /.exec(every.out)![1])).toEqual([...RIGHTS]);
    const some = await xrate('keys', 'create', '--keys', join(tmp.dir, 'k.sqlite'), '--rights', 'symbols,rate');
    expect(/ rights ([a-z,]+), /.exec(some.out)![1]).toBe('rate,symbols');
  });

  it('docs/service.md lists exactly the rights of the code, in its Keys section and its route table', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'service.md'), 'utf8');
    const m = /^Rights: `all` \([^)]*\) or a comma\s+list of ((?:`[a-z]+`(?:, )?)+)/m.exec(doc);
    expect(m, 'the "Rights:" sentence of docs/service.md').not.toBeNull();
    expect(names(m![1])).toEqual([...RIGHTS]);
    // The route table: | path | key right | answer |, one right per route ("none" for the page).
    const table = doc.slice(doc.indexOf('| path | key right | answer |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const used = new Set(rows.map((row) => row.split('|')[2].replace(/`/g, '').trim()).filter((r) => r !== 'none'));
    expect([...used].sort()).toEqual([...RIGHTS].sort());
  });
});
