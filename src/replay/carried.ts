/**
 * The check of what a partition carries in (docs/parallel.md, "Carried state checked"): the
 * pre-scan assumes every record before a window is accepted; the partition that reads the
 * window's first record knows which were, and reports the state a serial replay has there.
 *
 * @module
 */
import type { EngineConfig } from '../core/config.js';
import { createEngine } from '../core/engine.js';
import type { XrateEvent } from '../core/types.js';
import type { CarriedState, PartitionStart } from './partitionRun.js';

/** A record's place, with its rank in reading order. */
interface Ordered {
  input: number;
  line: number;
  order: number;
}

/**
 * For each partition, the one that reports its carried state: the latest earlier partition that
 * starts reading at or before its first record (-1 for the first partition, which carries nothing).
 *
 * @example
 * ```ts
 * reporters([{ input: 0, line: 0, order: 0 }, { input: 0, line: 900, order: 899 }]); // [-1, 0]
 * ```
 */
export function reporters(starts: readonly Ordered[]): number[] {
  return starts.map((s, k) => {
    for (let j = k - 1; j >= 0; j--) if (starts[j].order <= s.order) return j;
    return -1;
  });
}

/** The positions partition `j` reports at: the first records of the partitions it reports for, in reading order. */
export function reportPositions(starts: readonly Ordered[], by: readonly number[], j: number): { input: number; line: number }[] {
  return starts
    .filter((_s, k) => by[k] === j)
    .sort((a, b) => a.order - b.order)
    .map(({ input, line }) => ({ input, line }));
}

/** `v` with every object's keys sorted, for comparing events parsed by different paths. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = canonical(x);
    }
    return out;
  }
  return v;
}

/** The markets an engine knows after taking `metadata` and being told of `markets` (as a partition starts). */
function knownMarkets(metadata: readonly XrateEvent[], markets: readonly string[], config: Partial<EngineConfig>): Set<string> {
  const engine = createEngine(config);
  for (const e of metadata) engine.apply(e);
  for (const id of markets) engine.knowMarket(id);
  return new Set(engine.marketIds());
}

/**
 * What differs between the state a partition was given and the state a serial replay has there
 * (as reported): `clock`, `metadata`, `markets`; empty when nothing does.
 *
 * @example
 * ```ts
 * carriedDifferences(job.partition, result.carried[0], config); // e.g. ['metadata']
 * ```
 */
export function carriedDifferences(given: PartitionStart, serial: CarriedState, config: Partial<EngineConfig>): string[] {
  const out: string[] = [];
  if (given.clockUs !== serial.clockUs) out.push('clock');
  if (JSON.stringify(canonical(given.metadata)) !== JSON.stringify(canonical(serial.metadata))) out.push('metadata');
  const a = knownMarkets(given.metadata, given.markets ?? [], config);
  const b = new Set(serial.markets);
  if (a.size !== b.size || [...a].some((id) => !b.has(id))) out.push('markets');
  return out;
}
