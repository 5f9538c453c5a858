/**
 * The `xrate` command as npm installs it (bin/xrate, a POSIX shell script run through a link): it
 * replaces itself with Node running bin/xrate.js on the same arguments, and starts a replay in
 * partitions on threads, or a merge of files, with glibc's mmap threshold fixed
 * (MALLOC_MMAP_THRESHOLD_=1048576) unless the user set one, and a merge with V8's young
 * generation capped (`--max-semi-space-size=4`) unless the user's NODE_OPTIONS size it. What Node
 * starts with is read by a module preloaded through NODE_OPTIONS, which writes its environment,
 * flags and arguments and ends the process before the CLI runs; a real partitioned replay and a
 * real merge are then run through the command.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { BIN, bin, COMMAND, ensureBuilt, expectSameOutputs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-command-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// As npm links it: node_modules/.bin/xrate -> ../xrate/bin/xrate (relative), here through a second, absolute link.
const pkg = join(dir, 'node_modules', 'xrate');
const dotBin = join(dir, 'node_modules', '.bin');
const LINKED = join(dotBin, 'xrate');
const preload = join(dir, 'started.mjs');
const seen = join(dir, 'started.json');

beforeAll(() => {
  ensureBuilt();
  mkdirSync(pkg, { recursive: true });
  mkdirSync(dotBin, { recursive: true });
  symlinkSync(dirname(COMMAND), join(pkg, 'bin'));
  symlinkSync(relative(dotBin, join(pkg, 'bin', 'xrate')), LINKED);
  writeFileSync(
    preload,
    [
      "import { writeFileSync } from 'node:fs';",
      `writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ threshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, flags: process.execArgv, main: process.argv[1], args: process.argv.slice(2) }));`,
      'process.exit(0);',
    ].join('\n'),
  );
}, 180_000);

interface Started {
  threshold: string | null;
  /** Node's own flags (process.execArgv). */
  flags: string[];
  main: string;
  args: string[];
}

/** What Node started with when `command` ran `args` (`env`: added to this process's environment). */
function started(args: string[], env: Record<string, string> = {}, command = LINKED): Started {
  rmSync(seen, { force: true });
  const base = { ...process.env };
  delete base.MALLOC_MMAP_THRESHOLD_;
  delete base.GLIBC_TUNABLES;
  const r = spawnSync(command, args, {
    encoding: 'utf8',
    env: { ...base, NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`, ...env },
  });
  expect(r.status, `${command} ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(readFileSync(seen, 'utf8')) as Started;
}

/**
 * Starts `args` through the linked command and waits until its process is Node running the CLI
 * (the command replaces itself, exec): that process's arguments and environment, and its exit.
 */
async function throughCommand(
  args: string[],
): Promise<{ argv: string[]; environ: string[]; exited: Promise<{ code: number | null; err: string }> }> {
  const p = spawn(LINKED, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  p.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; err: string }>((resolve) => p.once('exit', (code) => resolve({ code, err })));
  let argv: string[] = [];
  for (let i = 0; i < 200 && !argv.some((a) => a.endsWith('xrate.js')); i++) {
    argv = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0');
    if (!argv.some((a) => a.endsWith('xrate.js'))) await new Promise((r) => setTimeout(r, 10));
  }
  return { argv, environ: readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0'), exited };
}

describe('the xrate command (bin/xrate)', () => {
  it('runs bin/xrate.js in Node with the same arguments, through the links npm makes', () => {
    const args = ['rate', 'a log with spaces.ndjson', '--pair', 'BTC/USD', '*', '', "it's", '"quoted"', '$HOME', '--'];
    for (const command of [LINKED, COMMAND]) {
      const s = started(args, {}, command);
      expect(realpathSync(s.main)).toBe(realpathSync(BIN));
      expect(s.args).toEqual(args);
      expect(s.threshold).toBeNull();
      expect(s.flags).toEqual([]);
    }
  });

  it('fixes the threshold for a replay in partitions on threads or merging files, and for no other command line', () => {
    const fixed: string[][] = [
      ['replay', 'log', '--workers', '2'],
      ['replay', 'log', '--workers=3', '--db', 'x'],
      ['replay', 'log', '--workers', 'auto'],
      ['replay', 'log', '--workers', '1', '--workers', '2'],
      ['replay', 'meta.ndjson', 'tree/', '--merge'],
      ['replay', 'meta.ndjson', 'tree/', '--merge', '--db', 'x', '--threads', '2'],
    ];
    const not: string[][] = [
      ['replay', 'log'],
      ['replay', 'log', '--workers', '1'],
      ['replay', 'log', '--workers', '2', '--workers=1'],
      ['replay', 'log', '--workers', '2', '--queue', 'redis://localhost:6379'],
      ['replay', 'log', '--queue=redis://localhost:6379', '--workers=2'],
      ['replay', 'log', '--', '--workers', '2'],
      ['replay', 'log', '--workers', 'two'],
      ['replay', 'log', '--workers'],
      ['convert', 'log', '--workers', '2'],
      ['convert', 'meta.ndjson', 'tree/', '--merge', '--out', 'x.parquet'],
      ['replay', 'log', '--', '--merge'],
      ['serve', '--workers', '2'],
      ['--workers', '2', 'replay'],
    ];
    for (const args of fixed) expect(started(args).threshold, args.join(' ')).toBe('1048576');
    for (const args of not) expect(started(args).threshold, args.join(' ')).toBeNull();
  });

  it("caps the young generation for a merge, and for no other command line, unless the user's NODE_OPTIONS size it", () => {
    const capped: string[][] = [
      ['replay', 'meta.ndjson', 'tree/', '--merge'],
      ['replay', 'meta.ndjson', 'tree/', '--merge', '--db', 'x', '--workers', '2'],
    ];
    const not: string[][] = [
      ['replay', 'log'],
      ['replay', 'log', '--workers', '2'],
      ['replay', 'log', '--', '--merge'],
      ['convert', 'meta.ndjson', 'tree/', '--merge', '--out', 'x.parquet'],
      ['--merge', 'replay'],
    ];
    for (const args of capped) expect(started(args).flags, args.join(' ')).toEqual(['--max-semi-space-size=4']);
    for (const args of not) expect(started(args).flags, args.join(' ')).toEqual([]);
    // The user's own size (NODE_OPTIONS, either spelling) is left as it is; the threshold is still fixed.
    const merge = ['replay', 'meta.ndjson', 'tree/', '--merge'];
    for (const flag of ['--max-semi-space-size=8', '--max_semi_space_size=8']) {
      const s = started(merge, { NODE_OPTIONS: `--import=${pathToFileURL(preload).href} ${flag}` });
      expect(s.flags).toEqual([]);
      expect(s.threshold).toBe('1048576');
    }
    // With the user's own malloc threshold, the young generation is still capped.
    expect(started(merge, { MALLOC_MMAP_THRESHOLD_: '65536' })).toMatchObject({ threshold: '65536', flags: ['--max-semi-space-size=4'] });
  });

  it("leaves the user's own threshold as it is", () => {
    const args = ['replay', 'log', '--workers', '2'];
    expect(started(args, { MALLOC_MMAP_THRESHOLD_: '65536' }).threshold).toBe('65536');
    expect(started(args, { MALLOC_MMAP_THRESHOLD_: '' }).threshold).toBe('');
    expect(started(args, { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=262144' }).threshold).toBeNull();
    expect(started(args, { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).threshold).toBe('1048576');
  });

  it('a partitioned replay through it: one process (Node in its place), the threshold set, outputs equal to the serial replay', async () => {
    const log = join(dir, 'log.ndjson');
    // About 3 hours of 12 exchanges: a few seconds with --workers 2.
    await writeLog(log, { seed: 3, events: 300_000, rate: 50, exchanges: 12, assets: 20 });
    const db = join(dir, 'w2.sqlite');
    const run = await throughCommand(['replay', log, '--db', db, '--workers', '2', '--quiet']);
    // The process the command started is Node itself once it runs (exec), with the threshold in its environment.
    expect(realpathSync(run.argv[1])).toBe(realpathSync(BIN));
    expect(run.environ).toContain('MALLOC_MMAP_THRESHOLD_=1048576');
    const { code, err } = await run.exited;
    expect(code, err).toBe(0);
    const serial = join(dir, 'serial.sqlite');
    expect(bin(['replay', log, '--db', serial, '--quiet'], { timeout: 120_000 }).status).toBe(0);
    expectSameOutputs(db, serial);
    // A flag the CLI refuses: its exit code and message, through the command.
    const bad = spawnSync(LINKED, ['replay', log, '--workers', '2', '--no-such-flag'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--no-such-flag/);
  }, 180_000);

  it('a merge through it: Node started with the young generation capped, outputs equal to those without', async () => {
    const log = join(dir, 'merge.ndjson');
    // About 17 hours (the half-hour logs of this generator tried gave no rate yet).
    await writeLog(log, { seed: 5, events: 30_000, rate: 0.5, exchanges: 12, assets: 20 });
    const db = join(dir, 'merged.sqlite');
    const run = await throughCommand(['replay', log, '--merge', '--db', db, '--quiet']);
    expect(run.argv.slice(1, 3).map((a, k) => (k === 1 ? realpathSync(a) : a))).toEqual(['--max-semi-space-size=4', realpathSync(BIN)]);
    const { code, err } = await run.exited;
    expect(code, err).toBe(0);
    const plain = join(dir, 'merged-plain.sqlite');
    expect(bin(['replay', log, '--merge', '--db', plain, '--quiet'], { timeout: 120_000 }).status).toBe(0);
    expect(expectSameOutputs(db, plain).rates).toBeGreaterThan(0);
  }, 180_000);
});
