/**
 * Engine configuration: every default of the methodology, validated once at construction.
 *
 * @module
 */
import { XrateError } from './errors.js';

/** How a market's weight is formed (docs/methodology.md rule 6). */
export type Weighting = 'trade_x_passive' | 'trade' | 'passive' | 'microprice';
/** Outlier rule (docs/methodology.md rule 11). `none` disables it. */
export type OutlierMethod = 'weighted_sigma' | 'leave_one_out' | 'mad' | 'none';
/** Cross-rate method (docs/methodology.md rule 12). */
export type CrossMethod = 'bfs' | 'layered';

/**
 * Everything the methodology lets a user change. Durations are in seconds on input.
 *
 * @example
 * ```ts
 * const engine = createEngine({ weighting: 'trade', outliers: 'mad' });
 * ```
 */
export interface EngineConfig {
  /** Rule 5: largest accepted spread, as an exact decimal (string or number). Default `"0.67"`. */
  maxSpread: string | number;
  /** Rule 7: a quote older than this many seconds is stale. Default 301 (age exactly 301 s counts). */
  staleAfterSeconds: number;
  /** Rule 8: length of the traded-volume window, seconds. Default 86,400 (24 h). */
  volumeWindowSeconds: number;
  /** Rule 8: eligibility refresh cadence, seconds, aligned to the epoch. Default 14,400 (4 h). */
  refreshEverySeconds: number;
  /** Rule 6: weighting. Default `trade_x_passive` (w = V * q). */
  weighting: Weighting;
  /** Rule 11: outlier method. Default `weighted_sigma`. */
  outliers: OutlierMethod;
  /** Rule 11: the k in "k sigma". Default 3. */
  outlierSigmas: number;
  /** Rule 11: the outlier rule applies only with at least this many markets. Default 3. */
  outlierMinMarkets: number;
  /** Rule 13: a carried (stale) pair rate expires when older than this, seconds. Default 86,400. */
  maxRateAgeSeconds: number;
  /** Rule 12: cross-rate method. Default `bfs`. */
  crossMethod: CrossMethod;
}

/** The methodology's defaults. */
export const DEFAULT_CONFIG: Readonly<EngineConfig> = Object.freeze({
  maxSpread: '0.67',
  staleAfterSeconds: 301,
  volumeWindowSeconds: 86_400,
  refreshEverySeconds: 14_400,
  weighting: 'trade_x_passive',
  outliers: 'weighted_sigma',
  outlierSigmas: 3,
  outlierMinMarkets: 3,
  maxRateAgeSeconds: 86_400,
  crossMethod: 'bfs',
});

const WEIGHTINGS: readonly Weighting[] = ['trade_x_passive', 'trade', 'passive', 'microprice'];
const OUTLIERS: readonly OutlierMethod[] = ['weighted_sigma', 'leave_one_out', 'mad', 'none'];
const CROSS: readonly CrossMethod[] = ['bfs', 'layered'];
const DECIMAL_RE = /^[+]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function positiveInteger(name: string, v: unknown, allowZero = false): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || (!allowZero && v === 0)) {
    throw new XrateError(
      'config',
      `config.${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer number of seconds, got ${JSON.stringify(v)}`,
      { field: `config.${name}` },
    );
  }
  return v;
}

function oneOf<T extends string>(name: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new XrateError('config', `config.${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`, {
      field: `config.${name}`,
    });
  }
  return v as T;
}

/**
 * Validated configuration with the derived values the hot path uses (µs integers, exact spread text).
 */
export interface ResolvedConfig extends EngineConfig {
  readonly maxSpreadText: string;
  readonly maxSpreadValue: number;
  readonly staleAfterUs: number;
  readonly volumeWindowUs: number;
  readonly refreshEveryUs: number;
  readonly maxRateAgeUs: number;
}

/**
 * Merges `input` over {@link DEFAULT_CONFIG} and validates every field.
 * Unknown keys are refused (a typo must not silently fall back to a default).
 *
 * @throws {@link XrateError} `config` with a message naming the field (and `field` the key, `config.NAME`).
 * @example
 * ```ts
 * resolveConfig({ staleAfterSeconds: 60 }).staleAfterUs; // 60_000_000
 * ```
 */
export function resolveConfig(input: Partial<EngineConfig> | undefined = {}): ResolvedConfig {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new XrateError('config', `config must be an object, got ${JSON.stringify(input)}`);
  }
  for (const key of Object.keys(input)) {
    if (!(key in DEFAULT_CONFIG)) {
      throw new XrateError('config', `unknown config key "${key}" (known: ${Object.keys(DEFAULT_CONFIG).join(', ')})`, {
        field: `config.${key}`,
      });
    }
  }
  const c: EngineConfig = { ...DEFAULT_CONFIG, ...input };
  const spreadText = typeof c.maxSpread === 'number' ? String(c.maxSpread) : String(c.maxSpread).trim();
  if (
    (typeof c.maxSpread !== 'number' && typeof c.maxSpread !== 'string') ||
    !DECIMAL_RE.test(spreadText) ||
    !Number.isFinite(Number(spreadText))
  ) {
    throw new XrateError('config', `config.maxSpread must be a non-negative decimal such as "0.67", got ${JSON.stringify(c.maxSpread)}`, {
      field: 'config.maxSpread',
    });
  }
  positiveInteger('staleAfterSeconds', c.staleAfterSeconds, true);
  positiveInteger('volumeWindowSeconds', c.volumeWindowSeconds);
  positiveInteger('refreshEverySeconds', c.refreshEverySeconds);
  positiveInteger('maxRateAgeSeconds', c.maxRateAgeSeconds, true);
  oneOf('weighting', c.weighting, WEIGHTINGS);
  oneOf('outliers', c.outliers, OUTLIERS);
  oneOf('crossMethod', c.crossMethod, CROSS);
  if (typeof c.outlierSigmas !== 'number' || !Number.isFinite(c.outlierSigmas) || c.outlierSigmas <= 0) {
    throw new XrateError('config', `config.outlierSigmas must be a positive number, got ${JSON.stringify(c.outlierSigmas)}`, {
      field: 'config.outlierSigmas',
    });
  }
  if (typeof c.outlierMinMarkets !== 'number' || !Number.isInteger(c.outlierMinMarkets) || c.outlierMinMarkets < 2) {
    throw new XrateError('config', `config.outlierMinMarkets must be an integer >= 2, got ${JSON.stringify(c.outlierMinMarkets)}`, {
      field: 'config.outlierMinMarkets',
    });
  }
  return Object.freeze({
    ...c,
    maxSpreadText: spreadText,
    maxSpreadValue: Number(spreadText),
    staleAfterUs: c.staleAfterSeconds * 1_000_000,
    volumeWindowUs: c.volumeWindowSeconds * 1_000_000,
    refreshEveryUs: c.refreshEverySeconds * 1_000_000,
    maxRateAgeUs: c.maxRateAgeSeconds * 1_000_000,
  });
}
