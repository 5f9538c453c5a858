/**
 * `xrate periods [--months]`: the period records, as JSON.
 *
 * @module
 */
import { EXCHANGE_RATE_PERIODS, MONTH_PERIODS } from '../../core/periods.js';
import { HELP_OPTION, parseFlags, type Io } from '../args.js';
import { help } from '../help.js';

const OPTIONS = { ...HELP_OPTION, months: { type: 'boolean' } } as const;

/** Runs `xrate periods` with `args` (after the command name); returns the exit code. */
export async function cmdPeriods(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, OPTIONS);
  if (values.help) return help('periods', io);
  io.out(`${JSON.stringify(values.months ? [...EXCHANGE_RATE_PERIODS, ...MONTH_PERIODS] : EXCHANGE_RATE_PERIODS, null, 2)}\n`);
  return 0;
}
