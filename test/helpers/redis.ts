/**
 * A real Redis server for the tests: `redis-server` (the Debian package; .ci/run installs it) on a
 * free loopback port (or a given one), without persistence unless given a folder, stopped by `stop()`;
 * with `tls`, it speaks TLS only (on that port), and `args` adds configuration (ACL users...).
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

/** TLS of a test server: its certificate and key, and the CA that client certificates must chain to (mutual TLS). */
export interface RedisTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * Starts `redis-server --port P --save ''` and waits until it accepts connections. With `dir`, the
 * data is kept in an append-only file there (written at every command), so a server started again
 * on the same port and folder has it all. With `tls`, the port speaks TLS only and clients must
 * show a certificate of the CA (the URL is then `rediss://`); `args` are more configuration
 * arguments (e.g. `--user NAME on >PASSWORD ~* &* +@all`).
 */
export async function startRedis(opts: { port?: number; dir?: string; tls?: RedisTls; args?: string[] } = {}): Promise<RedisServer> {
  const port = opts.port ?? (await freePort());
  const persistence = opts.dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', opts.dir] : ['--appendonly', 'no'];
  const listen = opts.tls
    ? [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--tls-cert-file',
        opts.tls.cert,
        '--tls-key-file',
        opts.tls.key,
        '--tls-ca-cert-file',
        opts.tls.ca,
      ]
    : ['--port', String(port)];
  const proc: ChildProcess = spawn('redis-server', [...listen, '--bind', '127.0.0.1', '--save', '', ...persistence, ...(opts.args ?? [])], {
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
    url: `${opts.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    port,
    pid: proc.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
