/**
 * The names of the live feed that the command line checks before it loads the NATS client (every
 * command would start later with it loaded): the default stream, stream names, NATS URLs.
 *
 * @module
 */

/** Default stream name of `xrate publish` and `xrate serve --nats`. */
export const DEFAULT_STREAM = 'XRATE';

/**
 * Whether `name` can name a JetStream stream (and prefix its subjects): letters, digits, `_` and
 * `-`, at most 64 characters.
 */
export function isStreamName(name: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(name);
}

/** Whether `url` is a NATS server URL: `nats://HOST[:PORT]` (or `tls://`, several comma-separated). */
export function isNatsUrl(url: string): boolean {
  return url.split(',').every((u) => /^(nats|tls):\/\/[^/\s]+\/?$/.test(u.trim()));
}
