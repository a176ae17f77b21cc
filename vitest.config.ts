import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every answer of the test app is checked against the OpenAPI document (test/helpers/openapi-check.ts).
    setupFiles: ['test/setup/openapi.ts'],
    pool: 'forks',
    // Each worker process runs its test files one after another with the modules it has loaded: loading
    // the app again for every file cost about 1.8 s a file (a quarter of a pass). Nothing a file sets is
    // process-wide: each builds its own app on its own database, and no test writes process.env, fakes
    // the timers or mocks a module (npm run check:house fails one that does).
    isolate: false,
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    // expect.poll waits for a signal; its 1 s default is a guess that a loaded 2-core machine misses
    // (a page's badge after a background job). Passing polls end as soon as they hold.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
