/**
 * `xrate convert LOG... --out FILE.parquet`: any inputs xrate replays, as one Parquet event log in
 * replay order (src/io/parquetConvert.ts, docs/formats.md "Parquet event logs"); `xrate replay
 * FILE.parquet` then gives the outputs of replaying the inputs.
 *
 * @module
 */
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { XrateError } from '../../core/errors.js';
import { expandInputs, flatList } from '../../io/inputs.js';
import { convertToParquet } from '../../io/parquetConvert.js';
import { refuseOutOfMode } from '../../replay/options.js';
import { inputs, maxLineBytes, parse, refuseDuplicateInputs, replayFormat, type Io, vendorTime } from '../args.js';
import { CONVERT_OPTIONS, CONVERT_TABLE, convertModeOf } from '../flags.js';
import { help } from '../help.js';

/** Runs `xrate convert` with `args` (after the command name); returns the exit code. */
export async function cmdConvert(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, CONVERT_OPTIONS);
  if (values.help) return help('convert', io);
  refuseOutOfMode(CONVERT_TABLE, convertModeOf(values), values);
  const out = values.out;
  if (out === undefined) throw new XrateError('usage', 'convert needs --out FILE.parquet', { field: '--out' });
  if (!/\.parquet$/i.test(out)) throw new XrateError('usage', `--out must name a .parquet file, got "${out}"`, { field: '--out' });
  const format = replayFormat(values.format);
  if (format === 'parquet') throw new XrateError('usage', '--format parquet: convert reads logs to write Parquet', { field: '--format' });
  const time = vendorTime(values.time);
  const lineBytes = maxLineBytes(values['max-line-bytes']);
  const logs = inputs(positionals, 'convert');
  // The files as the check of duplicates listed them (listed here when duplicates are allowed).
  const listed = refuseDuplicateInputs(logs, values['allow-duplicates']);
  const files = listed === undefined ? expandInputs(logs) : flatList(listed);
  if (existsSync(out)) {
    const real = realpathSync(out);
    for (const f of files)
      if (realpathSync(f) === real) throw new XrateError('usage', `--out "${out}" is one of the inputs`, { field: '--out' });
  }
  mkdirSync(dirname(resolve(out)), { recursive: true });
  const s = await convertToParquet(files, out, { format, merge: values.merge, time, maxLineBytes: lineBytes });
  if (!values.quiet)
    io.err(
      `xrate convert: ${s.rows} rows (${s.columnar} quotes and trades, ${s.other} other, ${s.rejects} rejects) ` +
        `from ${files.length} input${files.length === 1 ? '' : 's'} to ${out}\n`,
    );
  return 0;
}
