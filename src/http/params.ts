/**
 * Query-string parameters of the rate service: names are matched case-insensitively (as the
 * interface's clients expect), booleans accept `true`/`false`/`1`/`0` in any case, times every
 * ISO 8601 form of the wire notes ({@link parseTime}), and every bad value is a 400 naming the
 * parameter.
 *
 * @module
 */
import { parseTime } from '../core/time.js';
import { badParam } from './errors.js';

/** Shortens an echoed value so an error message stays small. */
export function shown(v: string): string {
  return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...` : v);
}

/** The query string of one request, with lower-cased names. */
export class Query {
  private readonly values = new Map<string, string>();
  /** The values of the list parameters, in the order given. */
  private readonly lists = new Map<string, string[]>();

  /**
   * @param raw - fastify's parsed query (values are strings or arrays of strings)
   * @param listNames - parameters that may be given more than once (read with {@link list}); any
   *   other given twice with different values is a 400
   */
  constructor(raw: unknown, listNames?: ReadonlySet<string>) {
    if (raw === null || typeof raw !== 'object') return;
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      const name = k.toLowerCase();
      const list = (Array.isArray(v) ? v : [v]).map((x) => String(x));
      if (listNames?.has(name)) {
        const all = this.lists.get(name) ?? [];
        all.push(...list);
        this.lists.set(name, all);
        continue;
      }
      const first = list[0];
      const prev = this.values.get(name);
      if (list.some((x) => x !== first) || (prev !== undefined && prev !== first))
        throw badParam(name, 'given more than once with different values');
      if (first !== undefined) this.values.set(name, first);
    }
  }

  /**
   * A list parameter (declared so to the constructor): every value given, each split at `,` and
   * `;`, trimmed, empty items dropped; undefined when absent.
   */
  list(name: string): string[] | undefined {
    const all = this.lists.get(name);
    return all === undefined ? undefined : all.flatMap((v) => splitList(v));
  }

  /** Whether the parameter is present (even empty). */
  has(name: string): boolean {
    return this.values.has(name) || this.lists.has(name);
  }

  /** The raw text, or undefined when absent. */
  str(name: string): string | undefined {
    return this.values.get(name);
  }

  /** The trimmed text, undefined when absent or empty. */
  text(name: string): string | undefined {
    const v = this.values.get(name)?.trim();
    return v === undefined || v === '' ? undefined : v;
  }

  /** A boolean: true/false/1/0 in any case; absent or empty gives `def`. */
  bool(name: string, def: boolean): boolean {
    const v = this.text(name);
    if (v === undefined) return def;
    const l = v.toLowerCase();
    if (l === 'true' || l === '1') return true;
    if (l === 'false' || l === '0') return false;
    throw badParam(name, `${shown(v)} is not a boolean (true, false, 1 or 0)`);
  }

  /** A time in µs, undefined when absent or empty. */
  time(name: string): number | undefined {
    const v = this.text(name);
    if (v === undefined) return undefined;
    const t = parseTime(v);
    if (t === undefined)
      throw badParam(name, `${shown(v)} is not an ISO 8601 time (e.g. 2024-03-01T05:00:00Z, 2024-03-01T05:00:00.1234567Z or 2024-03-01)`);
    return t;
  }

  /** An integer in [min, max]; absent or empty gives `def`. */
  int(name: string, min: number, max: number, def: number): number {
    const v = this.text(name);
    if (v === undefined) return def;
    if (!/^[+]?\d{1,12}$/.test(v)) throw badParam(name, `${shown(v)} is not an integer in ${min}..${max}`);
    const n = Number(v);
    if (n < min || n > max) throw badParam(name, `${n} is out of range ${min}..${max}`);
    return n;
  }
}

/**
 * The parameters of `path` when it matches the route `pattern` (fastify syntax, `:name` segments;
 * static segments compared ignoring case, as the service routes), else undefined.
 *
 * @example
 * ```ts
 * matchPath('/v1/symbols/:exchange_id/active', '/v1/symbols/BINANCE/active'); // { exchange_id: 'BINANCE' }
 * ```
 */
export function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const parts = path.split('/');
  if (want.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) {
      if (parts[i] === '') return undefined;
      params[want[i].slice(1)] = decodeURIComponent(parts[i]);
    } else if (want[i].toLowerCase() !== parts[i].toLowerCase()) return undefined;
  }
  return params;
}

/** Splits a `,`- or `;`-separated list, trimming items and dropping empty ones. */
export function splitList(v: string | undefined): string[] {
  if (v === undefined) return [];
  return v
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
