/**
 * A text stream (src/io/textStream.ts) gives a file's text exactly, plain or gzipped, from any
 * line on, in strings of about 64 KiB of text at most (V8 makes a string of 128 KiB or more in its
 * large-object space), whatever characters straddle the windows it decodes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openTextStream } from '../../../src/io/textStream.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** About 600 KiB of lines holding one-, two-, three- and four-byte characters, so some straddle every 64 KiB. */
function text(): string {
  const lines: string[] = [];
  const chars = ['a', 'é', '€', '😀', 'ß', 'z'];
  for (let i = 0; lines.join('').length < 600_000; i++) {
    let l = `{"line":${i},"s":"`;
    for (let k = 0; k < (i % 37) + 5; k++) l += chars[(i + k) % chars.length];
    lines.push(`${l}"}\n`);
  }
  return lines.join('');
}

async function read(path: string, gzip: boolean, skip = 0): Promise<string[]> {
  const out: string[] = [];
  for await (const s of openTextStream(path, gzip).chunks(skip)) out.push(s);
  return out;
}

describe('a text stream', () => {
  const t = text();
  const plain = join(dir, 'log.ndjson');
  const gz = join(dir, 'log.ndjson.gz');
  writeFileSync(plain, t);
  writeFileSync(gz, gzipSync(Buffer.from(t)));

  it('gives the text exactly, in strings of about 64 KiB at most, plain or gzipped', async () => {
    for (const [path, gzip] of [
      [plain, false],
      [gz, true],
    ] as const) {
      const parts = await read(path, gzip);
      expect(parts.join('')).toBe(t);
      expect(parts.length).toBeGreaterThan(9);
      // A window's text, and the end of a character the window before began.
      for (const p of parts) expect(Buffer.byteLength(p)).toBeLessThanOrEqual((1 << 16) + 3);
    }
  });

  it('gives the text after the lines it skips', async () => {
    const lines = t.split('\n');
    for (const skip of [0, 1, 2_000, lines.length - 2]) {
      const parts = await read(plain, false, skip);
      expect(parts.join('')).toBe(lines.slice(skip).join('\n'));
    }
  });
});
