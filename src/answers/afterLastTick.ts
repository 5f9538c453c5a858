/**
 * How a live engine's provider answers a time after the engine's last tick, one strategy per kind
 * of feed, chosen once when the provider is made ({@link AFTER_LAST_TICK}):
 *
 * | feed | after the last tick |
 * |---|---|
 * | `replay` (a replayed log, static) | as the database answers: its final engine advanced with no more events |
 * | `follow` (a followed log, ticking on the wall clock) | as of the last tick (the log may still grow) |
 * | `replica` (a stream) | the engine copied and advanced with no more events, as a replay of what it has read gives |
 *
 * @module
 */
import type { Engine, SymbolFilter, SymbolRecord } from '../core/engine.js';
import { restoreEngine } from '../core/engine.js';
import type { RateExplanation } from '../core/provenance.js';
import { US_PER_SECOND } from '../core/time.js';
import { EngineSource, PairTable } from '../replay/rateSources.js';
import { explainWith } from './explain.js';
import type { RateSource } from './types.js';

/** The feeds of a live engine. */
export type LiveMode = 'replay' | 'follow' | 'replica';

/** Answers for a tick T after the engine's last tick (T is `at` floored to its second). */
export interface AfterLastTick {
  /** The rates at T; `what` starts a no-data message. */
  source(T: number, at: number, what: string): RateSource;
  /** The provenance of rate(base, quote) at `at`. */
  explain(base: string, quote: string, at: number, T: number): RateExplanation;
  /** The symbol records at T. */
  symbols(at: number, T: number, filter: SymbolFilter): SymbolRecord[];
}

/** What the database provider under a live engine answers with (src/answers/databaseProvider.ts). */
export interface DatabaseAnswers {
  sourceFor(at: number | undefined, what: string): RateSource;
  explain(base: string, quote: string, at?: number): RateExplanation;
  symbols(at: number | undefined, filter: SymbolFilter): SymbolRecord[];
}

/** What a strategy may use: the live engine, the database it writes to, and the engine's state version. */
export interface LiveContext {
  engine: Engine;
  db: DatabaseAnswers;
  /** The engine's rates at its last tick (cached by the provider). */
  current: () => RateSource;
  /** A number that changes whenever the engine applies something (a replica's stream position). */
  version: () => number;
}

/** After a replay: as the database answers (its final engine advanced with no events). */
export function asTheDatabase(db: DatabaseAnswers): AfterLastTick {
  return {
    source: (_T, at, what) => db.sourceFor(at, what),
    explain: (base, quote, at) => db.explain(base, quote, at),
    symbols: (at, _T, filter) => db.symbols(at, filter),
  };
}

/** Following a log whose ticks follow the wall clock: the state of the last tick. */
export function asOfLastTick(engine: Engine, current: () => RateSource): AfterLastTick {
  return {
    source: () => current(),
    explain: (base, quote) => explainWith(engine, base, quote, engine.lastTickTime),
    symbols: (_at, _T, filter) => engine.symbols(filter),
  };
}

/**
 * A replica: its engine copied and advanced with no further events to T, as a replay of what it
 * has read gives at T; the copy is reused while the replica has applied nothing new (`version`).
 */
export function advancedCopy(engine: Engine, version: () => number): AfterLastTick {
  let ahead: { version: number; engine: Engine; source?: EngineSource } | undefined;
  const advanced = (T: number): { engine: Engine; source?: EngineSource } => {
    const v = version();
    let x = ahead;
    if (!x || x.version !== v || (x.engine.lastTickTime ?? Number.NEGATIVE_INFINITY) > T) {
      x = { version: v, engine: restoreEngine(engine.snapshot(), {}) };
      ahead = x;
    }
    if (x.engine.lastTickTime !== T) {
      x.engine.advanceTo(T);
      x.source = undefined;
    }
    return x;
  };
  return {
    source: (T) => {
      // As a replay database answers (replay/database.ts): once every carried rate has expired, no pair.
      const c = engine.config;
      if (T - engine.lastTickTime! > c.maxRateAgeUs + US_PER_SECOND) return new PairTable(T, [], c.crossMethod);
      const x = advanced(T);
      x.source ??= new EngineSource(x.engine);
      return x.source;
    },
    explain: (base, quote, at, T) => explainWith(advanced(T).engine, base, quote, at),
    symbols: (_at, T, filter) => advanced(T).engine.symbols(filter),
  };
}

/** The strategy of each feed. */
export const AFTER_LAST_TICK: Readonly<Record<LiveMode, (c: LiveContext) => AfterLastTick>> = {
  replay: (c) => asTheDatabase(c.db),
  follow: (c) => asOfLastTick(c.engine, c.current),
  replica: (c) => advancedCopy(c.engine, c.version),
};
