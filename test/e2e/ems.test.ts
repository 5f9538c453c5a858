/**
 * `xrate ems serve` as a user runs it (the built command in a child process): the worked example
 * of docs/ems.md gives the answers that page shows, over a database and over a live engine
 * (`--replay LOG`), SIGTERM stops it cleanly, and bad usage exits 2 (a bad file combination 1)
 * with a message.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from '../service/helpers.js';
import { bin, binStart, ROOT } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-ems-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const LOG = join(ROOT, 'fixtures', 'ems', 'positions.ndjson');

/** The queries of docs/ems.md's worked example and the answer shown under each (text and status). */
function documented(): { query: string; body: string; status: number }[] {
  const doc = readFileSync(join(ROOT, 'docs', 'ems.md'), 'utf8');
  const example = doc.slice(doc.indexOf('## Worked example'), doc.indexOf('## Running it'));
  const out: { query: string; body: string; status: number }[] = [];
  const re = /curl (?:-w ' %\{http_code\}\\n' )?'127\.0\.0\.1:3001(\/v1\/positions[^']*)'\n```\n```(?:json)?\n(.+)\n```/g;
  for (const m of example.matchAll(re)) {
    const status = / (\d{3})$/.exec(m[2]);
    out.push({ query: m[1], body: status ? m[2].slice(0, -4) : m[2], status: status ? Number(status[1]) : 200 });
  }
  return out;
}

async function serving(args: string[]): Promise<{ url: string; stop: () => Promise<number | NodeJS.Signals>; out: () => string }> {
  const p = binStart(['ems', 'serve', '--port', '0', ...args]);
  const started = Date.now();
  let url: string | undefined;
  while (url === undefined && Date.now() - started < 30_000) {
    url = /listening on (https?:\/\/\S+)/.exec(p.out())?.[1];
    if (url === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  if (url === undefined) throw new Error(`xrate ems serve did not start: ${p.out()} ${p.err()}`);
  return {
    url,
    out: () => p.out(),
    stop: async () => {
      p.proc.kill('SIGTERM');
      return p.exited;
    },
  };
}

describe('xrate ems serve', () => {
  it("answers docs/ems.md's worked example, from a database and from a live engine", async () => {
    const cases = documented();
    expect(cases.length).toBe(4);
    expect(cases.map((c) => c.status)).toEqual([200, 490, 200, 200]);
    const db = join(dir, 'ems.sqlite');
    const r = bin(['replay', LOG, '--db', db]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/events read\s+17\n.*accepted\s+15\n.*rejected\s+2/s);
    for (const args of [
      ['--db', db],
      ['--replay', LOG, '--db', join(dir, 'live.sqlite')],
    ]) {
      const s = await serving(args);
      try {
        expect(s.out()).toMatch(/last tick 2024-03-01T00:00:06\.0000000Z; self-hosted: no authentication\)/);
        for (const c of cases) {
          const res = await request(s.url + c.query);
          expect([res.status, res.text], `${args[0]} ${c.query}`).toEqual([c.status, c.body]);
        }
      } finally {
        expect(await s.stop()).toBe(0);
      }
    }
  }, 60_000);

  it('refuses bad usage with exit 2 and a bad file combination with exit 1, saying why', () => {
    const run = (...a: string[]) => bin(['ems', ...a]);
    expect(run().stdout).toMatch(/^Usage: xrate ems serve/);
    expect(run('serve', '--help').stdout).toMatch(/GET \/v1\/positions/);
    const unknown = run('start');
    expect([unknown.status, unknown.stderr]).toEqual([2, 'xrate: unknown ems subcommand "start" (expected serve)\n']);
    expect(run('serve', '--replay', LOG, '--follow', LOG).status).toBe(2);
    expect(run('serve', '--db', 'x.sqlite', '--format', 'csv').stderr).toMatch(/apply to --replay LOG or --follow LOG/);
    expect(run('serve', '--keys', 'k.sqlite').stderr).toMatch(/--keys applies to --managed/);
    const ca = run('serve', '--tls-client-ca', 'ca.pem', '--port', '0');
    expect([ca.status, ca.stderr]).toEqual([
      1,
      'xrate: --tls-client-ca needs --tls-cert and --tls-key (client certificates travel in a TLS handshake)\n',
    ]);
    const missing = run('serve', '--db', join(dir, 'none.sqlite'), '--port', '0');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/no database at/);
  });
});
