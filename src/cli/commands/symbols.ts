/**
 * `xrate symbols LOG|DB ROUTE [NAME=VALUE ...]`: the answer of a symbols endpoint, as JSON.
 *
 * ROUTE is the endpoint's path after `/v1/symbols` (empty for all symbols, `BINANCE`,
 * `BINANCE/active`, `map/BINANCE`) and each NAME=VALUE one of its query parameters
 * (`filter_asset_id=BTC`, `time=2024-03-01T04:00:00Z`), so the command answers exactly what
 * `xrate serve` answers for `GET /v1/symbols/ROUTE?NAME=VALUE&...` over the same data
 * (src/service/symbols.ts). From a log, it replays to `time` (or the end) and answers at that
 * tick; from a replay database, at its last tick or later (an earlier time is refused: ask the log).
 *
 * @module
 */
import { engineAt, isDatabaseSource } from '../../replay/query.js';
import { DatabaseRateProvider } from '../../answers/index.js';
import { answerSymbols, symbolsTime, type SymbolSource } from '../../service/symbols.js';
import { XrateError } from '../../core/errors.js';
import { asRouteAnswers, COMMON, parse, querySource, type Io } from '../args.js';
import { help } from '../help.js';
import { queryOf } from './metrics.js';

/** The records' source: the replay database's provider, or the engine of the log replayed to `time`. */
async function openSource(
  src: ReturnType<typeof querySource>,
  query: Record<string, string>,
): Promise<{ source: SymbolSource; close(): void }> {
  if (isDatabaseSource(src)) {
    const p = await DatabaseRateProvider.open(src.inputs[0], { watch: false });
    return { source: p, close: () => void p.close() };
  }
  const engine = await engineAt(src, symbolsTime(query));
  return { source: { symbols: (_at, filter) => engine.symbols(filter) }, close: () => undefined };
}

/** Runs `xrate symbols` with `args` (after the command name); returns the exit code. */
export async function cmdSymbols(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, COMMON);
  if (values.help) return help('symbols', io);
  if (positionals.length < 1)
    throw new XrateError('usage', 'expected LOG|DB [ROUTE] [NAME=VALUE ...] (e.g. xrate symbols out.sqlite BINANCE/active)');
  const [input, ...rest] = positionals;
  const route = (rest.length > 0 && !rest[0].includes('=') ? rest.shift()! : '').replace(/^\/+|\/+$/g, '');
  const path = route === '' ? '/v1/symbols' : `/v1/symbols/${route}`;
  const query = queryOf(rest);
  const s = await openSource(querySource(values, [input], 'symbols'), query);
  try {
    const a = answerSymbols(s.source, path, query);
    if (a === undefined) throw new XrateError('usage', `unknown symbols route "${route}" (see xrate symbols --help)`);
    io.out(`${JSON.stringify(a.value)}\n`);
    return 0;
  } catch (e) {
    throw asRouteAnswers(e);
  } finally {
    s.close();
  }
}
