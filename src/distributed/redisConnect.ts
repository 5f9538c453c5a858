/**
 * The first connection of a Redis client, shared by the queue (queue.ts) and the service's keys
 * and limits (src/service/redisKeys.ts).
 *
 * @module
 */
import type { Redis } from 'ioredis';

/**
 * Connects `conn` (made with `lazyConnect: true`); once connected it reconnects by itself as its
 * options say. The first connection failing is an `xrate:` error saying why, and the client is
 * stopped.
 *
 * @param what - what is reached, for the message (e.g. "the queue at redis://10.0.0.5:6379")
 */
export async function connectRedis(conn: Redis, what: string): Promise<Redis> {
  let lastError: Error | undefined;
  conn.on('error', (e: Error) => {
    lastError = e;
  });
  try {
    await conn.connect();
  } catch (e) {
    conn.disconnect();
    throw new Error(`xrate: cannot reach ${what}: ${(lastError ?? (e as Error)).message}`);
  }
  return conn;
}
