/**
 * The defaults the commands share, apart from the modules that use them: `xrate keys` names the
 * default database without loading the service it is the default of.
 *
 * @module
 */

/** Default database of `serve` and `keys` (what `npm start` writes). */
export const DEFAULT_DB = 'out/xrate.sqlite';
