/**
 * docs/architecture.md's module map is the one scripts/architecture.ts generates from the code: a
 * module added, removed, grown or re-described without `npm run docs:architecture` fails here.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BEGIN, END, firstSentence, moduleMap, withMap } from '../../../scripts/architecture.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('scripts/architecture.ts', () => {
  it('docs/architecture.md holds the module map of the code as it is (else: npm run docs:architecture)', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const map = moduleMap(ROOT);
    const a = doc.indexOf(BEGIN);
    const b = doc.indexOf(END);
    expect(a).toBeGreaterThan(-1);
    expect(doc.slice(a, b + END.length)).toBe(map);
    expect(withMap(doc, map)).toBe(doc);
  });

  it('takes the first sentence of the module comment, past e.g. and links', () => {
    const text = '/**\n * Reads logs, e.g. NDJSON, through {@link openSource}. More here.\n *\n * @module\n */\nexport {};\n';
    expect(firstSentence(text)).toBe('Reads logs, e.g. NDJSON, through `openSource`.');
    expect(firstSentence('/** Not a module comment. */\nexport {};\n')).toBe('');
    expect(firstSentence('/**\n * No period at all\n * @module\n */\n')).toBe('No period at all');
  });

  it('refuses a page without the markers', () => {
    expect(() => withMap('# Architecture\n', `${BEGIN}\n${END}`)).toThrow(/markers/);
  });
});
