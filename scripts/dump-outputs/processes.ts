/**
 * The output dump's processes: the built command run to its end or kept running (a server), and
 * plain HTTP requests to a server, each written as text (status, the headers that matter, body).
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';

/** What a command run to its end gave. */
export interface RunResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs `node BIN ...argv` in `cwd` to its end (stdin closed, not a terminal). */
export function runBin(bin: string, cwd: string, argv: string[], env: Record<string, string>): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [bin, ...argv], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    proc.stdout.on('data', (d: Buffer) => out.push(d));
    proc.stderr.on('data', (d: Buffer) => err.push(d));
    proc.once('error', reject);
    proc.once('close', (code, signal) =>
      resolve({ code: code ?? signal ?? -1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    );
  });
}

/** A server started with `--port 0`: its address, the key it printed, and how to stop it. */
export interface Server {
  url: string;
  stdout: () => string;
  stderr: () => string;
  stop: () => Promise<number | string>;
}

/** Starts `node BIN ...argv` and waits until its stdout matches `ready`, whose first group is the URL. */
export async function startServer(bin: string, cwd: string, argv: string[], env: Record<string, string>, ready: RegExp): Promise<Server> {
  const proc: ChildProcess = spawn(process.execPath, [bin, ...argv], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | string>((res) => proc.once('exit', (code, signal) => res(code ?? signal ?? -1)));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const started = Date.now();
  let url: string | undefined;
  while (url === undefined) {
    const m = ready.exec(out);
    if (m) url = m[1];
    else if (done || Date.now() - started > 60_000) throw new Error(`server did not start: ${argv.join(' ')}\n${out}${err}`);
    else await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    stdout: () => out,
    stderr: () => err,
    stop: async () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** The response headers written into the dump (no date, no reset time, no connection details). */
const KEPT_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'cache-control',
  'content-security-policy',
  'retry-after',
  'x-ratelimit-used',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-request-cost',
  'x-ratelimit-overage',
  'x-concurrencylimit-limit',
  'x-concurrencylimit-remaining',
];

/** A response as the dump shows it: the raw body bytes, status and kept headers. */
export interface Answer {
  status: number;
  headers: string[];
  body: Buffer;
}

/** GETs `url` with exactly `headers` (no implicit Accept-Encoding). */
export function get(url: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const kept: string[] = [];
        for (const h of KEPT_HEADERS) {
          const v = res.headers[h];
          if (v !== undefined) kept.push(`${h}: ${Array.isArray(v) ? v.join(', ') : v}`);
        }
        resolve({ status: res.statusCode ?? 0, headers: kept, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
