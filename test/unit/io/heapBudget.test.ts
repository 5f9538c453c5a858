import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { HeapBudget } from '../../../src/io/heapBudget.js';

describe('HeapBudget', () => {
  it('collects once the heap outgrows its floor, then waits for the heap to double', () => {
    // A floor far below what the test runner's heap holds: the first check must collect.
    const budget = new HeapBudget(1);
    let garbage: number[][] | undefined = Array.from({ length: 2000 }, () => new Array(1000).fill(1));
    expect(garbage.length).toBe(2000);
    garbage = undefined;
    const before = v8.getHeapStatistics().used_heap_size;
    expect(budget.check()).toBe(true);
    // The 16 MB of arrays dropped above are gone.
    expect(v8.getHeapStatistics().used_heap_size).toBeLessThan(before - 8 * 1024 * 1024);
    // Right after a collection the heap is within twice its live size: nothing to do.
    expect(budget.check()).toBe(false);
  });

  it('does nothing while the heap is under its floor', () => {
    expect(new HeapBudget(1 << 20).check()).toBe(false);
  });
});
