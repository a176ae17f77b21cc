import { expect, it } from 'vitest';

/**
 * The test runner's own guard: `.ci/run` runs this file with KAIROS_PROVE_RED=1 and requires
 * `npm test` to exit non-zero. A dependency once turned every red run into exit code 0 (an exit hook
 * that called process.exit(0) on `beforeExit`, see src/db/embedded.ts); this keeps that from coming back.
 */
it.runIf(process.env.KAIROS_PROVE_RED === '1')('fails on purpose when asked to (KAIROS_PROVE_RED=1)', () => {
  expect(1).toBe(2);
});
