/**
 * Docs that run: every ```console block of README.md and docs/*.md (but those marked
 * `<!-- not run: ... -->`) is run as a newcomer would paste it, after the quick start, and what
 * each command prints must be what the page shows (placeholders: test/helpers/docExamples.ts).
 * The commands run with bash in a fresh directory that looks like a clone of the repository (bin,
 * dist, fixtures, node_modules, package.json and ui linked from it; `docs/` and `out/` its own),
 * where `npx xrate` runs the command npm installs (bin/xrate, which runs the built CLI in Node) and
 * `npm start` the quick start.
 *
 * UPDATE_README=1 rewrites, in place, the expected outputs that no longer match (keeping the
 * placeholders that still do), for a change that is meant to change what the commands print.
 * Needs `npm run build` first, as every e2e test of the command.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandWords, type ConsoleBlock, matchOutput, parseDoc, refreshOutput } from '../helpers/docExamples.js';
import { COMMAND, ROOT } from './helpers.js';

const UPDATE = process.env.UPDATE_README === '1';
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const README_MAX_LINES = 250;

const work = mkdtempSync(join(tmpdir(), 'xrate-docs-'));
const shim = join(work, '.shim');
let env: NodeJS.ProcessEnv = {};

/** Replacements of expected outputs per file (UPDATE_README=1), written when the file's examples have run. */
const updates = new Map<string, { at: number; count: number; lines: string[] }[]>();

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('the docs test runs the built command: npm run build first');
  for (const name of ['bin', 'dist', 'fixtures', 'node_modules', 'package.json', 'ui']) symlinkSync(join(ROOT, name), join(work, name));
  mkdirSync(join(work, 'docs'));
  mkdirSync(shim);
  writeFileSync(
    join(shim, 'npx'),
    [
      '#!/bin/sh',
      `if [ "$1" = xrate ]; then shift; exec '${COMMAND}' "$@"; fi`,
      'echo "docs test: only npx xrate runs here (got: npx $*)" >&2; exit 127',
      '',
    ].join('\n'),
  );
  chmodSync(join(shim, 'npx'), 0o755);
  writeFileSync(join(work, '.npmrc-empty'), '');
  // A shell as a user's: no variables of npm or of the test runner, npm without the user's config.
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|vitest|NODE_ENV$|NODE_OPTIONS$)/i.test(k)));
  // The command starts the `node` of the PATH: this one.
  env.PATH = [shim, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
  env.NPM_CONFIG_USERCONFIG = join(work, '.npmrc-empty');
  env.NPM_CONFIG_UPDATE_NOTIFIER = 'false';
  // The quick start, so that every page's examples find out/xrate.sqlite whichever run first.
  const start = sh('npm start');
  expect(start.code, start.out).toBe(0);
});

afterAll(() => {
  for (const [file, list] of updates) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (const u of list.sort((a, b) => b.at - a.at)) lines.splice(u.at, u.count, ...u.lines);
    writeFileSync(join(ROOT, file), lines.join('\n'));
  }
  rmSync(work, { recursive: true, force: true });
});

/** Runs `command` with bash in the work directory: its exit code and what it printed (stdout and stderr together). */
function sh(command: string): { code: number | null; out: string } {
  const r = spawnSync('bash', ['-c', `exec 2>&1\n${command}`], {
    cwd: work,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 240_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw new Error(`${command}: ${r.error.message}`);
  return { code: r.status, out: r.stdout };
}

/** Output as lines: the final line break dropped, trailing spaces ignored. */
function outputLines(out: string): string[] {
  const lines = out.split('\n').map((l) => l.trimEnd());
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function runBlock(file: string, block: ConsoleBlock): void {
  for (const step of block.steps) {
    const actual = outputLines(sh(step.command).out);
    if (matchOutput(step.expected, actual)) continue;
    if (UPDATE) {
      const list = updates.get(file) ?? [];
      list.push({
        at: step.outputAt,
        count: step.expected.length,
        lines: refreshOutput(step.expected, actual).map((l) => block.indent + l),
      });
      updates.set(file, list);
      continue;
    }
    // Fails, with the difference.
    expect(actual.join('\n'), `${file}:${step.line}: $ ${step.command}`).toBe(step.expected.join('\n'));
  }
}

describe('the docs runner', () => {
  const page = [
    'Text.',
    '',
    '<!-- not run: needs NATS -->',
    '',
    '```console',
    '$ nats-server -js &',
    '```',
    '',
    '- A list item:',
    '',
    '  ```console',
    "  $ cat > out/a.ndjson <<'LOG'",
    '  {"type":"quote"}',
    '  $ not a command: the body of the here-document',
    '  LOG',
    '  $ npx xrate rate out/a.ndjson \\',
    '      --at 2024-03-01T00:00:00Z --pair BTC/USD',
    '  [{"rate":null}]',
    '  ...',
    '  last',
    '  ```',
    '```sh',
    'npx xrate serve   # then xrate keys create, in a comment',
    'for i in 1 2; do xrate serve --port 300$i & done',
    '```',
  ].join('\n');

  it('reads commands, here-documents, continuations, outputs and not-run markers', () => {
    const { blocks, commands } = parseDoc(page);
    expect(blocks.map((b) => b.notRun)).toEqual(['needs NATS', undefined]);
    const [heredoc, rate] = blocks[1].steps;
    expect(heredoc.command).toBe(`cat > out/a.ndjson <<'LOG'\n{"type":"quote"}\n$ not a command: the body of the here-document\nLOG`);
    expect(heredoc.expected).toEqual([]);
    expect(rate.command).toBe('npx xrate rate out/a.ndjson \\\n    --at 2024-03-01T00:00:00Z --pair BTC/USD');
    expect(rate.expected).toEqual(['[{"rate":null}]', '...', 'last']);
    expect(blocks[1].indent).toBe('  ');
    expect(page.split('\n')[rate.outputAt]).toBe('  [{"rate":null}]');
    expect(commands.map((c) => commandWords(c.text))).toEqual([['nats-server'], ['cat'], ['npx'], ['npx'], ['for', 'xrate', 'done']]);
  });

  it('matches exact lines, `...` lines and `...` within a line, and nothing else', () => {
    expect(matchOutput(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(matchOutput(['a', '...', 'z'], ['a', 'z'])).toBe(true);
    expect(matchOutput(['a', '...', 'z'], ['a', 'b', 'c', 'z'])).toBe(true);
    // The padding of a column aligned to a value that `...` stands for follows the value's width.
    expect(matchOutput(['events/s     ...'], ['events/s    167,539'])).toBe(true);
    expect(matchOutput(['events/s     ...'], ['events/h    167,539'])).toBe(false);
    expect(matchOutput(['rate  0.5'], ['rate   0.5'])).toBe(false); // no placeholder: the line exactly
    expect(matchOutput(['time taken ... s'], ['time taken    0.24 s'])).toBe(true);
    expect(matchOutput(['[{"rate":1.5,...}]'], ['[{"rate":1.5,"time":"x"}]'])).toBe(true);
    // Drift: a changed number, a line more or less, a changed line next to a `...`.
    expect(matchOutput(['[{"rate":62319.70999999999}]'], ['[{"rate":62319.71}]'])).toBe(false);
    expect(matchOutput(['a', 'b'], ['a', 'b', 'c'])).toBe(false);
    expect(matchOutput(['a', 'b'], ['a'])).toBe(false);
    expect(matchOutput(['...', 'last 1'], ['x', 'last 2'])).toBe(false);
    expect(matchOutput(['time taken ... s'], ['time taken 0.24 ms', 'more'])).toBe(false);
  });

  it('refreshes an output: keeps what still matches, the placeholders included, and replaces the rest', () => {
    const expected = ['head', '...', 'rate 62319.70999999999', 'time ... s', 'tail'];
    const actual = ['head', 'x', 'y', 'rate 62319.71', 'time 0.3 s', 'tail', 'new line'];
    const refreshed = refreshOutput(expected, actual);
    expect(refreshed).toEqual(['head', '...', 'rate 62319.71', 'time ... s', 'tail', 'new line']);
    expect(matchOutput(refreshed, actual)).toBe(true);
    expect(refreshOutput(['a', 'b', 'c'], ['a', 'c'])).toEqual(['a', 'c']);
    expect(refreshOutput(['...'], [])).toEqual(['...']);
  });
});

describe('README.md', () => {
  it(`is a ten-minute read: at most ${README_MAX_LINES} lines`, () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });
});

for (const file of DOCS) {
  const doc = parseDoc(readFileSync(join(ROOT, file), 'utf8'));
  describe(file, () => {
    it('calls npx xrate in its shell examples, never a bare xrate', () => {
      const bare = doc.commands.filter((c) => commandWords(c.text).includes('xrate')).map((c) => `${file}:${c.line}: ${c.text}`);
      expect(bare).toEqual([]);
    });
    for (const block of doc.blocks) {
      if (block.notRun) continue;
      it(`prints what it shows: the example at line ${block.line}`, () => runBlock(file, block), 900_000);
    }
  });
}
