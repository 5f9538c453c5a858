/**
 * A real NATS server with JetStream for the tests: `nats-server -js` (the Debian package
 * nats-server; .ci/run installs it) on a free loopback port with its store in a temporary
 * directory, stopped by `stop()` (or killed by `crash()`) and started again on the same port and
 * store by `restart()`; optionally with a configuration file's text (authorization, TLS).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis.js';

/** A running server. */
export interface NatsServer {
  url: string;
  port: number;
  /** Stops the server (its store stays). */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL, as a crash (its store stays, as the crash left it). */
  crash(): Promise<void>;
  /** Starts it again on the same port and store. */
  restart(): Promise<void>;
  /** Stops it and removes its store. */
  dispose(): Promise<void>;
}

function launch(port: number, dir: string, config?: string): Promise<ChildProcess> {
  const proc = spawn('nats-server', [...(config ? ['-c', config] : []), '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  return new Promise<ChildProcess>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nats-server did not start in 10 s:\n${log}`)), 10_000);
    proc.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start nats-server (install the Debian package nats-server; .ci/run does): ${e.message}`));
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited with code ${code}:\n${log}`));
    });
    // nats-server logs to stderr; the output is read to its end, and looked at until ready.
    let ready = false;
    const onData = (d: Buffer): void => {
      if (ready) return;
      log += d.toString();
      if (log.includes('Server is ready')) {
        ready = true;
        clearTimeout(timer);
        proc.removeAllListeners('exit');
        resolve(proc);
      }
    };
    proc.stderr?.on('data', onData);
    proc.stdout?.on('data', onData);
  });
}

function kill(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill(signal);
  });
}

/**
 * Starts `nats-server -js -p P -sd DIR` and waits until it is ready; `config`: the text of a
 * configuration file (e.g. `authorization { token: "..." }`), written beside the store.
 */
export async function startNats(config?: string): Promise<NatsServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'xrate-nats-'));
  const file = config === undefined ? undefined : join(dir, 'nats.conf');
  if (file !== undefined && config !== undefined) writeFileSync(file, config);
  let proc = await launch(port, join(dir, 'store'), file);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop: () => kill(proc),
    crash: () => kill(proc, 'SIGKILL'),
    restart: async () => {
      proc = await launch(port, join(dir, 'store'), file);
    },
    dispose: async () => {
      await kill(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
