/**
 * The one table of error codes (src/core/errors.ts): every code has an exit code and an HTTP
 * status, and the command line's top-level handler exits with the code's exit code after
 * `xrate: <message>`, while any other error stays an unexpected one (exit 1, with its stack).
 */
import { describe, expect, it, vi } from 'vitest';
import { ERROR_CODES, type ErrorCode, isXrateError, messageOf, reportedCode, XrateError } from '../../../src/core/errors.js';
import type { Io } from '../../../src/cli/args.js';

/** What `xrate periods` throws in these tests (the command's module is replaced below). */
const thrown = vi.hoisted(() => ({ error: undefined as unknown }));
vi.mock('../../../src/cli/commands/periods.js', () => ({
  cmdPeriods: async () => {
    throw thrown.error;
  },
}));
const { run } = await import('../../../src/cli/main.js');

const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

/** Runs `xrate periods` throwing `e`: its exit code and stderr. */
async function runThrowing(e: unknown): Promise<{ code: number; err: string }> {
  thrown.error = e;
  const err: string[] = [];
  const io: Io = { out: () => undefined, err: (s) => void err.push(s), isTTY: false, columns: 80 };
  return { code: await run(['periods'], io), err: err.join('') };
}

describe('the table of error codes', () => {
  it('gives every code an exit code and an HTTP status', () => {
    expect(CODES.length).toBeGreaterThan(0);
    for (const code of CODES) {
      const { exit, status } = ERROR_CODES[code];
      expect([1, 2], code).toContain(exit);
      expect(status >= 400 && status < 600, code).toBe(true);
      const e = new XrateError(code, 'what went wrong');
      expect([e.exitCode, e.status]).toEqual([exit, status]);
    }
  });

  it('exit 2 is bad usage or configuration only; the statuses of the services are their codes', () => {
    expect(CODES.filter((c) => ERROR_CODES[c].exit === 2).sort()).toEqual(['config', 'usage']);
    expect(ERROR_CODES.usage.status).toBe(400);
    expect(ERROR_CODES.unauthorized.status).toBe(401);
    expect(ERROR_CODES.forbidden.status).toBe(403);
    expect(ERROR_CODES.not_found.status).toBe(404);
    expect(ERROR_CODES.too_many_requests.status).toBe(429);
    expect(ERROR_CODES.unavailable.status).toBe(503);
    expect(ERROR_CODES.no_data.status).toBe(550);
  });

  it('an XrateError carries its code, field, headers and cause, and no prefix', () => {
    const cause = new Error('EACCES');
    const e = new XrateError('usage', '--port must be a whole number', { field: '--port', headers: { 'retry-after': '1' }, cause });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: 'XrateError', code: 'usage', field: '--port', headers: { 'retry-after': '1' }, cause });
    expect(e.message).toBe('--port must be a whole number');
    expect(new XrateError('input', 'x').headers).toEqual({});
    expect([isXrateError(e), isXrateError(e, 'usage'), isXrateError(e, 'input'), isXrateError(cause)]).toEqual([true, true, false, false]);
    expect([messageOf(e), messageOf('text')]).toEqual(['--port must be a whole number', 'text']);
  });

  it("a report of a failure keeps its cause's code unless that would change the exit code", () => {
    expect(reportedCode(new XrateError('input', 'cannot read'), 'failed')).toBe('input');
    expect(reportedCode(new XrateError('unavailable', 'Redis'), 'failed')).toBe('unavailable');
    expect(reportedCode(new XrateError('usage', '--x'), 'failed')).toBe('failed');
    expect(reportedCode(new TypeError('x is undefined'), 'failed')).toBe('failed');
  });
});

describe("the command line's top-level handler", () => {
  it.each(CODES)('exits with the exit code of %s after "xrate: <message>"', async (code) => {
    const r = await runThrowing(new XrateError(code, `a ${code} error`));
    expect(r).toEqual({ code: ERROR_CODES[code].exit, err: `xrate: a ${code} error\n` });
  });

  it('reports any other error as unexpected, with its stack (exit 1)', async () => {
    const e = new TypeError('x is undefined');
    const r = await runThrowing(e);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`xrate: unexpected error: ${e.stack}\n`);
    // A message that merely starts like one of xrate's is no XrateError.
    const like = await runThrowing(new Error('xrate: not ours'));
    expect(like.code).toBe(1);
    expect(like.err).toMatch(/^xrate: unexpected error: Error: xrate: not ours\n/);
  });
});
