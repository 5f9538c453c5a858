/**
 * `xrate rate LOG|DB --at TIME --pair B/Q...`: rates of pairs at a time, as a JSON array.
 *
 * @module
 */
import { queryRates } from '../../replay/query.js';
import { COMMON, pairList, parse, querySource, time, type Io } from '../args.js';
import { help } from '../help.js';

const OPTIONS = { ...COMMON, at: { type: 'string' }, pair: { type: 'string', multiple: true } } as const;

/** Runs `xrate rate` with `args` (after the command name); returns the exit code. */
export async function cmdRate(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (values.help) return help('rate', io);
  const at = time('at', values.at, true);
  const pairs = pairList(values.pair, true);
  const src = querySource(values, positionals, 'rate');
  io.out(`${JSON.stringify(await queryRates(src, at, pairs))}\n`);
  return 0;
}
