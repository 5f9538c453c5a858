/**
 * The README's "As a library" example works and prints what the README says: its ```ts block is
 * run as it stands (importing `xrate` as the package, the built dist/) and its output must be the
 * ```text block that follows it, byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from './helpers.js';

/** The section of the README under `heading`, up to the next `## ` heading. */
function section(readme: string, heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + heading.length + 2);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The body of the first fenced block of `lang` in `text`. */
function block(text: string, lang: string): string {
  const m = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(text);
  expect(m, `a \`\`\`${lang} block`).not.toBeNull();
  return m![1];
}

// Under the package (out/ is ignored by git), so that `from 'xrate'` resolves to the package itself.
mkdirSync(join(ROOT, 'out'), { recursive: true });
const dir = mkdtempSync(join(ROOT, 'out', 'readme-library-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => ensureBuilt(), 120_000);

describe('README, "As a library"', () => {
  it('the example runs as written and prints the lines the README shows', () => {
    const text = section(readFileSync(join(ROOT, 'README.md'), 'utf8'), '## As a library');
    const code = block(text, 'ts');
    const printed = block(text, 'text');
    expect(code).toContain("from 'xrate'");
    const file = join(dir, 'example.ts');
    writeFileSync(file, code);
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(printed);
    // The example gives a rate from hand-written events, and says why another pair has none.
    expect(printed).toMatch(/^\S+ BTC\/USD 62000\n/);
    expect(printed).toContain('not_eligible 2024-03-01T04:00:00.0000000Z');
  });
});
