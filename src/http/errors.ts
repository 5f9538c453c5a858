/**
 * Errors of the HTTP services (the rate service and the EMS gateway): makers of the
 * {@link XrateError}s their routes throw, and {@link answerOf}, what they answer for one. Every
 * non-200 answer is JSON `{"message": "..."}` (the interface's error shape) with the HTTP status of
 * the error's code (the table of codes and statuses is in src/core/errors.ts): a bad or missing
 * parameter `usage` (400), `unauthorized` (401), `forbidden` (403), `not_found` (404),
 * `too_many_requests` (429, with Retry-After), `no_data` (550, the interface's wording before the
 * answers' message: src/answers/noData.ts makes the error).
 *
 * @module
 */
import { isXrateError, XrateError } from '../core/errors.js';

/** The interface's "no data" status. */
export const NO_DATA = 550;

/** The interface's wording for status 550, used as the start of every 550 message. */
export const NO_DATA_TEXT = "You requested specific single item that we don't have at this moment";

/** 400 naming the parameter. */
export function badParam(name: string, detail: string): XrateError {
  return new XrateError('usage', `Invalid value of parameter '${name}': ${detail}`, { field: name });
}

/** 400 for a missing required parameter. */
export function missingParam(name: string, detail = ''): XrateError {
  return new XrateError('usage', `Missing required parameter '${name}'${detail ? `: ${detail}` : ''}`, { field: name });
}

/** 400 for a request that gives none of the parameters of which one is required (each named). */
export function missingOneOf(names: readonly string[]): XrateError {
  const quoted = names.map((n) => `'${n}'`);
  const list = quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
  return new XrateError('usage', `Missing required parameter: one of ${list} must be given`);
}

/** 401. */
export function unauthorized(message: string): XrateError {
  return new XrateError('unauthorized', message);
}

/** 403. */
export function forbidden(message: string): XrateError {
  return new XrateError('forbidden', message);
}

/** 429 with a Retry-After header (whole seconds, at least 1). */
export function tooManyRequests(message: string, retryAfterSeconds: number): XrateError {
  return new XrateError('too_many_requests', message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
}

/** 404. */
export function notFound(method: string, url: string): XrateError {
  const path = url
    .split('?')[0]
    .split('/')
    .map((seg) => (/^apikey-/i.test(decodeSegment(seg)) ? 'APIKEY-***' : seg))
    .join('/');
  return new XrateError('not_found', `Unknown route ${method} ${path} (see /v1/exchangerate/... in docs/service.md)`);
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

/** What a service answers for an error: its status, the text of `{"message": ...}` and extra headers. */
export interface ErrorAnswer {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/**
 * The answer of a service for a thrown value: an {@link XrateError} by its code's status, with the
 * interface's wording ({@link NO_DATA_TEXT}) before the message of a `no_data` error; undefined for
 * any other value and for the codes of status 500 (a broken invariant, a failed run), which a
 * service answers as any unexpected error: "Internal error", the details in its log.
 */
export function answerOf(e: unknown): ErrorAnswer | undefined {
  if (!isXrateError(e) || e.status === 500) return undefined;
  return { status: e.status, message: e.code === 'no_data' ? `${NO_DATA_TEXT}: ${e.message}` : e.message, headers: e.headers };
}
