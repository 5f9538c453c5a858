/**
 * Custom time formats of CSV output (`csv_set_timeformat`): .NET-style custom formats and `unix`.
 *
 * @module
 */
import { badParam } from '../errors.js';
import { shown } from '../params.js';

/** The default CSV time format (7 fractional digits, as in JSON). */
export const DEFAULT_TIME_FORMAT = 'yyyy-MM-ddTHH:mm:ss.fffffffZ';

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

type Token = { lit: string } | { spec: string; n: number };

function tokenize(fmt: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i];
    if (c === "'" || c === '"') {
      const j = fmt.indexOf(c, i + 1);
      if (j < 0) throw badParam('csv_set_timeformat', `unterminated quoted literal in ${shown(fmt)}`);
      out.push({ lit: fmt.slice(i + 1, j) });
      i = j + 1;
    } else if (c === '\\') {
      if (i + 1 >= fmt.length) throw badParam('csv_set_timeformat', `a trailing "\\" in ${shown(fmt)}`);
      out.push({ lit: fmt[i + 1] });
      i += 2;
    } else if (c === '%') {
      i++;
    } else if ('yMdHhmsfFtKz'.includes(c)) {
      let j = i;
      while (j < fmt.length && fmt[j] === c) j++;
      const n = j - i;
      if ((c === 'f' || c === 'F') && n > 7) throw badParam('csv_set_timeformat', `more than 7 "${c}" in ${shown(fmt)}`);
      out.push({ spec: c, n });
      i = j;
    } else {
      out.push({ lit: c });
      i++;
    }
  }
  return out;
}

/** Checks a custom time format (400 on `csv_set_timeformat` naming what is wrong). */
export function checkTimeFormat(fmt: string): void {
  tokenize(fmt);
}

const formatCache = new Map<string, Token[]>();

function pad(v: number, n: number): string {
  return String(v).padStart(n, '0');
}

/**
 * Formats µs since the epoch (UTC) with a .NET-style custom format: `yyyy yy y MM M MMM MMMM dd d
 * ddd dddd HH H hh h mm m ss s f..fffffff F..FFFFFFF tt t K z zz zzz`, quoted literals, `\`
 * escapes; other characters are copied. With `unix`: seconds since the epoch (fraction only when
 * not zero, with `decMark`).
 *
 * @example
 * ```ts
 * formatTimeCustom(1709272451206274, 'yyyy-MM-dd HH:mm:ss.fff', '.'); // '2024-03-01 05:54:11.206'
 * formatTimeCustom(1709272451206274, 'unix', ','); // '1709272451,206274'
 * ```
 */
export function formatTimeCustom(us: number, fmt: string, decMark: string): string {
  if (fmt === 'unix') {
    const s = Math.floor(us / 1e6);
    const f = us - s * 1e6;
    return f === 0 ? String(s) : `${s}${decMark}${pad(f, 6).replace(/0+$/, '')}`;
  }
  let tokens = formatCache.get(fmt);
  if (!tokens) {
    tokens = tokenize(fmt);
    if (formatCache.size < 256) formatCache.set(fmt, tokens);
  }
  const ms = Math.floor(us / 1000);
  const d = new Date(ms);
  const frac7 = (us - Math.floor(us / 1e6) * 1e6) * 10; // 100 ns units
  let out = '';
  for (const t of tokens) {
    if ('lit' in t) {
      out += t.lit;
      continue;
    }
    const { spec, n } = t;
    switch (spec) {
      case 'y': {
        const y = d.getUTCFullYear();
        out += n === 1 ? String(y % 100) : n === 2 ? pad(y % 100, 2) : pad(y, n);
        break;
      }
      case 'M': {
        const m = d.getUTCMonth();
        out += n === 1 ? String(m + 1) : n === 2 ? pad(m + 1, 2) : n === 3 ? MONTH_NAMES[m].slice(0, 3) : MONTH_NAMES[m];
        break;
      }
      case 'd': {
        const v = d.getUTCDate();
        const w = d.getUTCDay();
        out += n === 1 ? String(v) : n === 2 ? pad(v, 2) : n === 3 ? DAY_NAMES[w].slice(0, 3) : DAY_NAMES[w];
        break;
      }
      case 'H':
        out += n === 1 ? String(d.getUTCHours()) : pad(d.getUTCHours(), 2);
        break;
      case 'h': {
        const h = d.getUTCHours() % 12 || 12;
        out += n === 1 ? String(h) : pad(h, 2);
        break;
      }
      case 'm':
        out += n === 1 ? String(d.getUTCMinutes()) : pad(d.getUTCMinutes(), 2);
        break;
      case 's':
        out += n === 1 ? String(d.getUTCSeconds()) : pad(d.getUTCSeconds(), 2);
        break;
      case 'f':
        out += pad(frac7, 7).slice(0, n);
        break;
      case 'F': {
        const s = pad(frac7, 7).slice(0, n).replace(/0+$/, '');
        if (s === '' && out.endsWith('.')) out = out.slice(0, -1);
        out += s;
        break;
      }
      case 't': {
        const am = d.getUTCHours() < 12;
        out += n === 1 ? (am ? 'A' : 'P') : am ? 'AM' : 'PM';
        break;
      }
      case 'K':
        out += 'Z';
        break;
      case 'z':
        out += n === 1 ? '+0' : n === 2 ? '+00' : '+00:00';
        break;
    }
  }
  return out;
}
