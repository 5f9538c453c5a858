#!/usr/bin/env node
// The `xrate` command: runs the compiled CLI (built by `npm ci` / `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write('xrate: the CLI is not built yet: run `npm run build` (npm ci does it for you)\n');
  process.exit(2);
}
const { run } = await import(main.href);
process.exitCode = await run(process.argv.slice(2));
