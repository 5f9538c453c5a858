/**
 * The examples of the documentation, as the docs test (test/e2e/readme.test.ts) reads them.
 *
 * Convention (docs/developing.md, "Docs that run"):
 * - A ```console block is a terminal session: a line starting with `$ ` is a command, the lines
 *   after it (up to the next command) are what it prints, stdout and stderr together. A command
 *   goes on over lines that end with `\` and over the body of a here-document (`<<'TAG'` to `TAG`).
 * - In an expected output, a line that is exactly `...` stands for any number of lines (none
 *   included), and `...` inside a line for any text within that line: timings, paths, or what a
 *   page leaves out of a long answer. Trailing spaces are ignored.
 * - `<!-- not run: REASON -->` on the line before a block (blank lines between allowed) keeps the
 *   test from running it (it needs NATS, Redis, a server left running, or another machine); it must
 *   still be correct.
 * - In every ```sh and ```console block, commands call `npx xrate`, never a bare `xrate`.
 *
 * @module
 */

/** One command of a console block and the output shown after it. */
export interface Step {
  command: string;
  /** 1-based line of its `$ `. */
  line: number;
  /** The expected output, without the block's indentation. */
  expected: string[];
  /** 0-based index in the file of the first expected line (where it would be, when there is none). */
  outputAt: number;
}

export interface ConsoleBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's indentation, given back to rewritten lines. */
  indent: string;
  /** The reason of a `<!-- not run: REASON -->` before it. */
  notRun?: string;
  steps: Step[];
}

/** A command line of a shell block (```sh, ```console), here-document bodies left out. */
export interface CommandLine {
  line: number;
  text: string;
}

export interface ParsedDoc {
  blocks: ConsoleBlock[];
  commands: CommandLine[];
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const NOT_RUN = /^<!--\s*not run:\s*(.*?)\s*-->$/;
const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

/** The here-document tags a command opens, in order (`<<'TAG'`, `<<"TAG"`, `<<TAG`, `<<-TAG`). */
function heredocTags(cmd: string): { tag: string; dash: boolean }[] {
  return [...cmd.matchAll(/<<(-?)\s*(['"]?)([A-Za-z_][\w]*)\2/g)].map((m) => ({ tag: m[3], dash: m[1] === '-' }));
}

/**
 * Reads a shell command starting at `lines[i]` (its `$ ` already stripped into `first`): the lines
 * it continues over (`\`) and its here-document bodies. Returns the command text and the next index.
 */
function readCommand(first: string, lines: string[], i: number, strip: (s: string) => string): { text: string; next: number } {
  const parts = [first];
  let j = i + 1;
  while (parts[parts.length - 1].endsWith('\\') && j < lines.length) parts.push(strip(lines[j++]));
  for (const { tag, dash } of heredocTags(parts.join('\n'))) {
    while (j < lines.length) {
      const l = strip(lines[j++]);
      parts.push(l);
      if ((dash ? l.trim() : l) === tag) break;
    }
  }
  return { text: parts.join('\n'), next: j };
}

/** The console blocks of a markdown text, and the command lines of its shell blocks. */
export function parseDoc(text: string): ParsedDoc {
  const lines = text.split('\n');
  const blocks: ConsoleBlock[] = [];
  const commands: CommandLine[] = [];
  let i = 0;
  while (i < lines.length) {
    const open = FENCE.exec(lines[i]);
    if (!open) {
      i++;
      continue;
    }
    const [, indent, fence, lang] = open;
    const closing = new RegExp(`^\\s*\\${fence[0]}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !closing.test(lines[end])) end++;
    const strip = (s: string): string => (s.startsWith(indent) ? s.slice(indent.length) : s.trimStart());
    if (SHELL.has(lang)) {
      let before = i - 1;
      while (before >= 0 && lines[before].trim() === '') before--;
      const marker = before >= 0 ? NOT_RUN.exec(lines[before].trim()) : null;
      const block: ConsoleBlock = { line: i + 1, indent, steps: [], ...(marker ? { notRun: marker[1] } : {}) };
      let j = i + 1;
      while (j < end) {
        const l = strip(lines[j]);
        if (lang === 'console' && !l.startsWith('$ ')) {
          const step = block.steps[block.steps.length - 1];
          if (!step) throw new Error(`line ${j + 1}: a console block starts with output, not with a "$ " command`);
          step.expected.push(l.trimEnd());
          j++;
          continue;
        }
        const { text: cmd, next } = readCommand(lang === 'console' ? l.slice(2) : l, lines.slice(0, end), j, strip);
        commands.push({ line: j + 1, text: cmd });
        if (lang === 'console') block.steps.push({ command: cmd, line: j + 1, expected: [], outputAt: next });
        j = next;
      }
      if (lang === 'console') blocks.push(block);
    }
    i = end + 1;
  }
  return { blocks, commands };
}

/** `text` up to its first unquoted comment (`#` at the start of a word). */
function withoutComment(text: string): string {
  let quote = '';
  for (let k = 0; k < text.length; k++) {
    const c = text[k];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (k === 0 || /\s/.test(text[k - 1]))) return text.slice(0, k);
  }
  return text;
}

const KEYWORDS = new Set(['do', 'then', 'else', 'time', 'exec', 'sudo', 'nohup', '!', '{']);

/** The lines of a command without its here-document bodies, continued lines joined. */
function shellLines(text: string): string[] {
  const lines: string[] = [];
  let open: { tag: string; dash: boolean }[] = [];
  for (const line of text.split('\n')) {
    if (open.length > 0) {
      if ((open[0].dash ? line.trim() : line) === open[0].tag) open = open.slice(1);
      continue;
    }
    const last = lines.length - 1;
    if (last >= 0 && lines[last].endsWith('\\')) lines[last] = `${lines[last].slice(0, -1)} ${line}`;
    else lines.push(line);
    open = heredocTags(line);
  }
  return lines;
}

/**
 * The words at command position in a shell command (after `;`, `&&`, `||`, `|`, `&`, `(`, `$(`,
 * keywords and `VAR=value`), here-document bodies and comments left out.
 */
export function commandWords(text: string): string[] {
  const words: string[] = [];
  for (const line of shellLines(text)) {
    for (const segment of withoutComment(line).split(/&&|\|\||[;&|(]|\$\(/)) {
      const tokens = segment.trim().split(/\s+/);
      let t = 0;
      while (t < tokens.length && (KEYWORDS.has(tokens[t]) || /^\w+=/.test(tokens[t]))) t++;
      if (tokens[t]) words.push(tokens[t]);
    }
  }
  return words;
}

/**
 * A pattern line as a regular expression: `...` is any text, the rest literal, but for a run of
 * two or more spaces, which matches any run of spaces: the padding of a column aligned to a value
 * that `...` stands for changes with that value's width (`events/s   ...` and `events/s  167,539`).
 */
function lineRegex(pattern: string): RegExp {
  const parts = pattern.split('...').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ {2,}/g, ' +'));
  return new RegExp(`^${parts.join('.*?')}$`);
}

const ANY_LINES = '...';

function lineMatches(pattern: string, line: string): boolean {
  return pattern.includes('...') ? lineRegex(pattern).test(line) : pattern === line;
}

/** Whether `actual` is what `expected` shows (placeholders as in the module comment). */
export function matchOutput(expected: readonly string[], actual: readonly string[]): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    if (i === expected.length) return j === actual.length;
    const key = i * (actual.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let ok: boolean;
    if (expected[i] === ANY_LINES) ok = go(i + 1, j) || (j < actual.length && go(i, j + 1));
    else ok = j < actual.length && lineMatches(expected[i], actual[j]) && go(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0);
}

/**
 * The expected output rewritten to show `actual` (UPDATE_README=1): the lines and placeholders
 * that still match are kept, the others replaced by the actual lines. An alignment of least cost:
 * a kept line or a `...` costs nothing, an actual line put in place of an expected one 1, an
 * actual line added 1, an expected line dropped 2 (so that a changed line is replaced rather than
 * swallowed by a neighbouring `...`).
 */
export function refreshOutput(expected: readonly string[], actual: readonly string[]): string[] {
  const n = expected.length;
  const m = actual.length;
  const cost: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  const step: string[][] = Array.from({ length: n + 1 }, () => new Array<string>(m + 1).fill(''));
  for (let i = n; i >= 0; i--) {
    for (let j = m; j >= 0; j--) {
      if (i === n && j === m) continue;
      const options: [number, string][] = [];
      if (i < n && expected[i] === ANY_LINES) {
        options.push([cost[i + 1][j], 'skip']);
        if (j < m) options.push([cost[i][j + 1], 'absorb']);
      }
      if (i < n && j < m && expected[i] !== ANY_LINES && lineMatches(expected[i], actual[j])) options.push([cost[i + 1][j + 1], 'keep']);
      if (i < n && j < m && expected[i] !== ANY_LINES) options.push([cost[i + 1][j + 1] + 1, 'replace']);
      if (j < m) options.push([cost[i][j + 1] + 1, 'add']);
      if (i < n) options.push([cost[i + 1][j] + 2, 'drop']);
      let best = options[0];
      for (const o of options) if (o[0] < best[0]) best = o;
      cost[i][j] = best[0];
      step[i][j] = best[1];
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    switch (step[i][j]) {
      case 'skip':
        out.push(ANY_LINES);
        i++;
        break;
      case 'absorb':
        // a line the `...` stands for (the `...` itself is written once, when it is passed)
        j++;
        break;
      case 'keep':
        out.push(expected[i++]);
        j++;
        break;
      case 'replace':
        out.push(actual[j++]);
        i++;
        break;
      case 'add':
        out.push(actual[j++]);
        break;
      default:
        i++;
    }
  }
  return out;
}
