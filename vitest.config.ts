import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Logs of every started service go to a run folder; at the end they are scanned for secrets.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file gets its own database; two files at a time suits a 2-core machine.
    maxWorkers: 2,
    pool: 'forks',
    // The two forks are kept for the whole run, each running one file after another with the
    // modules it has loaded (src/ is loaded once per fork, not once per file). Every test file
    // starts and stops its own services and database, and no test replaces a global, so nothing
    // a file leaves behind is seen by the next. Measured on the loaded 2-core machine
    // (docs/testing.md): the unit tests 139 s -> 69 s, ten server test files 133 -> 91 CPU-seconds.
    isolate: false,
  },
});
