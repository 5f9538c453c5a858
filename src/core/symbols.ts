/**
 * Symbol identifiers: what a `symbol_id` says about its market, and the `symbol_type` values.
 *
 * docs/methodology.md section 1: a symbol with no `symbol` event may still be read from its
 * symbol_id when it follows the SPOT pattern; the other patterns of the interface description
 * are parsed to their type and never used for rates (rule 3: only SPOT markets count).
 *
 * @module
 */

import type { SymbolInfo, SymbolType } from './types.js';

/**
 * Every {@link SymbolType}, in the order of the interface description.
 *
 * Why: docs/methodology.md section 1 (`symbol` events carry a `symbol_type`; only `SPOT` is used for
 * rates by rule 3) — readers, docs and tests enumerate the accepted values from here.
 *
 * @example
 * ```ts
 * SYMBOL_TYPES.includes('SPOT'); // true
 * ```
 */
export const SYMBOL_TYPES: readonly SymbolType[] = Object.freeze([
  'SPOT',
  'FUTURES',
  'OPTION',
  'PERPETUAL',
  'DPERPETUAL',
  'INDEX',
  'CREDIT',
  'CONTRACT',
  'OPTION_COMBINATION',
  'FUTURES_COMBINATION',
] as const);

/**
 * Map a `symbol_type` field value to a {@link SymbolType}, case-insensitively; surrounding
 * whitespace is ignored. Anything else gives `undefined`.
 *
 * Why: docs/methodology.md section 1 (`symbol` event field `symbol_type`; rule 3 keeps only SPOT).
 * Input may come from CSV or SQLite with any casing.
 *
 * @param s - the field value
 * @returns the symbol type, or `undefined`
 *
 * @example
 * ```ts
 * symbolTypeFromText('spot');      // 'SPOT'
 * symbolTypeFromText('PERPETUAL'); // 'PERPETUAL'
 * symbolTypeFromText('SWAP');      // undefined
 * ```
 */
export function symbolTypeFromText(s: string): SymbolType | undefined {
  const t = exactSymbolType(s);
  if (t !== undefined || typeof s !== 'string') return t;
  return exactSymbolType(s.trim().toUpperCase());
}

function exactSymbolType(s: string): SymbolType | undefined {
  switch (s) {
    case 'SPOT':
    case 'FUTURES':
    case 'OPTION':
    case 'PERPETUAL':
    case 'DPERPETUAL':
    case 'INDEX':
    case 'CREDIT':
    case 'CONTRACT':
    case 'OPTION_COMBINATION':
    case 'FUTURES_COMBINATION':
      return s;
    default:
      return undefined;
  }
}

/** The type token of a symbol_id part, or undefined. */
function tokenType(part: string): SymbolType | undefined {
  switch (part) {
    case 'SPOT':
      return 'SPOT';
    case 'FTS':
      return 'FUTURES';
    case 'OPT':
      return 'OPTION';
    case 'PERP':
      return 'PERPETUAL';
    case 'DPERP':
      return 'DPERPETUAL';
    case 'IDX':
      return 'INDEX';
    case 'CRE':
      return 'CREDIT';
    case 'COT':
      return 'CONTRACT';
    case 'OPTCMB':
      return 'OPTION_COMBINATION';
    case 'FTSCMB':
      return 'FUTURES_COMBINATION';
    default:
      return undefined;
  }
}

/** Number of parts after the type token for the fixed-arity patterns; 0 = variable. */
function arity(t: SymbolType): number {
  switch (t) {
    case 'SPOT':
    case 'PERPETUAL':
    case 'DPERPETUAL':
      return 2;
    case 'FUTURES':
      return 3;
    case 'OPTION':
      return 5;
    case 'CREDIT':
      return 1;
    default:
      return 0;
  }
}

function isSixDigits(s: string): boolean {
  if (s.length !== 6) return false;
  for (let i = 0; i < 6; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * Parse a `symbol_id` by the patterns of the interface description.
 *
 * | type | pattern |
 * |---|---|
 * | SPOT | `{exchange_id}_SPOT_{base}_{quote}` |
 * | FUTURES | `{exchange_id}_FTS_{base}_{quote}_{YYMMDD}` → `extra.delivery` |
 * | OPTION | `{exchange_id}_OPT_{base}_{quote}_{YYMMDD}_{strike}_{C\|P}` → `extra.expiry`, `extra.strike`, `extra.side` |
 * | PERPETUAL | `{exchange_id}_PERP_{base}_{quote}` |
 * | DPERPETUAL | `{exchange_id}_DPERP_{base}_{quote}` |
 * | INDEX | `{exchange_id}_IDX_{index_id}` → `extra.indexId` (may contain `_`) |
 * | CREDIT | `{exchange_id}_CRE_{base}` |
 * | CONTRACT | `{exchange_id}_COT_{contract_id}` → `extra.contractId` (may contain `_`) |
 * | OPTION_COMBINATION | `{exchange_id}_OPTCMB_{rest}` → `extra.legs` |
 * | FUTURES_COMBINATION | `{exchange_id}_FTSCMB_{rest}` → `extra.legs` |
 *
 * The type token is the first part (splitting on `_`, from the second part on) that is one of
 * SPOT, FTS, OPT, PERP, DPERP, IDX, CRE, COT, OPTCMB, FTSCMB; everything before it is the
 * exchange id (which may contain `_`). Duplicates: for the fixed-arity patterns (SPOT, FTS,
 * OPT, PERP, DPERP, CRE) whatever follows the expected parts after one more `_` is the
 * `duplicateSuffix` (`BITSTAMP_SPOT_BTC_USD_2` → `"2"`, a trailing bare `_` → `""`). For the
 * variable patterns only a trailing bare `_` is recognised as a duplicate (suffix `""`).
 * Every part must be non-empty, the FTS/OPT date 6 digits, the OPT side `C` or `P`; anything
 * else gives `undefined`. Never throws.
 *
 * Why: docs/methodology.md section 1 (a symbol with no `symbol` event is read from its SPOT
 * symbol_id; other patterns are parsed to their type and never used for rates, rule 3).
 *
 * @param symbolId - the symbol identifier
 * @returns what the identifier says, or `undefined` if it follows no pattern
 *
 * @example
 * ```ts
 * parseSymbolId('BITSTAMP_SPOT_BTC_USD');
 * // { symbolId: 'BITSTAMP_SPOT_BTC_USD', exchangeId: 'BITSTAMP', symbolType: 'SPOT',
 * //   assetIdBase: 'BTC', assetIdQuote: 'USD' }
 * parseSymbolId('DERIBIT_OPT_BTC_USD_240329_60000_C')?.extra;
 * // { expiry: '240329', strike: '60000', side: 'C' }
 * parseSymbolId('BITSTAMP_SPOT_BTC');  // undefined
 * ```
 */
export function parseSymbolId(symbolId: string): SymbolInfo | undefined {
  if (typeof symbolId !== 'string' || symbolId.length === 0) return undefined;
  const parts = symbolId.split('_');
  const n = parts.length;
  let ti = 1;
  let symbolType: SymbolType | undefined;
  for (; ti < n; ti++) {
    symbolType = tokenType(parts[ti]);
    if (symbolType !== undefined) break;
  }
  if (symbolType === undefined) return undefined;
  for (let i = 0; i < ti; i++) if (parts[i].length === 0) return undefined;
  const exchangeId = ti === 1 ? parts[0] : parts.slice(0, ti).join('_');
  const first = ti + 1; // index of the first part after the type token
  const k = arity(symbolType);

  if (k > 0) {
    if (n - first < k) return undefined;
    for (let i = first; i < first + k; i++) if (parts[i].length === 0) return undefined;
    const hasDup = n > first + k;
    const duplicateSuffix = hasDup ? parts.slice(first + k).join('_') : undefined;
    const base = parts[first];
    switch (symbolType) {
      case 'CREDIT':
        return hasDup
          ? { symbolId, exchangeId, symbolType, assetIdBase: base, duplicateSuffix }
          : { symbolId, exchangeId, symbolType, assetIdBase: base };
      case 'FUTURES': {
        const delivery = parts[first + 2];
        if (!isSixDigits(delivery)) return undefined;
        return withDup(
          {
            symbolId,
            exchangeId,
            symbolType,
            assetIdBase: base,
            assetIdQuote: parts[first + 1],
            extra: { delivery },
          },
          duplicateSuffix,
        );
      }
      case 'OPTION': {
        const expiry = parts[first + 2];
        const side = parts[first + 4];
        if (!isSixDigits(expiry) || (side !== 'C' && side !== 'P')) return undefined;
        return withDup(
          {
            symbolId,
            exchangeId,
            symbolType,
            assetIdBase: base,
            assetIdQuote: parts[first + 1],
            extra: { expiry, strike: parts[first + 3], side },
          },
          duplicateSuffix,
        );
      }
      default: // SPOT, PERPETUAL, DPERPETUAL
        return hasDup
          ? {
              symbolId,
              exchangeId,
              symbolType,
              assetIdBase: base,
              assetIdQuote: parts[first + 1],
              duplicateSuffix,
            }
          : { symbolId, exchangeId, symbolType, assetIdBase: base, assetIdQuote: parts[first + 1] };
    }
  }

  // Variable-arity patterns: the rest (minus a trailing bare "_") is one id.
  let last = n;
  let duplicateSuffix: string | undefined;
  if (n > first + 1 && parts[n - 1].length === 0) {
    last = n - 1;
    duplicateSuffix = '';
  }
  if (last <= first) return undefined;
  for (let i = first; i < last; i++) if (parts[i].length === 0) return undefined;
  const rest = last === first + 1 ? parts[first] : parts.slice(first, last).join('_');
  const key = symbolType === 'INDEX' ? 'indexId' : symbolType === 'CONTRACT' ? 'contractId' : 'legs';
  return withDup({ symbolId, exchangeId, symbolType, extra: { [key]: rest } }, duplicateSuffix);
}

function withDup(info: SymbolInfo, duplicateSuffix: string | undefined): SymbolInfo {
  return duplicateSuffix === undefined ? info : { ...info, duplicateSuffix };
}
