/**
 * A real Redis server for the tests: `redis-server` (the Debian package; .ci/run installs it) on a
 * free loopback port (or a given one), without persistence unless given a folder, stopped by `stop()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** A running server. */
export interface RedisServer {
  url: string;
  port: number;
  /** Its process id. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server --port P --save ''` and waits until it accepts connections. With `dir`, the
 * data is kept in an append-only file there (written at every command), so a server started again
 * on the same port and folder has it all.
 */
export async function startRedis(opts: { port?: number; dir?: string } = {}): Promise<RedisServer> {
  const port = opts.port ?? (await freePort());
  const persistence = opts.dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', opts.dir] : ['--appendonly', 'no'];
  const proc: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s:\n${log}`)), 10_000);
    proc.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start redis-server (install the Debian package redis-server; .ci/run does): ${e.message}`));
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with code ${code}:\n${log}`));
    });
    proc.stdout?.on('data', (d: Buffer) => {
      log += d.toString();
      if (log.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  proc.removeAllListeners('exit');
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: proc.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
