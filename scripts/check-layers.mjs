#!/usr/bin/env node
// Purity check (docs/architecture.md): nothing under src/core performs I/O, reads the wall clock
// or imports the outer layers. Exits 1 with the offending file:line for each violation.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const coreDir = join(root, 'src', 'core');
const rules = [
  [
    /from\s+['"](node:)?(fs|fs\/promises|http|https|http2|net|dgram|child_process|worker_threads|cluster|os|readline|zlib)['"]/,
    'imports a Node I/O module',
  ],
  [/require\(\s*['"](node:)?(fs|http|https|net|child_process)['"]\s*\)/, 'requires a Node I/O module'],
  [/from\s+['"](\.\.\/)+(io|replay|service|cli)(\/|['"])/, 'imports an outer layer (io, replay, service, cli)'],
  [/from\s+['"]better-sqlite3['"]|from\s+['"]fast-csv['"]/, 'imports an I/O package'],
  [/\bDate\.now\s*\(|new\s+Date\s*\(\s*\)|performance\.now\s*\(|process\.hrtime|process\.env/, 'reads the wall clock or the environment'],
  [/\bMath\.random\s*\(/, 'uses Math.random (non-deterministic)'],
];

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

export function checkPurity(dir = coreDir) {
  const problems = [];
  for (const file of walk(dir)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '');
      if (/^\s*\*/.test(line)) return; // TSDoc lines
      for (const [re, what] of rules) if (re.test(code)) problems.push(`${relative(root, file)}:${i + 1}: ${what}: ${line.trim()}`);
    });
  }
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const problems = checkPurity(process.argv[2] ?? coreDir);
  if (problems.length) {
    console.error(`src/core purity check failed:\n${problems.join('\n')}`);
    process.exit(1);
  }
  console.log('src/core purity check: ok');
}
