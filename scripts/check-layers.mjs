#!/usr/bin/env node
// Layer check (docs/architecture.md): every import of a file under src follows the table of
// scripts/layers.json (a layer never imports one its row forbids), and nothing in a pure layer
// (src/core) performs I/O, reads the wall clock or draws random numbers. The package's entry points
// (package.json's exports) may re-export from any layer. Exits 1 with file:line and the rule broken
// for each violation. `node scripts/check-layers.mjs [ROOT]` checks the tree at ROOT (default: this
// repository) against this repository's table.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The table of scripts/layers.json. */
export function readTable(root = repoRoot) {
  return JSON.parse(readFileSync(join(root, 'scripts', 'layers.json'), 'utf8'));
}

/** What a pure layer may not do: [pattern, rule]. */
const PURITY = [
  [
    /from\s+['"](node:)?(fs|fs\/promises|http|https|http2|net|dgram|child_process|worker_threads|cluster|os|readline|zlib)['"]/,
    'imports a Node I/O module',
  ],
  [/require\(\s*['"](node:)?(fs|http|https|net|child_process)['"]\s*\)/, 'requires a Node I/O module'],
  [/from\s+['"]better-sqlite3['"]|from\s+['"]fast-csv['"]/, 'imports an I/O package'],
  [/\bDate\.now\s*\(|new\s+Date\s*\(\s*\)|performance\.now\s*\(|process\.hrtime|process\.env/, 'reads the wall clock or the environment'],
  [/\bMath\.random\s*\(/, 'uses Math.random (non-deterministic)'],
];

/** Static imports and re-exports (`import ... from`, `export ... from`, `import '...'`) and dynamic `import('...')`. */
const STATIC =
  /^[ \t]*(import|export)\s+(type\s+)?(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)\s+from\s+['"]([^'"]+)['"]/gm;
const BARE = /^[ \t]*import\s+['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const posix = (p) => p.split(sep).join('/');

/** The files the package's exports and main name, as their sources (dist/x.js -> src/x.ts). */
function entryPoints(root) {
  const file = join(root, 'package.json');
  if (!existsSync(file)) return new Set();
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  const targets = [pkg.main];
  const walkExports = (v) => {
    if (typeof v === 'string') targets.push(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walkExports(x);
  };
  walkExports(pkg.exports);
  return new Set(
    targets
      .filter((t) => typeof t === 'string' && /^\.\/dist\/.*\.js$/.test(t))
      .map((t) => t.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')),
  );
}

/** The layer of a file (path relative to the root, with /), or undefined. */
function layerOf(table, rel) {
  for (const [name, l] of Object.entries(table.layers)) if (l.file === rel) return name;
  for (const [name, l] of Object.entries(table.layers)) if (l.dir && rel.startsWith(`${l.dir}/`)) return name;
  return undefined;
}

/** The line (1-based) of offset `i` of `text`. */
function lineAt(text, i) {
  let n = 1;
  for (let k = text.indexOf('\n'); k !== -1 && k < i; k = text.indexOf('\n', k + 1)) n++;
  return n;
}

/** `text` with comments blanked (same offsets and lines), so examples in TSDoc are not read as imports. */
export function withoutComments(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`\\])\/\/[^\n]*/g, (c, pre) => pre + ' '.repeat(c.length - pre.length));
}

/**
 * The imports of a module's code (its comments blanked: {@link withoutComments}), in no order:
 * where each is (`at`), `import` or `export`, the module named, whether it names types only
 * (`import type`, `export type`: gone once compiled) and whether it is an `import()` (loaded when
 * it runs).
 */
export function importsIn(code) {
  const found = [];
  for (const m of code.matchAll(STATIC)) found.push({ at: m.index, kind: m[1], spec: m[3], typeOnly: m[2] !== undefined, dynamic: false });
  for (const m of code.matchAll(BARE)) found.push({ at: m.index, kind: 'import', spec: m[1], typeOnly: false, dynamic: false });
  for (const m of code.matchAll(DYNAMIC)) found.push({ at: m.index, kind: 'import', spec: m[1], typeOnly: false, dynamic: true });
  return found;
}

/**
 * Every violation of the tree at `root` against `table`: `file:line: rule: the line`, sorted.
 *
 * @param root - a tree with src/ (and package.json for its entry points)
 * @param table - the layers table (default: this repository's scripts/layers.json)
 */
export function checkLayers(root = repoRoot, table = readTable()) {
  const problems = [];
  const entries = entryPoints(root);
  const known = new Map((table.known ?? []).map((k) => [`${k.file} -> ${k.imports}`, { ...k, seen: false }]));
  for (const abs of walk(join(root, 'src'))) {
    const rel = posix(relative(root, abs));
    const raw = readFileSync(abs, 'utf8');
    const lines = raw.split('\n');
    const layer = layerOf(table, rel);
    if (layer === undefined) {
      problems.push(`${rel}:1: lies in no layer of scripts/layers.json (give its directory a row there)`);
      continue;
    }
    const forbidden = new Set(table.layers[layer].forbidden);
    const code = withoutComments(raw);
    for (const { at, kind, spec } of importsIn(code)) {
      if (!spec.startsWith('.')) continue;
      const target = posix(relative(root, resolve(dirname(abs), spec))).replace(/\.js$/, '.ts');
      const to = layerOf(table, target);
      if (to === undefined || to === layer || !forbidden.has(to)) continue;
      if (kind === 'export' && entries.has(rel)) continue; // an entry point re-exports what the package offers
      const k = known.get(`${rel} -> ${target}`);
      if (k) {
        k.seen = true;
        continue;
      }
      const line = lineAt(code, at + code.slice(at).search(/\S/));
      problems.push(`${rel}:${line}: ${layer} may not import ${to} (${target}): ${lines[line - 1].trim()}`);
    }
    if (table.layers[layer].pure) {
      const codeLines = code.split('\n');
      codeLines.forEach((line, i) => {
        for (const [re, what] of PURITY)
          if (re.test(line)) problems.push(`${rel}:${i + 1}: ${layer} is pure but ${what}: ${lines[i].trim()}`);
      });
    }
  }
  for (const k of known.values()) {
    if (!k.seen) problems.push(`scripts/layers.json: the known violation ${k.file} -> ${k.imports} is gone: remove it from "known"`);
  }
  return problems.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const problems = checkLayers(process.argv[2] ? resolve(process.argv[2]) : repoRoot);
  if (problems.length) {
    console.error(`layer check failed (scripts/layers.json):\n${problems.join('\n')}`);
    process.exit(1);
  }
  const table = readTable();
  console.log(`layer check: ok (${table.order}; ${(table.known ?? []).length} known violation(s) allowed)`);
}
