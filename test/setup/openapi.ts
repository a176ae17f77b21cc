/**
 * Fails a test whose answers did not match the OpenAPI document (test/helpers/openapi-check.ts records
 * them while the app answers, before the test sees the answer). Mismatches recorded in a file's
 * beforeAll fail its first test; those of an afterAll fail the file.
 */
import { afterAll, afterEach } from 'vitest';
import { takeMismatches } from '../helpers/openapi-check.js';

function assertNone(): void {
  const found = takeMismatches();
  if (found.length > 0) {
    throw new Error(`answers that do not match /v1/openapi.json:\n- ${found.join('\n- ')}`);
  }
}

afterEach(assertNone);
afterAll(assertNone);
