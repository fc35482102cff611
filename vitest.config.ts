import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Logs of every started service go to a run folder; at the end they are scanned for secrets.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file gets its own database. Four files at a time on a 2-core machine: files mostly wait
    // (a whole PGlite run used ~850 CPU-s in 760+ s with two at a time); docs/testing.md, decision 0063.
    maxWorkers: 4,
    pool: 'forks',
    // Each file in a fresh module graph (vitest's default). `isolate: false` (src/ loaded once per
    // fork) measured faster on subsets, but on the whole suite on PostgreSQL it failed two
    // listen-recovery tests that pass alone: state carried from one file to the next (not yet found).
  },
});
