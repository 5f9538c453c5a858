/**
 * The package's version, read from its own `package.json` (the one source of the version: the
 * `xrate --version` output, `VERSION` of the library and the published package all agree).
 *
 * @module
 */
import { readFileSync } from 'node:fs';

/** The `version` field of xrate's package.json (this module sits one folder below it, in src/ or dist/). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
