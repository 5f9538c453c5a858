/**
 * `xrate ems serve`: reads the flags, starts the EMS gateway ({@link startEms}) and keeps it
 * running until SIGINT/SIGTERM.
 *
 * @module
 */
import { startEms } from '../../app/ems.js';
import { XrateError } from '../../core/errors.js';
import { refuseOutOfMode } from '../../replay/options.js';
import { closeOnSignals, format, int, loadConfig, maxLineBytes, parseFlags, seconds, type Io } from '../args.js';
import { EMS_OPTIONS, EMS_TABLE, emsModeOf } from '../flags.js';
import { help } from '../help.js';

/**
 * Runs `xrate ems <subcommand>` (`serve`) with `args` (after the command name); returns the exit
 * code. TLS file combinations are checked by {@link startEms} (exit 1 with its message).
 */
export async function cmdEms(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') return help('ems', io);
  if (sub !== 'serve') throw new XrateError('usage', `unknown ems subcommand "${sub}" (expected serve)`);
  const { values } = parseFlags(rest, EMS_OPTIONS);
  if (values.help) return help('ems', io);
  const config = loadConfig(values.config);
  const extra = {
    format: format(values.format),
    reorderWindowUs: seconds('reorder-window', values['reorder-window']),
    maxLineBytes: maxLineBytes(values['max-line-bytes']),
  };
  // Each flag in the modes it applies to (src/cli/flags.ts).
  refuseOutOfMode(EMS_TABLE, emsModeOf(values), values);
  if (values.keys !== undefined && !values.managed)
    throw new XrateError('usage', '--keys applies to --managed (a self-hosted gateway asks for no key)', { field: '--keys' });
  const ems = await startEms(
    {
      db: values.db,
      replay: values.replay,
      follow: values.follow,
      host: values.host,
      port: int('port', values.port, 0, 65535, (m) => new XrateError('usage', m)),
      managed: !!values.managed,
      keys: values.keys,
      tlsCert: values['tls-cert'],
      tlsKey: values['tls-key'],
      tlsClientCa: values['tls-client-ca'],
      sites: values.sites,
      clientPem: values['client-pem'],
      config,
      ...extra,
    },
    io,
  );
  closeOnSignals('ems serve', 'closing', () => ems.close(), io);
  return 0;
}
