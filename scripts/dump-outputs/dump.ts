/**
 * The output dump's recorder: runs commands, dumps databases and sends requests, and writes what
 * each gave into the dump directory with a numbered label (scripts/dump-outputs.ts).
 *
 * @module
 */

import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { normaliser } from './normalise.js';
import { type Answer, get, runBin, type Server, startServer } from './processes.js';
import { dumpTables } from './tables.js';

export const DEMO = 'fixtures/demo/demo.ndjson.gz';
export const BINANCE = 'fixtures/binance-btcusdt-2021-01-08.ndjson';
export const EMS_LOG = 'fixtures/ems/positions.ndjson';
export const ENV = { TZ: 'UTC', NO_COLOR: '1', FORCE_COLOR: '0', LANG: 'C' };

/** Single-quotes an argument for the shell when it needs it (the commands are shown, not run, by a shell). */
function shellWord(a: string): string {
  return /^[\w./:=,@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export class Dump {
  private seq = 0;
  private readonly commands: string[] = [];
  readonly counts = { commands: 0, databases: 0, tables: 0, requests: 0 };
  readonly norm: (s: string) => string;

  constructor(
    readonly out: string,
    readonly work: string,
    readonly bin: string,
  ) {
    const checkout = resolve(dirname(bin), '..');
    this.norm = normaliser([
      [work, '<TMP>'],
      [realpathSync(work), '<TMP>'],
      [checkout, '<CHECKOUT>'],
      [realpathSync(checkout), '<CHECKOUT>'],
    ]);
  }

  private next(): string {
    return String(++this.seq).padStart(3, '0');
  }

  private write(rel: string, text: string): void {
    const path = join(this.out, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }

  /** Runs `xrate ...argv` to its end and writes what it gave, with the files it wrote. */
  async cli(label: string, argv: string[], files: string[] = []): Promise<void> {
    const n = this.next();
    const cmd = `xrate ${argv.map(shellWord).join(' ')}`;
    this.commands.push(`${n} ${label}: ${cmd}`);
    this.counts.commands++;
    const r = await runBin(this.bin, this.work, argv, ENV);
    let text = `$ ${cmd}\n# exit ${r.code}\n# stdout\n${r.stdout}\n# stderr\n${r.stderr}\n`;
    for (const f of files) {
      const p = join(this.work, f);
      text += existsSync(p) ? `# file ${f}\n${readFileSync(p, 'utf8')}\n` : `# file ${f}: not written\n`;
    }
    this.write(join('cli', `${n}-${label}.txt`), this.norm(text));
  }

  /** Writes every table of the database `rel` (relative to the working directory). */
  db(name: string, rel: string): void {
    this.commands.push(`    tables of ${rel} -> db/${name}/`);
    this.counts.databases++;
    this.counts.tables += dumpTables(join(this.work, rel), join(this.out, 'db', name), this.norm).length;
  }

  /** Starts a server (`--port 0` is added) and waits for `ready` on its stdout (group 1: its URL). */
  async start(argv: string[], ready: RegExp): Promise<Server> {
    const full = [...argv, '--port', '0'];
    this.commands.push(`${this.next()} server: xrate ${full.map(shellWord).join(' ')}`);
    return startServer(this.bin, this.work, full, ENV, ready);
  }

  /** Writes a stopped server's exit code and what it printed. */
  async stopped(name: string, s: Server): Promise<void> {
    const code = await s.stop();
    this.write(join('http', name, '000-server.txt'), this.norm(`# exit ${code}\n# stdout\n${s.stdout()}\n# stderr\n${s.stderr()}\n`));
  }

  /** GETs each request of `list` from `s` in order and writes what it answered. */
  async requests(name: string, s: Server, list: Req[]): Promise<void> {
    let i = 0;
    for (const [label, path, headers] of list) {
      const n = String(++i).padStart(3, '0');
      this.commands.push(`    GET ${path} ${JSON.stringify(headers)} -> http/${name}/${n}-${label}.txt`);
      this.counts.requests++;
      const a = await get(s.url + path, headers);
      this.write(join('http', name, `${n}-${label}.txt`), this.norm(`GET ${path}\n${showHeaders(headers)}${render(a, label)}`));
    }
  }

  finish(): void {
    this.write('commands.txt', `${this.norm(this.commands.join('\n'))}\n`);
  }
}

/** A request: label, path and query, request headers. */
export type Req = [string, string, Record<string, string>];

function showHeaders(h: Record<string, string>): string {
  return Object.entries(h)
    .map(([k, v]) => `> ${k}: ${v}\n`)
    .join('');
}

/** Prometheus samples that measure time or the process, left out of the dump. */
const TIMING_SAMPLE = /^(process_|nodejs_|\w*_seconds(_bucket|_sum|_count)?[{ ])/;

function render(a: Answer, label: string): string {
  const ct = a.headers.find((h) => h.startsWith('content-type:')) ?? '';
  const binary = /msgpack/.test(ct) || a.headers.some((h) => h.startsWith('content-encoding:'));
  let body = binary ? (a.body.toString('hex').match(/.{1,64}/g) ?? []).join('\n') : a.body.toString('utf8');
  let headers = a.headers;
  if (label === 'prometheus') {
    body = body
      .split('\n')
      .filter((l) => !TIMING_SAMPLE.test(l))
      .join('\n');
    headers = headers.filter((h) => !h.startsWith('content-length:'));
  }
  return `# status ${a.status}\n${headers.join('\n')}\n# body${binary ? ' (hex)' : ''}\n${body}\n`;
}
