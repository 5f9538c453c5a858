/**
 * The package as a consumer gets it: `npm pack` of the repository, installed with npm from the
 * registry into a fresh project on this Node. The install prints no engine warning and builds no
 * native addon but better-sqlite3's (bullmq, whose msgpackr brings msgpackr-extract, is an
 * optional peer dependency); the published declarations type-check under `strict` with
 * `skipLibCheck: false`; the README's library example (the block after `<!-- library-example -->`)
 * compiles and runs; `require('xrate')` says how to load an ES module; the installed `xrate`
 * command runs, and says what to install for the queue.
 *
 * The install compiles better-sqlite3 (1.5 min of CPU, a few minutes on a busy machine); packages come from npm's
 * cache when the repository's own install put them there (`--prefer-offline`).
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULLMQ_RANGE } from '../../src/distributed/loadQueue.js';
import { VERSION } from '../../src/version.js';
import { ensureBuilt, ROOT } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-package-'));
const APP = join(dir, 'app');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** The environment of a consumer's commands: this one without what `npm run` sets for the repository. */
const ENV: NodeJS.ProcessEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^npm_(package_|lifecycle_|command$|config_local_prefix$)/.test(k) && k !== 'INIT_CWD' && !k.startsWith('VITEST'),
    ),
  ),
  // node-gyp compiles with every core (better-sqlite3 has two large units).
  JOBS: 'max',
};

function run(cmd: string, args: string[], cwd: string, timeout = 120_000): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env: ENV, encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  expect(r.error, what).toBeUndefined();
  expect(r.status, `${what}:\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

/** The `ts` block after the `<!-- library-example -->` line of README.md. */
function readmeExample(): string {
  const m = /^<!-- library-example -->\n```ts\n([\s\S]*?)^```$/m.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  if (!m) throw new Error('README.md has no ```ts block after a <!-- library-example --> line');
  return m[1];
}

/** Files under `root` (recursively) whose name ends with `suffix`, relative to `root`. */
function filesEnding(root: string, suffix: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith(suffix));
}

let packed: string[];
let install: string;

beforeAll(() => {
  ensureBuilt();
  // dist/ is built: pack without running `prepare` again.
  const p = JSON.parse(ok(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], ROOT), 'npm pack')) as {
    filename: string;
    files: { path: string }[];
  }[];
  packed = p[0].files.map((f) => f.path);
  mkdirSync(APP);
  writeFileSync(join(APP, 'package.json'), `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' })}\n`);
  const r = run(
    'npm',
    [
      'install',
      join(dir, p[0].filename),
      `@types/node@${pkg.devDependencies['@types/node']}`,
      '--prefer-offline',
      '--foreground-scripts',
      '--no-audit',
      '--no-fund',
    ],
    APP,
    900_000,
  );
  install = `${r.stdout}\n${r.stderr}`;
  ok(r, 'npm install of the tarball');
}, 1_000_000);

describe('the packed package', () => {
  it('ships the command, the build, the demo log and the page, and no tests or sources', () => {
    for (const f of [
      'bin/xrate',
      'bin/xrate.js',
      'cjs/esm-only.cjs',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/main.js',
      'fixtures/demo/demo.ndjson.gz',
      'ui/index.html',
    ]) {
      expect(packed, f).toContain(f);
    }
    expect(packed.filter((f) => /^(src|test|bench|scripts|vendor|docs)\//.test(f))).toEqual([]);
  });

  it('installs on this Node with no engine warning, and builds no native addon but better-sqlite3', () => {
    expect(install).not.toMatch(/EBADENGINE/);
    const nm = join(APP, 'node_modules');
    // The install scripts npm ran (--foreground-scripts prints each as "> name@version install").
    const scripts = [...install.matchAll(/^> (\S+)@\S+ (?:preinstall|install|postinstall)$/gm)].map((m) => m[1]);
    expect(scripts).toEqual(['better-sqlite3']);
    expect(existsSync(join(nm, 'msgpackr-extract'))).toBe(false);
    expect(existsSync(join(nm, 'bullmq'))).toBe(false);
    const addons = filesEnding(nm, '.node');
    expect(addons).toContain(join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node'));
    expect(addons.filter((f) => !f.startsWith(join('better-sqlite3', 'build')))).toEqual([]);
  });

  it('its declarations type-check under strict with skipLibCheck false, and the README example compiles and runs', () => {
    writeFileSync(join(APP, 'example.ts'), readmeExample());
    // Every name of the three entry points, so that every published declaration is read.
    writeFileSync(
      join(APP, 'entries.ts'),
      [
        "import * as core from 'xrate';",
        "import * as replay from 'xrate/replay';",
        "import * as service from 'xrate/service';",
        'const names: number[] = [core, replay, service].map((m) => Object.keys(m).length);',
        "console.log(core.VERSION, names.join(' '));",
        '',
      ].join('\n'),
    );
    const tsconfig = {
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        types: ['node'],
        outDir: 'out',
      },
      files: ['example.ts', 'entries.ts'],
    };
    writeFileSync(join(APP, 'tsconfig.json'), JSON.stringify(tsconfig));
    ok(run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], APP), 'tsc');
    const example = run(process.execPath, [join('out', 'example.js')], APP);
    ok(example, 'the README example');
    expect(example.stderr).toBe('');
    const entries = ok(run(process.execPath, [join('out', 'entries.js')], APP), 'the three entry points')
      .trim()
      .split(' ');
    expect(entries[0]).toBe(VERSION);
    expect(entries.slice(1).every((n) => Number(n) > 10)).toBe(true);
  });

  it("require() of each entry point throws an error that shows await import('xrate'); import() from CommonJS loads it", () => {
    const script = `
      const out = ['xrate', 'xrate/replay', 'xrate/service'].map((s) => {
        try { require(s); return 'loaded'; } catch (e) { return e.code + ': ' + e.message; }
      });
      import('xrate').then((m) => console.log(JSON.stringify([...out, typeof m.createEngine])));`;
    const [core, replay, service, imported] = JSON.parse(
      ok(run(process.execPath, ['--input-type=commonjs', '-e', script], APP), 'require'),
    ) as string[];
    expect(core).toMatch(/^ERR_REQUIRE_ESM: xrate is an ES module package: it cannot be loaded with require\(\)/);
    expect(core).toContain("await import('xrate')");
    expect(replay).toBe(core);
    expect(service).toBe(core);
    expect(imported).toBe('function');
  });

  it('npx xrate runs the installed command; the queue says to install bullmq, its optional peer', () => {
    expect(ok(run('npx', ['--no-install', 'xrate', '--version'], APP), 'npx xrate --version')).toBe(`${VERSION}\n`);
    expect(BULLMQ_RANGE).toBe(pkg.peerDependencies.bullmq);
    const w = run('npx', ['--no-install', 'xrate', 'worker', '--queue', 'redis://127.0.0.1:9'], APP);
    expect(w.status).toBe(1);
    expect(w.stderr).toContain(`needs the bullmq package, an optional peer dependency of xrate: npm install bullmq@${BULLMQ_RANGE}`);
  });
});
