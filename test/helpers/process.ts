/** A child process of the CLI that runs on while a test (or a benchmark) goes on. */
import { type ChildProcess, spawn } from 'node:child_process';

/** A `node bin/xrate.js ...argv` subprocess that runs on while the test goes on. */
export interface BinProcess {
  proc: ChildProcess;
  /** What it printed so far. */
  out(): string;
  err(): string;
  /** Resolves with its exit code (or the signal that ended it). */
  exited: Promise<number | NodeJS.Signals>;
  /** Resolves once stderr matches `re`. */
  waitErr(re: RegExp, timeoutMs?: number): Promise<void>;
}

/** Starts `node BIN ...argv` in `cwd` without waiting for it (`env`: added to this process's environment). */
export function binStartAt(bin: string, cwd: string, argv: string[], env?: Record<string, string>): BinProcess {
  const proc = spawn(process.execPath, [bin, ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: env && { ...process.env, ...env } });
  let out = '';
  let err = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].re.test(err)) {
        waiters[i].resolve();
        waiters.splice(i, 1);
      }
    }
  });
  const exited = new Promise<number | NodeJS.Signals>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    proc,
    out: () => out,
    err: () => err,
    exited,
    waitErr: (re, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        if (re.test(err)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no ${re} on stderr in ${timeoutMs} ms:\n${err}`)), timeoutMs);
        waiters.push({
          re,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
  };
}
