/**
 * `xrate serve`: reads the flags and hands them to {@link serveCommand}.
 *
 * @module
 */
import { XrateError } from '../../core/errors.js';
import { format, loadConfig, maxLineBytes, parseFlags, seconds, type Io } from '../args.js';
import { SERVE_OPTIONS } from '../flags.js';
import { help } from '../help.js';
import { serveCommand } from '../serve.js';

/** Runs `xrate serve` with `args` (after the command name); returns the exit code. */
export async function cmdServe(args: string[], io: Io): Promise<number> {
  refuseOldFollow(args);
  const { values } = parseFlags(args, SERVE_OPTIONS);
  if (values.help) return help('serve', io);
  const extra = {
    format: format(values.format),
    config: loadConfig(values.config),
    reorderWindowUs: seconds('reorder-window', values['reorder-window']),
    maxLineBytes: maxLineBytes(values['max-line-bytes']),
  };
  return serveCommand(values, extra, io, (m) => new XrateError('usage', m));
}

/**
 * `--follow` names the log it follows (`--follow LOG`, as in `xrate ems serve`): the spelling
 * `--replay LOG --follow` is refused with the one to give instead.
 */
function refuseOldFollow(args: readonly string[]): void {
  const i = args.indexOf('--follow');
  if (i >= 0 && (i === args.length - 1 || args[i + 1].startsWith('-')))
    throw new XrateError('usage', '--follow names the log it follows: give --follow LOG (not --replay LOG --follow)', {
      field: '--follow',
    });
}
