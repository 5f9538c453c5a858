/**
 * The built `xrate` command refuses logs that reach the same file twice (its records would be
 * applied twice): the same path twice, `./a` and `a`, a symbolic link and its target, a file and a
 * directory holding it, a directory twice; for `replay` (in order, `--merge`, `--workers`,
 * `--queue`) and `publish`: exit 2, naming the file, before anything is read or connected.
 * `--allow-duplicates` says it is meant.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, smallNdjson } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-dup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `node bin/xrate.js ...argv` run in the temporary directory (relative paths are its). */
function xrate(...argv: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...argv], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

let real: string;
beforeAll(() => {
  mkdirSync(join(dir, 'logs'));
  writeFileSync(join(dir, 'logs', 'a.ndjson'), smallNdjson());
  writeFileSync(join(dir, 'b.ndjson'), smallNdjson().replace(/BTC/g, 'ETH'));
  symlinkSync(join(dir, 'logs', 'a.ndjson'), join(dir, 'link.ndjson'));
  real = realpathSync(join(dir, 'logs', 'a.ndjson'));
});

const A = 'logs/a.ndjson';
const FLAG = /its records would be applied twice; give it once, or add --allow-duplicates if that is meant/;

describe('a file given twice', () => {
  const cases: [string, string[], RegExp][] = [
    ['the same path twice', [A, A], /^xrate: "logs\/a\.ndjson" is given twice \(/],
    [
      './a and a, with --merge',
      [A, `./${A}`, '--merge'],
      /the same file is given twice, as "logs\/a\.ndjson" and as "\.\/logs\/a\.ndjson"/,
    ],
    ['a symbolic link and its target', ['link.ndjson', 'b.ndjson', A], /as "link\.ndjson" and as "logs\/a\.ndjson"/],
    [
      'a file and the directory holding it',
      [A, 'logs', '--merge'],
      /as "logs\/a\.ndjson" and as "logs\/a\.ndjson" \(in the directory "logs"\)/,
    ],
    [
      'a directory twice',
      ['logs', 'b.ndjson', 'logs/'],
      /as "logs\/a\.ndjson" \(in the directory "logs"\) and as "logs\/a\.ndjson" \(in the directory "logs\/"\)/,
    ],
    ['with --workers', [A, A, '--workers', '2'], /"logs\/a\.ndjson" is given twice/],
    [
      'with --queue (before connecting to Redis)',
      [A, 'link.ndjson', '--queue', 'redis://127.0.0.1:1'],
      /as "logs\/a\.ndjson" and as "link\.ndjson"/,
    ],
  ];
  for (const [what, args, message] of cases) {
    it(`replay refuses ${what}: exit 2 naming the file, nothing written`, () => {
      const db = `out-${cases.findIndex((c) => c[0] === what)}.sqlite`;
      const r = xrate('replay', ...args, '--db', db, '--quiet');
      expect(r.code, r.err).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(message);
      expect(r.err).toMatch(FLAG);
      expect(r.err).toContain(real);
      expect(existsSync(join(dir, db))).toBe(false);
    });
  }

  it('publish refuses it before connecting to NATS', () => {
    const r = xrate('publish', A, 'link.ndjson', '--nats', 'nats://127.0.0.1:1');
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/as "logs\/a\.ndjson" and as "link\.ndjson"/);
    expect(r.err).toMatch(FLAG);
    // Allowed, it goes on to connect.
    const allowed = xrate('publish', A, 'link.ndjson', '--nats', 'nats://127.0.0.1:1', '--allow-duplicates');
    expect(allowed.code, allowed.err).toBe(1);
    expect(allowed.err).toMatch(/cannot reach NATS at nats:\/\/127\.0\.0\.1:1/);
  });

  it('distinct files are read as before; --allow-duplicates reads a file given twice twice', () => {
    const events = (r: { code: number | null; out: string; err: string }) => {
      expect(r.code, r.err).toBe(0);
      return (JSON.parse(r.out) as { eventsRead: number }).eventsRead;
    };
    const one = events(xrate('replay', A, '--db', 'one.sqlite', '--json'));
    expect(events(xrate('replay', 'logs', 'b.ndjson', '--merge', '--db', 'two.sqlite', '--json'))).toBe(2 * one);
    expect(events(xrate('replay', A, `./${A}`, '--merge', '--allow-duplicates', '--db', 'dup.sqlite', '--json'))).toBe(2 * one);
  });
});
