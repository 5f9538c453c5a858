/**
 * `xrate history LOG|DB --pair B/Q --period P --from T1 --to T2`: an OHLC timeseries as JSON.
 *
 * @module
 */
import { EXCHANGE_RATE_PERIODS } from '../../core/periods.js';
import { queryHistory, HISTORY_MAX_LIMIT } from '../../replay/query.js';
import { XrateError } from '../../core/errors.js';
import { COMMON, pairList, parse, querySource, time, type Io } from '../args.js';
import { help } from '../help.js';

const OPTIONS = {
  ...COMMON,
  pair: { type: 'string' },
  period: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  limit: { type: 'string' },
} as const;

/** Runs `xrate history` with `args` (after the command name); returns the exit code. */
export async function cmdHistory(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (values.help) return help('history', io);
  const [pair] = pairList(values.pair === undefined ? undefined : [values.pair], true);
  const period = values.period;
  if (!period) throw new XrateError('usage', 'missing --period PERIOD_ID (e.g. 1MIN; see xrate periods)');
  if (!EXCHANGE_RATE_PERIODS.some((p) => p.period_id === period.toUpperCase())) {
    throw new XrateError('usage', `--period: unknown period id "${period}" (see xrate periods)`, { field: '--period' });
  }
  const from = time('from', values.from, true);
  const to = time('to', values.to, true);
  if (!(to > from)) throw new XrateError('usage', '--to must be after --from', { field: '--to' });
  const limitText = values.limit;
  const limit = limitText === undefined ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT) {
    throw new XrateError('usage', `--limit must be an integer in 1..${HISTORY_MAX_LIMIT}, got "${limitText}"`, { field: '--limit' });
  }
  const src = querySource(values, positionals, 'history');
  io.out(`${JSON.stringify(await queryHistory(src, pair, period.toUpperCase(), from, to, limit))}\n`);
  return 0;
}
