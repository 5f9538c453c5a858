/**
 * Generates the module map of docs/architecture.md from the code: per directory under `src/` (a
 * layer), each file with its line count and the first sentence of its module comment.
 *
 * ```
 * npm run docs:architecture                 # rewrite the map between its markers
 * npx tsx scripts/architecture.ts --check   # exit 1 when the page is out of date
 * ```
 *
 * The map lies between `<!-- generated: modules -->` and `<!-- end generated -->`; the rest of
 * the page is written by hand and left as it is. A module comment is the `/** ... @module *\/`
 * block at the top of a file; its first sentence ends at the first period followed by a space or
 * a line end (not the one of `e.g.` or `i.e.`), within its first paragraph.
 *
 * @module
 */

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs', 'architecture.md');
export const BEGIN = '<!-- generated: modules -->';
export const END = '<!-- end generated -->';

/** The layers from the bottom up; a directory not listed here comes after them, by name. */
const LAYER_ORDER = ['core', 'reference', 'io', 'replay', 'answers', 'distributed', 'http', 'service', 'ems', 'app', 'cli'];

/** The first sentence of the module comment at the top of `text`, or `""` without one. */
export function firstSentence(text: string): string {
  const m = /^\s*\/\*\*([\s\S]*?)\*\//.exec(text);
  const body = m?.[1];
  if (body === undefined || !body.includes('@module')) return '';
  const lines = body.split('\n').map((l) => l.replace(/^\s*\* ?/, '').trimEnd());
  const para: string[] = [];
  for (const l of lines) {
    if (l.trim() === '') {
      if (para.length > 0) break;
      continue;
    }
    if (l.startsWith('@')) break;
    para.push(l.trim());
  }
  const joined = para.join(' ').replace(/\{@link\s+([^}\s|]+)[^}]*\}/g, '`$1`');
  const re = /\.(\s|$)/g;
  for (let hit = re.exec(joined); hit !== null; hit = re.exec(joined)) {
    const before = joined.slice(0, hit.index + 1);
    if (/\b(e\.g|i\.e|etc|vs)\.$/.test(before)) continue;
    return before;
  }
  return joined;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const cellText = (s: string): string => s.replace(/\|/g, '\\|');

function section(title: string, base: string, files: string[]): string {
  const rows = files.map((f) => {
    const text = readFileSync(f, 'utf8');
    return { file: relative(base, f), lines: lineCount(text), what: firstSentence(text) };
  });
  const total = rows.reduce((n, r) => n + r.lines, 0);
  return [
    `### \`${title}\` (${rows.length} files, ${total.toLocaleString('en-US')} lines)`,
    '',
    '| file | lines | what it is |',
    '|---|---:|---|',
    ...rows.map((r) => `| \`${r.file}\` | ${r.lines} | ${cellText(r.what)} |`),
  ].join('\n');
}

/** The generated map of `root/src`, markers included. */
export function moduleMap(root: string = ROOT): string {
  const src = join(root, 'src');
  const entries = readdirSync(src).sort();
  const dirs = entries.filter((e) => statSync(join(src, e)).isDirectory());
  const rank = (d: string): number => {
    const i = LAYER_ORDER.indexOf(d);
    return i === -1 ? LAYER_ORDER.length : i;
  };
  dirs.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const rootFiles = entries.filter((e) => e.endsWith('.ts') && !dirs.includes(e)).map((e) => join(src, e));
  const parts = [
    BEGIN,
    '<!-- written by scripts/architecture.ts from the module comments: npm run docs:architecture -->',
    '',
    section('src/', src, rootFiles),
    ...dirs.map((d) => `\n${section(`src/${d}/`, join(src, d), tsFiles(join(src, d)))}`),
    END,
  ];
  return parts.join('\n');
}

/** `doc` with its generated map replaced by `map` (an error when the markers are missing). */
export function withMap(doc: string, map: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a === -1 || b === -1 || b < a) throw new Error(`docs/architecture.md has no ${BEGIN} ... ${END} markers`);
  return doc.slice(0, a) + map + doc.slice(b + END.length);
}

function main(argv: string[]): void {
  const check = argv.includes('--check');
  const doc = readFileSync(DOC, 'utf8');
  const next = withMap(doc, moduleMap());
  if (check) {
    if (next !== doc) {
      process.stderr.write('docs/architecture.md: the module map is out of date: run npm run docs:architecture\n');
      process.exit(1);
    }
    return;
  }
  if (next !== doc) writeFileSync(DOC, next);
  process.stderr.write(`docs/architecture.md: module map ${next === doc ? 'already up to date' : 'written'}\n`);
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) main(process.argv.slice(2));
