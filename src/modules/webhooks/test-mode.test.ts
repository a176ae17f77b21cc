/**
 * Webhooks and events in test mode (docs/api.md#test-mode): a subscription has the mode of the key that
 * made it, is found only by that mode, and receives only that mode's events, whose envelope says which.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { testKeyFor } from '../../../test/helpers/test-mode.js';

const { t } = clockedApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

async function subscribe(token: string, tag: string): Promise<{ id: string; livemode: boolean }> {
  const res = await t.call('POST', '/v1/webhooks', {
    token,
    body: { url: `${receiver.url}?${tag}`, events: ['consent.granted'] },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

describe('webhooks per mode', () => {
  it('a live event reaches only live subscriptions and a test-mode event only test-mode ones, each envelope saying its mode', async () => {
    const u = await fixtures.signedInUser(t, { prefix: 'whmode' });
    const test = await testKeyFor(t, u.key);
    const tag = `a${Date.now()}`;
    const liveHook = await subscribe(u.key, `${tag}-live`);
    const testHook = await subscribe(test.key, `${tag}-test`);
    expect(liveHook.livemode).toBe(true);
    expect(testHook.livemode).toBe(false);

    // One consent.granted of each mode (the account grants its user, once with each key).
    for (const token of [u.key, test.key]) {
      const res = await t.call('POST', '/v1/consents', {
        token,
        body: { grantee_id: u.id, scopes: ['availability:read:freebusy'] },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    // No background workers: the due dispatch and attempt jobs are run here.
    await expect
      .poll(
        async () => {
          await t.ctx.jobs.drain();
          return receiver.received.filter((r) => r.path.includes(tag)).length;
        },
        { timeout: 15_000 },
      )
      .toBe(2);
    const mine = receiver.received.filter((r) => r.path.includes(tag));
    const byPath = new Map(mine.map((r) => [r.path.split('?')[1], JSON.parse(r.body)]));
    const live = byPath.get(`${tag}-live`);
    const testEvent = byPath.get(`${tag}-test`);
    expect(live).toMatchObject({ type: 'consent.granted', livemode: true });
    expect(live.data.consent.livemode).toBe(true);
    expect(testEvent).toMatchObject({ type: 'consent.granted', livemode: false });
    expect(testEvent.data.consent.livemode).toBe(false);
    expect(Object.keys(testEvent)).toEqual(['id', 'type', 'created_at', 'livemode', 'data']);

    // Each event was fanned out in one statement: one delivery each, none across modes.
    const deliveries = async (token: string, id: string) =>
      (await (await t.call('GET', `/v1/webhooks/${id}/deliveries`, { token })).json()).deliveries;
    expect((await deliveries(u.key, liveHook.id)).map((d: { event_id: string }) => d.event_id)).toEqual([
      live.id,
    ]);
    expect((await deliveries(test.key, testHook.id)).map((d: { event_id: string }) => d.event_id)).toEqual([
      testEvent.id,
    ]);

    // Events are read per mode too.
    expect((await t.call('GET', `/v1/events/${testEvent.id}`, { token: u.key })).status).toBe(404);
    expect((await t.call('GET', `/v1/events/${live.id}`, { token: test.key })).status).toBe(404);
    const read = await t.call('GET', `/v1/events/${testEvent.id}`, { token: test.key });
    expect((await read.json()).event).toMatchObject({ id: testEvent.id, livemode: false });
  });

  it('a subscription of one mode is 404 to the other, and lists show only the caller’s mode', async () => {
    const u = await fixtures.signedInUser(t, { prefix: 'whiso' });
    const test = await testKeyFor(t, u.key);
    const liveHook = await subscribe(u.key, 'iso-live');
    const testHook = await subscribe(test.key, 'iso-test');
    for (const [token, other] of [
      [u.key, testHook.id],
      [test.key, liveHook.id],
    ] as const) {
      expect((await t.call('GET', `/v1/webhooks/${other}`, { token })).status).toBe(404);
      expect(
        (await t.call('PATCH', `/v1/webhooks/${other}`, { token, body: { description: 'x' } })).status,
      ).toBe(404);
      expect((await t.call('POST', `/v1/webhooks/${other}/test`, { token })).status).toBe(404);
      expect((await t.call('POST', `/v1/webhooks/${other}/rotate-secret`, { token })).status).toBe(404);
      expect((await t.call('GET', `/v1/webhooks/${other}/deliveries`, { token })).status).toBe(404);
      expect((await t.call('DELETE', `/v1/webhooks/${other}`, { token })).status).toBe(404);
    }
    const ids = async (token: string) =>
      (await (await t.call('GET', '/v1/webhooks', { token })).json()).webhooks.map(
        (w: { id: string }) => w.id,
      );
    expect(await ids(u.key)).toEqual([liveHook.id]);
    expect(await ids(test.key)).toEqual([testHook.id]);

    // A test send from a test-mode subscription is a test-mode event.
    const sent = await t.call('POST', `/v1/webhooks/${testHook.id}/test`, { token: test.key });
    expect(sent.status).toBe(202);
    expect((await sent.json()).event.livemode).toBe(false);
  });
});
