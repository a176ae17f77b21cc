/**
 * Seeded OpenAPI fuzzing of the real app on a real socket (see openapi-fuzz.ts for what is generated,
 * what is checked and what is never sent).
 *
 *   npx vitest run test/fuzz                      # in the suite: a fixed seed, FUZZ_RUNS=300
 *   npm run fuzz                                  # 10,000 requests, a random seed (printed)
 *   FUZZ_SEED=123 FUZZ_RUNS=2000 npm run fuzz     # replay / resize
 *   FUZZ_SEED=123 FUZZ_ONLY=457,-12 npx vitest run test/fuzz   # only these request indexes
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Collector, Fuzzer, prepareWorld } from './openapi-fuzz.js';

const DEFAULT_SEED = 20260610;
const rawSeed = process.env.FUZZ_SEED;
const SEED =
  rawSeed === undefined || rawSeed === ''
    ? DEFAULT_SEED
    : rawSeed === 'random'
      ? Math.floor(Math.random() * 2 ** 31)
      : Number(rawSeed);
if (!Number.isInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer or "random" (got ${rawSeed})`);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const ONLY = process.env.FUZZ_ONLY?.split(',').map(Number);
/** A request takes a few ms; 5 s is the most one may take before it counts as hung. */
const TIMEOUT_MS = 30_000 + RUNS * 40;

let t: TestApp;
let fuzzer: Fuzzer;
const collectors: Collector[] = [];

beforeAll(async () => {
  console.log(`[fuzz] seed ${SEED} (FUZZ_SEED=${SEED} replays), ${RUNS} generated requests`);
  t = await startTestApp({
    env: {
      // Anonymous requests are a fifth of the traffic: the per-IP limit must not answer them all with 429.
      KAIROS_ANON_RATE_LIMIT_PER_HOUR: '100000000',
      // Outbound calls (webhook test/retry) end well inside the 5 s an answer may take.
      KAIROS_WEBHOOK_TIMEOUT_MS: '2000',
      // OAuth providers "configured", their endpoints a closed local port: connect/callback paths run
      // and fail fast instead of being refused as unconfigured.
      GOOGLE_CLIENT_ID: 'fuzz-google-client',
      GOOGLE_CLIENT_SECRET: 'fuzz-google-secret',
      GOOGLE_TOKEN_URL: 'http://127.0.0.1:9/token',
      GOOGLE_REVOKE_URL: 'http://127.0.0.1:9/revoke',
      GOOGLE_CALENDAR_API_URL: 'http://127.0.0.1:9/calendar/v3',
      MICROSOFT_CLIENT_ID: 'fuzz-microsoft-client',
      MICROSOFT_CLIENT_SECRET: 'fuzz-microsoft-secret',
      MICROSOFT_TOKEN_URL: 'http://127.0.0.1:9/token',
      MICROSOFT_GRAPH_URL: 'http://127.0.0.1:9/graph',
    },
  });
  const [accountA, accountB] = [
    await t.account({ name: 'Fuzz A', rateLimit: 10_000_000 }),
    await t.account({ name: 'Fuzz B', rateLimit: 10_000_000 }),
  ];
  const world = await prepareWorld({
    baseUrl: t.url,
    accountA,
    accountB,
    createUser: async (accountId, email, password) => {
      const user = await t.ctx.modules.accounts.createUser({ accountId, email, password });
      return { id: user.id };
    },
  });
  fuzzer = new Fuzzer(world, SEED);
});

afterAll(async () => {
  if (fuzzer) console.log(fuzzer.summary('Kairos OpenAPI fuzz: summary', collectors));
  await t?.close();
});

describe('OpenAPI fuzz (seeded)', () => {
  it.skipIf(ONLY !== undefined)(
    'every operation × every credential kind, one valid request each: no 5xx, errors are problem+json with request_id, no leaks, answered within 5 s',
    async () => {
      const collector = new Collector();
      collectors.push(collector);
      const n = await fuzzer.sweep(collector);
      expect(n).toBeGreaterThan(0);
      expect(collector.size, `seed ${SEED}\n${collector.report()}`).toBe(0);
    },
    TIMEOUT_MS,
  );

  it(
    `${ONLY ? ONLY.length : RUNS} seeded requests (valid and mutated) over every OpenAPI operation: no 5xx, every error problem+json with request_id, no stack/SQL/FST_ERR leaks, answered within 5 s`,
    async () => {
      const collector = new Collector();
      collectors.push(collector);
      await fuzzer.run(RUNS, collector, ONLY);
      expect(await fuzzer.credentialsAlive(), 'the fuzzer’s own credentials survive the run').toEqual([]);
      expect(collector.size, `seed ${SEED}\n${collector.report()}`).toBe(0);
    },
    TIMEOUT_MS,
  );
});
