/**
 * The rights an API key may be granted: one per family of routes (docs/service.md, the route
 * table and "Keys"). The one list of them: the routes, `xrate keys create --rights`, its help and
 * its error messages all read it.
 *
 * @module
 */

/** Resources a key may be granted, in the order they are listed. */
export const RIGHTS = ['rate', 'rates', 'periods', 'history', 'explain', 'metrics', 'symbols'] as const;
/** One right. */
export type Right = (typeof RIGHTS)[number];
