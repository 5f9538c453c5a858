/**
 * The one table of xrate's error codes. Every error xrate throws on purpose is an
 * {@link XrateError} with one of these codes; the command line's exit code and the HTTP status
 * of the services derive from the code, never from the message's text.
 *
 * | code | exit | HTTP | when |
 * |---|---|---|---|
 * | `usage` | 2 | 400 | a bad or missing flag, option or parameter (the message names it) |
 * | `config` | 2 | 400 | a bad engine configuration |
 * | `input` | 1 | 400 | an input that cannot be read: a missing file, a database not written by xrate, a CSV without a header |
 * | `input_changed` | 1 | 500 | an input changed while a run read it: the run is not complete |
 * | `no_data` | 1 | 550 | the asked item has no data (an unknown asset, no rate at that time, no stored history) |
 * | `unauthorized` | 1 | 401 | no key, or a key or token that is not valid |
 * | `forbidden` | 1 | 403 | a valid key without the right to the resource |
 * | `not_found` | 1 | 404 | an unknown route or object |
 * | `conflict` | 1 | 409 | the state at hand forbids it (a database that replicates another stream) |
 * | `too_many_requests` | 1 | 429 | past a request or concurrency limit |
 * | `unavailable` | 1 | 503 | a server or resource that cannot be reached or used now (Redis, NATS, a port in use) |
 * | `failed` | 1 | 500 | a run that failed part of the way (a partition, a queue job) |
 * | `internal` | 1 | 500 | a broken invariant of xrate itself |
 * | `exchange_unreachable` | 1 | 490 | an exchange whose positions cannot be known now (the EMS gateway's MESSAGE_REJECT) |
 * | `client_closed` | 1 | 499 | the client closed the request before its answer was ready (nobody sees the status) |
 *
 * @module
 */

/** Each code's exit code (command line) and HTTP status (services). */
export const ERROR_CODES = Object.freeze({
  usage: { exit: 2, status: 400 },
  config: { exit: 2, status: 400 },
  input: { exit: 1, status: 400 },
  input_changed: { exit: 1, status: 500 },
  no_data: { exit: 1, status: 550 },
  unauthorized: { exit: 1, status: 401 },
  forbidden: { exit: 1, status: 403 },
  not_found: { exit: 1, status: 404 },
  conflict: { exit: 1, status: 409 },
  too_many_requests: { exit: 1, status: 429 },
  unavailable: { exit: 1, status: 503 },
  failed: { exit: 1, status: 500 },
  internal: { exit: 1, status: 500 },
  exchange_unreachable: { exit: 1, status: 490 },
  client_closed: { exit: 1, status: 499 },
} as const);

/** One of the codes of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** What else an error may carry. */
export interface XrateErrorDetails {
  /** The flag, option, parameter or field at fault (`--db`, `time_end`, `config.outlierSigmas`). */
  field?: string;
  /** Extra HTTP headers of the answer (a 429's `retry-after`). */
  headers?: Record<string, string>;
  /** The error this one reports. */
  cause?: unknown;
}

/**
 * An error of xrate: a code of {@link ERROR_CODES} and a message for people, without any prefix
 * (the command line writes `xrate: ` before it; a service answers `{"message": ...}`).
 *
 * @example
 * ```ts
 * throw new XrateError('usage', '--workers must be a whole number from 1 to 256', { field: '--workers' });
 * ```
 */
export class XrateError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: XrateErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'XrateError';
    this.code = code;
    this.field = details.field;
    this.headers = details.headers ?? {};
  }

  /** The command line's exit code for this error. */
  get exitCode(): number {
    return ERROR_CODES[this.code].exit;
  }

  /** The HTTP status a service answers for this error. */
  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

/** Whether `e` is an {@link XrateError} (of `code`, when given). */
export function isXrateError(e: unknown, code?: ErrorCode): e is XrateError {
  return e instanceof XrateError && (code === undefined || e.code === code);
}

/** The message of any thrown value. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The code of an error that reports `cause` (a partition, a queue job, a scan that failed on it):
 * the cause's own code when it is an {@link XrateError} that stops a command with exit code 1 (a
 * partition failing on an unreadable input is `input`), else `fallback`.
 *
 * @example
 * ```ts
 * reportedCode(new XrateError('input', 'cannot read "a.ndjson"'), 'failed'); // 'input'
 * reportedCode(new TypeError('x is undefined'), 'failed'); // 'failed'
 * ```
 */
export function reportedCode(cause: unknown, fallback: ErrorCode): ErrorCode {
  return isXrateError(cause) && cause.exitCode === 1 ? cause.code : fallback;
}
