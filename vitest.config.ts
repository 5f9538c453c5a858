import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Three tiers, run together by `npm test`:
 * - `unit`: one module at a time, in process (`npm run test:unit`, the fast tier);
 * - `property`: fast-check invariants, each with a fixed seed;
 * - `e2e`: the rate service over real HTTP on a replayed database (test/service), and the built
 *   `xrate` command in child processes on generated logs (test/e2e).
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One fork per core (vitest's default leaves one idle, which on two cores runs the files one by one).
    maxWorkers: Math.max(2, availableParallelism()),
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'property', include: ['test/property/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts', 'test/service/**/*.test.ts'] } },
    ],
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      thresholds: {
        'src/core/**': { statements: 90, lines: 90, functions: 90, branches: 80 },
      },
    },
  },
});
