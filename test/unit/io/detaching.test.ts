/**
 * V8's array-buffer-detaching protector settled as a thread's buffer-moving modules load
 * (src/io/detaching.ts): a function optimised on typed arrays stays optimised when the thread then
 * moves a buffer by `postMessage`, where without it the move throws the function's optimised code
 * away. Checked in a child process run with `--allow-natives-syntax`, which can ask V8 whether a
 * function is optimised (`%GetOptimizationStatus`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'xrate-detaching-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const root = fileURLToPath(new URL('../../../', import.meta.url));
const src = (m: string): string => pathToFileURL(join(root, 'src', 'io', m)).href;

/**
 * The child (TypeScript loaded by tsx): loads module argv[2] (and calls its `settleDetaching` when argv[3] says so), optimises
 * a sum over a Float64Array, moves a buffer of its own to a MessagePort, and prints whether the
 * sum was optimised before and after the move.
 */
const CHILD = join(dir, 'child.mjs');
writeFileSync(
  CHILD,
  `const m = await import(process.argv[2]);
if (process.argv[3] === 'call') m.settleDetaching();
function sum(a) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]; return s; }
const a = new Float64Array(64).fill(1);
%PrepareFunctionForOptimization(sum); sum(a); sum(a); %OptimizeFunctionOnNextCall(sum); sum(a);
const OPTIMIZED = 16;
const before = (%GetOptimizationStatus(sum) & OPTIMIZED) !== 0;
const b = new ArrayBuffer(8);
const { port1 } = new MessageChannel();
port1.postMessage(b, [b]);
port1.close();
const after = (%GetOptimizationStatus(sum) & OPTIMIZED) !== 0;
console.log(JSON.stringify({ before, after, moved: b.byteLength === 0 }));
`,
);

/** What the child printed, loading `module` (calling its settleDetaching when `call`). */
function optimisedAcrossMove(module: string, call: boolean): { before: boolean; after: boolean; moved: boolean } {
  const args = ['--allow-natives-syntax', '--import', 'tsx', CHILD, src(module), call ? 'call' : 'load'];
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string);
}

describe('the detaching protector settled before code is optimised', () => {
  it('keeps a function optimised on typed arrays optimised when the thread moves a buffer', () => {
    expect(optimisedAcrossMove('detaching.ts', true)).toEqual({ before: true, after: true, moved: true });
  });

  it('is what keeps it: without it, the first buffer moved throws the optimised code away', () => {
    expect(optimisedAcrossMove('detaching.ts', false)).toEqual({ before: true, after: false, moved: true });
  });

  it.each(['writerThread.ts', 'batchSource.ts'])('is settled as %s, a module of the engine thread that moves buffers, loads', (m) => {
    expect(optimisedAcrossMove(m, false)).toEqual({ before: true, after: true, moved: true });
  });
});
