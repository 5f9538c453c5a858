/**
 * `xrate serve`: reads the flags and hands them to {@link serveCommand}.
 *
 * @module
 */
import { XrateError } from '../../core/errors.js';
import { COMMON, format, loadConfig, maxLineBytes, parseFlags, seconds, type Io } from '../args.js';
import { NATS_FLAGS, REDIS_FLAGS } from '../connection.js';
import { help } from '../help.js';
import { serveCommand } from '../serve.js';

const OPTIONS = {
  ...COMMON,
  db: { type: 'string' },
  keys: { type: 'string' },
  redis: { type: 'string' },
  ...REDIS_FLAGS,
  host: { type: 'string' },
  port: { type: 'string' },
  replay: { type: 'string' },
  follow: { type: 'boolean' },
  'heavy-concurrency': { type: 'string' },
  nats: { type: 'string' },
  ...NATS_FLAGS,
  stream: { type: 'string' },
  'snapshot-every': { type: 'string' },
  'snapshot-from': { type: 'string' },
  'ready-lag': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

/** Runs `xrate serve` with `args` (after the command name); returns the exit code. */
export async function cmdServe(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, OPTIONS);
  if (values.help) return help('serve', io);
  const extra = {
    format: format(values.format),
    config: loadConfig(values.config),
    reorderWindowUs: seconds('reorder-window', values['reorder-window']),
    maxLineBytes: maxLineBytes(values['max-line-bytes']),
  };
  return serveCommand(values, extra, io, (m) => new XrateError('usage', m));
}
