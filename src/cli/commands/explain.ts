/**
 * `xrate explain LOG|DB --pair B/Q [--at TIME]`: the provenance of a rate, as JSON.
 *
 * @module
 */
import { queryExplain } from '../../replay/query.js';
import { COMMON, pairList, parse, querySource, time, type Io } from '../args.js';
import { help } from '../help.js';

const OPTIONS = { ...COMMON, pair: { type: 'string' }, at: { type: 'string' } } as const;

/** Runs `xrate explain` with `args` (after the command name); returns the exit code. */
export async function cmdExplain(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (values.help) return help('explain', io);
  const [pair] = pairList(values.pair === undefined ? undefined : [values.pair], true);
  const at = time('at', values.at);
  const src = querySource(values, positionals, 'explain');
  io.out(`${JSON.stringify(await queryExplain(src, pair, at), null, 2)}\n`);
  return 0;
}
