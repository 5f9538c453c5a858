import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { generateLog, type GenOptions } from '../../../scripts/gen-log.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

interface FileMeta {
  path: string;
  kind: 'real' | 'generated';
  licence: string;
  sha256: string;
  bytes: number;
  events: number;
  /** Lines before the events (a CSV header). */
  header_lines?: number;
  sha256_uncompressed?: string;
  generator?: { options: GenOptions };
  source: unknown;
}

const meta = JSON.parse(readFileSync(join(ROOT, 'fixtures/metadata.json'), 'utf8')) as { files: FileMeta[] };

describe('fixtures/metadata.json', () => {
  it('lists the fixtures', () => {
    expect(meta.files.map((f) => f.path)).toEqual(
      expect.arrayContaining(['fixtures/binance-btcusdt-2021-01-08.ndjson', 'fixtures/demo/demo.ndjson.gz']),
    );
    const total = meta.files.reduce((s, f) => s + f.bytes, 0);
    expect(total).toBeLessThan(4 * 1024 * 1024);
  });

  it.each(meta.files.map((f) => [f.path, f] as const))('%s matches its sha256, size and event count', (_p, f) => {
    const p = join(ROOT, f.path);
    expect(existsSync(p)).toBe(true);
    const buf = readFileSync(p);
    expect(sha(buf)).toBe(f.sha256);
    expect(statSync(p).size).toBe(f.bytes);
    const text = (f.path.endsWith('.gz') ? gunzipSync(buf) : buf).toString('utf8');
    expect(text.split('\n').filter((l) => l.length > 0).length).toBe(f.events + (f.header_lines ?? 0));
    if (f.sha256_uncompressed !== undefined) expect(sha(text)).toBe(f.sha256_uncompressed);
    expect(f.licence).toBeTruthy();
    expect(f.source).toBeTruthy();
  });

  it('the real Binance fixture names its licence and origin', () => {
    const f = meta.files.find((x) => x.kind === 'real')!;
    expect(f.licence).toBe('LGPL-3.0');
    expect(JSON.stringify(f)).toContain('nautilus_trader');
    expect(JSON.stringify(f)).toContain('c6e89755193cd6ac6df7f05174df911bb31a324b');
  });

  it('the demo log is reproduced by the generator with its recorded options', () => {
    const f = meta.files.find((x) => x.kind === 'generated')!;
    const text = `${[...generateLog(f.generator!.options)].join('\n')}\n`;
    expect(sha(text)).toBe(f.sha256_uncompressed);
  });
});
