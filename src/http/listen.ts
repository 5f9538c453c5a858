/**
 * Listening: an app of either service bound to a host and port, with the messages of a port that
 * cannot be had.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { XrateError } from '../core/errors.js';

/**
 * Makes `app` listen on host:port (port 0: any free port) and returns its URL; a failure is an
 * XrateError (`unavailable`) saying why (port in use, no privilege, no such address).
 */
export async function listenOn(app: FastifyInstance, host: string, port: number, scheme: 'http' | 'https'): Promise<string> {
  try {
    await app.listen({ host, port });
  } catch (e) {
    const err = e as Error & { code?: string };
    const where = `${host}:${port}`;
    if (err.code === 'EADDRINUSE')
      throw new XrateError(
        'unavailable',
        `cannot listen on ${where}: the port is in use (choose another with --port, or --port 0 for any free port)`,
        { field: '--port' },
      );
    if (err.code === 'EACCES')
      throw new XrateError('unavailable', `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`, {
        field: '--port',
      });
    if (err.code === 'EADDRNOTAVAIL')
      throw new XrateError('unavailable', `cannot listen on ${where}: no such local address (--host)`, { field: '--host' });
    throw new XrateError('unavailable', `cannot listen on ${where}: ${err.message}`);
  }
  const addr = app.server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}
