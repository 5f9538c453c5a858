/**
 * The `--help` texts name only flags their command takes, and tell the truth about what
 * `xrate publish` reads.
 *
 * Each flag a command's help names is given to the command as `--flag=x` followed by a flag no
 * command has: the command's strict flag parser stops at the first flag it does not know, so the
 * error names `--flag` when the command does not take it, and the made-up flag otherwise (a
 * boolean flag given a value says so instead). Nothing runs: every call ends in a usage error.
 */
import { describe, expect, it } from 'vitest';
import { HELP } from '../../../src/cli/help.js';
import { run, type Io } from '../../../src/cli/main.js';

async function xrate(argv: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const io: Io = {
    out: () => undefined,
    err: (s) => {
      err += s;
    },
    isTTY: false,
    columns: 80,
  };
  const code = await run(argv, io);
  return { code, err };
}

/** The argv that starts each command (`ems` takes its subcommand first). */
const COMMANDS: Record<string, string[]> = Object.fromEntries(
  Object.keys(HELP)
    .filter((c) => c !== 'main')
    .map((c) => [c, c === 'ems' ? ['ems', 'serve'] : [c]]),
);

/** The flags named in a help text. */
function flagsOf(text: string): string[] {
  return [...new Set(text.match(/--[a-z][a-z-]*/g) ?? [])];
}

describe('--help texts', () => {
  it('cover every command of the command list', () => {
    expect(Object.keys(COMMANDS).sort()).toEqual(
      [
        'convert',
        'demo',
        'ems',
        'explain',
        'history',
        'keys',
        'metrics',
        'periods',
        'plot',
        'publish',
        'rate',
        'replay',
        'serve',
        'symbols',
        'worker',
      ].sort(),
    );
  });

  for (const [cmd, argv] of Object.entries(COMMANDS)) {
    it(`${cmd}: every flag its help names is a flag of ${cmd}`, async () => {
      const flags = flagsOf(HELP[cmd]);
      expect(flags.length).toBeGreaterThan(0);
      for (const flag of flags) {
        const r = await xrate([...argv, `${flag}=x`, '--no-such-flag-anywhere']);
        expect(r.code, `${cmd} ${flag}: ${r.err}`).toBe(2);
        expect(r.err, `${cmd} --help names ${flag}`).not.toContain(`Unknown option '${flag}'`);
        expect(r.err).toMatch(/--no-such-flag-anywhere|does not take an argument/);
      }
    });
  }

  it('publish names the formats it reads and says why vendor files are refused', () => {
    const text = HELP.publish.replace(/\s+/g, ' ');
    expect(text).not.toMatch(/any format/);
    expect(text).toContain('NDJSON or CSV (each optionally gzipped) or SQLite (table "events")');
    expect(text).toContain('Not a directory, nor a vendor file (CoinAPI flat files, tardis.dev CSV)');
    expect(text).toContain('a replica reads each message alone');
  });
});
