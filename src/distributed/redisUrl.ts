/**
 * The one check of a queue's address, kept apart from src/distributed/queue.ts so that the command line
 * can check its flags without loading the queue's client libraries.
 *
 * @module
 */

/** Whether `url` is a Redis URL the queue can use: `redis://HOST[:PORT][/DB]` or `rediss://` (TLS). */
export function isRedisUrl(url: string): boolean {
  return /^rediss?:\/\/[^/\s]+/.test(url);
}
