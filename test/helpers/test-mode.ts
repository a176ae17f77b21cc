import type { TestApp } from './app.js';

/**
 * A test-mode secret key (docs/api.md#test-mode) for the account whose live key is given, made through
 * the API as an integrator would.
 */
export async function testKeyFor(
  t: Pick<TestApp, 'call'>,
  liveKey: string,
  body: Record<string, unknown> = {},
): Promise<{ key: string; id: string }> {
  const res = await t.call('POST', '/v1/api-keys', {
    token: liveKey,
    body: { name: 'Test mode', environment: 'test', ...body },
  });
  if (res.status !== 201) throw new Error(`test key: ${res.status} ${await res.text()}`);
  const { api_key } = await res.json();
  return { key: api_key.key, id: api_key.id };
}

/** Moves the account's test clock forward by `seconds` (through the API); answers the clock. */
export async function advanceTestClock(
  t: Pick<TestApp, 'call'>,
  testKey: string,
  seconds: number,
): Promise<{ now: string; offset_seconds: number }> {
  const res = await t.call('POST', '/v1/test-clock/advance', { token: testKey, body: { seconds } });
  if (res.status !== 200) throw new Error(`advance: ${res.status} ${await res.text()}`);
  return (await res.json()).test_clock;
}
