/**
 * Errors of the rate service. Every non-200 answer is JSON `{"message": "..."}` (the interface's
 * error shape) with one of these status codes:
 *
 * | status | when |
 * |---|---|
 * | 400 | a bad parameter (the message names it) |
 * | 401 | no API key, an unknown or revoked key, a bad or missing JWT |
 * | 403 | the key has no right to the resource (e.g. history not granted) |
 * | 404 | unknown route |
 * | 429 | past the 24 h request limit (without overage) or the concurrency limit |
 * | 550 | no data: unknown asset, no rate at that time, no stored history |
 *
 * @module
 */
import { isXrateError } from '../core/errors.js';

/** The interface's "no data" status. */
export const NO_DATA = 550;

/** The interface's wording for status 550, used as the start of every 550 message. */
export const NO_DATA_TEXT = "You requested specific single item that we don't have at this moment";

/** An error answered as `{"message": ...}` with `status` (and optional extra headers). */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** 400 naming the parameter. */
export function badParam(name: string, detail: string): ServiceError {
  return new ServiceError(400, `Invalid value of parameter '${name}': ${detail}`);
}

/** 400 for a missing required parameter. */
export function missingParam(name: string, detail = ''): ServiceError {
  return new ServiceError(400, `Missing required parameter '${name}'${detail ? `: ${detail}` : ''}`);
}

/** 400 for a request that gives none of the parameters of which one is required (each named). */
export function missingOneOf(names: readonly string[]): ServiceError {
  const quoted = names.map((n) => `'${n}'`);
  const list = quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
  return new ServiceError(400, `Missing required parameter: one of ${list} must be given`);
}

/** 401. */
export function unauthorized(message: string): ServiceError {
  return new ServiceError(401, message);
}

/** 403. */
export function forbidden(message: string): ServiceError {
  return new ServiceError(403, message);
}

/** 429 with a Retry-After header (whole seconds, at least 1). */
export function tooManyRequests(message: string, retryAfterSeconds: number): ServiceError {
  return new ServiceError(429, message, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
}

/** 550: the requested item has no data. */
export function noData(detail: string): ServiceError {
  return new ServiceError(NO_DATA, `${NO_DATA_TEXT}: ${detail}`);
}

/** 404. */
export function notFound(method: string, url: string): ServiceError {
  const path = url
    .split('?')[0]
    .split('/')
    .map((seg) => (/^apikey-/i.test(decodeSegment(seg)) ? 'APIKEY-***' : seg))
    .join('/');
  return new ServiceError(404, `Unknown route ${method} ${path} (see /v1/exchangerate/... in docs/service.md)`);
}

/** A path segment percent-decoded, or as it is when it is not valid percent-encoding. */
function decodeSegment(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/** The JSON body of an error. */
export function errorBody(message: string): string {
  return JSON.stringify({ message });
}

/**
 * The service's error for a thrown value: a {@link ServiceError} as it is; an `XrateError` (src/core/errors.ts)
 * by its code (`no_data`, the answers' no-data error: the 550 of {@link noData}, the interface's
 * wording before its message); anything else undefined.
 */
export function serviceErrorOf(e: unknown): ServiceError | undefined {
  if (e instanceof ServiceError) return e;
  if (isXrateError(e, 'no_data')) return noData(e.message);
  if (isXrateError(e)) return new ServiceError(e.status, e.message, e.headers);
  return undefined;
}
