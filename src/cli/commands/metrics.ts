/**
 * `xrate metrics LOG|DB ROUTE [NAME=VALUE ...]`: the answer of a metrics endpoint, as JSON.
 *
 * ROUTE is the endpoint's path after `/v1/metrics/` (`listing`, `exchange/current`,
 * `symbol/BINANCE_PERP_BTC_USDT/current`, `asset/history`, `group`, ...) and each NAME=VALUE one
 * of its query parameters (`exchange_id=BINANCE`, `period_id=1HRS`, `time_format=unix_sec`), so
 * the command answers exactly what `xrate serve` answers for `GET /v1/metrics/ROUTE?NAME=VALUE&...`
 * over the same data (src/service/metrics.ts).
 *
 * @module
 */
import { openMetrics } from '../../replay/query.js';
import { answerMetrics } from '../../service/metrics.js';
import { answerJson } from '../../service/routeTable.js';
import { XrateError } from '../../core/errors.js';
import { asRouteAnswers, COMMON, parse, querySource, type Io } from '../args.js';
import { help } from '../help.js';

const OPTIONS = { ...COMMON, 'no-own-metrics': { type: 'boolean' } } as const;

/**
 * The query parameters of `NAME=VALUE` arguments (a usage error for any other argument).
 *
 * @example
 * ```ts
 * queryOf(['exchange_id=BINANCE', 'time=2024-03-01']); // { exchange_id: 'BINANCE', time: '2024-03-01' }
 * ```
 */
export function queryOf(args: string[]): Record<string, string> {
  const q: Record<string, string> = {};
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new XrateError('usage', `expected a query parameter NAME=VALUE (e.g. exchange_id=BINANCE), got "${a}"`);
    q[a.slice(0, eq)] = a.slice(eq + 1);
  }
  return q;
}

/** Runs `xrate metrics` with `args` (after the command name); returns the exit code. */
export async function cmdMetrics(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (values.help) return help('metrics', io);
  if (positionals.length < 2)
    throw new XrateError(
      'usage',
      'expected LOG|DB ROUTE [NAME=VALUE ...] (e.g. xrate metrics out.sqlite exchange/current exchange_id=BINANCE)',
    );
  const [input, route, ...params] = positionals;
  const query = queryOf(params);
  const path = `/v1/metrics/${route.replace(/^\/+/, '')}`;
  const m = await openMetrics(querySource(values, [input], 'metrics'), !values['no-own-metrics']);
  try {
    const a = answerMetrics(m.source, path, query);
    if (a === undefined) throw new XrateError('usage', `unknown metrics route "${route}" (see xrate metrics --help)`);
    io.out(`${answerJson(a)}\n`);
    return 0;
  } catch (e) {
    throw asRouteAnswers(e);
  } finally {
    m.close();
  }
}
