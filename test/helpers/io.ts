/**
 * The CLI's output streams for a test: what a command writes on stdout and stderr, kept.
 */
import type { Io } from '../../src/cli/args.js';

/** An {@link Io} that keeps stdout and stderr (no terminal, 80 columns), with `extra` fields (e.g. onRunning). */
export function capturedIo(extra: Partial<Io> = {}): Io & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
    isTTY: false,
    columns: 80,
    ...extra,
    stdout: () => out,
    stderr: () => err,
  };
}
