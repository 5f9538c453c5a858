/**
 * Dumps every output of a built checkout as text, so that two checkouts can be compared with
 * `diff -r`: the proof that a reshaping changed no output (docs/developing.md, "Proving a
 * reshaping changes no output").
 *
 * ```
 * npm run build
 * npx tsx scripts/dump-outputs.ts --out DIR [--bin PATH/bin/xrate.js] [--keep]
 * ```
 *
 * It runs a fixed list of scenarios through the built command as a user runs it (child
 * processes, in a fresh temporary directory, with relative paths): replays of the demo log, the
 * real-data fixtures (Binance NDJSON, tardis.dev CSV, CoinAPI flat files made from the Binance
 * fixture), generated logs (gzipped NDJSON, and one with bad and late lines as NDJSON, CSV and
 * SQLite) and the EMS positions log, with the replay options (`--out`, `--from`/`--to`,
 * `--track`/`--periods`, own metrics (the default) and `--no-own-metrics`, `--snapshot-every`/`--resume`, `--workers 2`, `--merge`,
 * `--time exchange`, `--reorder-window`, `--config`); then every query command on them, `xrate
 * serve` (over a database and over a live engine) and `xrate ems serve` with a list of requests
 * covering every route family in every format, and bad invocations. It writes into DIR:
 *
 * - `commands.txt`: every command, numbered, in order;
 * - `cli/NNN-label.txt`: a command's exit code, stdout, stderr and the files it wrote;
 * - `db/NAME/TABLE.txt`: every row of every table of each database, ordered by all its columns;
 * - `http/NAME/NNN-label.txt`: a request's status, headers that matter and body (MessagePack and
 *   compressed bodies in hex).
 *
 * What depends on the wall clock or the machine is replaced by a token (scripts/dump-outputs/
 * normalise.ts, and the masked columns of scripts/dump-outputs/tables.ts), so two runs of one
 * checkout give identical dumps. `--bin` defaults to this checkout's bin/xrate.js; the fixtures
 * are copied from the checkout of `--bin`. `--keep` keeps the working directory.
 *
 * @module
 */

import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { queries, replays } from './dump-outputs/commands.js';
import { Dump } from './dump-outputs/dump.js';
import { errors } from './dump-outputs/errors.js';
import { writeInputs } from './dump-outputs/inputs.js';
import { serveDatabase, serveEms, serveLive } from './dump-outputs/servers.js';

const HERE = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv: string[]): { out: string; bin: string; keep: boolean } {
  let out: string | undefined;
  let bin = resolve(HERE, '..', 'bin', 'xrate.js');
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') out = argv[++i];
    else if (a === '--bin') bin = resolve(argv[++i] ?? '');
    else if (a === '--keep') keep = true;
    else {
      process.stderr.write(
        `dump-outputs: unknown argument "${a}"\nusage: npx tsx scripts/dump-outputs.ts --out DIR [--bin PATH] [--keep]\n`,
      );
      process.exit(2);
    }
  }
  if (out === undefined) {
    process.stderr.write('dump-outputs: --out DIR is required\n');
    process.exit(2);
  }
  if (!existsSync(bin)) {
    process.stderr.write(`dump-outputs: no built command at ${bin} (npm run build)\n`);
    process.exit(2);
  }
  return { out: resolve(out), bin, keep };
}

async function main(): Promise<void> {
  const { out, bin, keep } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'xrate-dump-'));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  try {
    cpSync(join(dirname(bin), '..', 'fixtures'), join(work, 'fixtures'), { recursive: true });
    for (const sub of ['dbs', 'files', 'keys']) mkdirSync(join(work, sub));
    await writeInputs(work);
    const d = new Dump(out, work, bin);
    const phase = async (name: string, f: (d: Dump) => Promise<void>): Promise<void> => {
      const t = Date.now();
      await f(d);
      process.stderr.write(`dump-outputs: ${name} done (${((Date.now() - t) / 1000).toFixed(1)} s)\n`);
    };
    await phase('replays', replays);
    await phase('queries', queries);
    await phase('errors', errors);
    await phase('serve', serveDatabase);
    await phase('serve --replay', serveLive);
    await phase('ems serve', serveEms);
    d.finish();
    const c = d.counts;
    process.stderr.write(
      `dump-outputs: ${c.commands} commands, ${c.databases} databases (${c.tables} tables), ${c.requests} HTTP requests into ${out} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
    );
  } finally {
    if (keep) process.stderr.write(`dump-outputs: working directory kept: ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();
