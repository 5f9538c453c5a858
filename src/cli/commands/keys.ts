/**
 * `xrate keys <create|list|revoke|jwt-import>`: reads the flags and hands them to
 * {@link keysCommand}.
 *
 * @module
 */
import { XrateError } from '../../core/errors.js';
import { HELP_OPTION, parse, type Io } from '../args.js';
import { REDIS_FLAGS } from '../connection.js';
import { help } from '../help.js';
import { keysCommand } from '../keys.js';

const OPTIONS = {
  ...HELP_OPTION,
  db: { type: 'string' },
  keys: { type: 'string' },
  redis: { type: 'string' },
  ...REDIS_FLAGS,
  name: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  overage: { type: 'boolean' },
  rights: { type: 'string' },
  json: { type: 'boolean' },
  id: { type: 'string' },
  key: { type: 'string' },
  'public-key': { type: 'string' },
  'secret-file': { type: 'string' },
  remove: { type: 'boolean' },
} as const;

/** Runs `xrate keys` with `args` (after the command name); returns the exit code. */
export async function cmdKeys(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (values.help) return help('keys', io);
  const [sub, ...rest] = positionals;
  return keysCommand(sub, values, rest, io, (m) => new XrateError('usage', m));
}
