import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../../../test/helpers/app.js';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { sampleBooking } from '../../../test/helpers/events.js';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { FakeClock } from '../../platform/clock.js';
import { closeOutboundDispatchers } from '../../platform/outbound.js';
import { emitEvent } from './events.js';
import { purgeWebhookRows } from './retention.js';
import { DAY } from '../../lib/time.js';

const { clock, t } = clockedApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await closeOutboundDispatchers();
});

async function subscribe() {
  const acc = await t.account();
  const res = await t.call('POST', '/v1/webhooks', {
    token: acc.key,
    body: { url: receiver.url, events: ['booking.created'] },
  });
  expect(res.status).toBe(201);
  return { acc, hookId: ((await res.json()) as { id: string }).id };
}

function emit(accountId: string) {
  return t.ctx.db.transaction().execute((trx) =>
    emitEvent(trx, clock, {
      accountId,
      livemode: true,
      type: 'booking.created',
      data: { booking: sampleBooking() },
    }),
  );
}

async function count(table: 'events' | 'webhook_deliveries' | 'webhook_attempts', where?: [string, string]) {
  let q = t.ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n'));
  // biome-ignore lint/suspicious/noExplicitAny: a column name chosen by the test
  if (where) q = q.where(where[0] as any, '=', where[1]);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

describe('webhook retention', () => {
  it('deletes finished deliveries, their attempts and their events past 30 days, and keeps recent ones', async () => {
    clock.set('2026-06-01T12:00:00.000Z');
    const { acc, hookId } = await subscribe();
    const old = await emit(acc.id);
    const unsent = await emit((await t.account()).id); // no subscription: an event without a delivery
    await t.ctx.jobs.drain();
    expect(await count('webhook_deliveries', ['event_id', old.id])).toBe(1);
    expect(await count('webhook_attempts')).toBeGreaterThan(0);

    clock.set('2026-07-01T11:00:00.000Z'); // 29 days 23 hours later
    const recent = await emit(acc.id);
    await t.ctx.jobs.drain();

    clock.set('2026-07-01T12:00:01.000Z'); // the old ones are now past 30 days; the recent one is an hour old
    await t.ctx.jobs.drain(); // the webhook-retention schedule runs

    expect(await count('events', ['id', old.id])).toBe(0);
    expect(await count('events', ['id', unsent.id])).toBe(0);
    expect(await count('webhook_deliveries', ['event_id', old.id])).toBe(0);
    expect((await t.call('GET', `/v1/events/${old.id}`, { token: acc.key })).status).toBe(404);

    expect((await t.call('GET', `/v1/events/${recent.id}`, { token: acc.key })).status).toBe(200);
    const res = await t.call('GET', `/v1/webhooks/${hookId}/deliveries`, { token: acc.key });
    const { deliveries } = (await res.json()) as { deliveries: { event_id: string; attempts: unknown[] }[] };
    expect(deliveries.map((d) => d.event_id)).toEqual([recent.id]);
    expect(deliveries[0]!.attempts).toHaveLength(1);
  });

  it('keeps a pending delivery and its event however old, and purges them once the delivery ends', async () => {
    clock.set('2026-08-01T12:00:00.000Z');
    receiver.setBehaviour(() => ({ status: 503 }));
    const { acc } = await subscribe();
    const event = await emit(acc.id);
    await t.ctx.jobs.drain(); // the first attempt fails: the delivery waits for its retry
    receiver.setBehaviour(() => ({ status: 200 }));
    expect(await count('webhook_deliveries', ['event_id', event.id])).toBe(1);

    clock.advance(40 * DAY);
    await purgeWebhookRows(t.ctx.db, clock, t.ctx.config.retention);
    expect(await count('events', ['id', event.id])).toBe(1);
    expect(await count('webhook_deliveries', ['event_id', event.id])).toBe(1);

    await t.ctx.jobs.drain(); // the retry succeeds
    await purgeWebhookRows(t.ctx.db, clock, t.ctx.config.retention);
    expect(await count('webhook_deliveries', ['event_id', event.id])).toBe(0);
    expect(await count('events', ['id', event.id])).toBe(0);
  });

  it('follows KAIROS_EVENT_RETENTION_DAYS and KAIROS_DELIVERY_RETENTION_DAYS', async () => {
    const c = new FakeClock('2026-06-01T12:00:00.000Z');
    const app = await startTestApp({
      clock: c,
      env: { KAIROS_EVENT_RETENTION_DAYS: '2', KAIROS_DELIVERY_RETENTION_DAYS: '1' },
    });
    try {
      expect(app.ctx.config.retention).toMatchObject({ eventsMs: 2 * DAY, deliveriesMs: DAY });
      const acc = await app.account();
      await app.ctx.db.transaction().execute((trx) =>
        emitEvent(trx, c, {
          accountId: acc.id,
          livemode: true,
          type: 'booking.created',
          data: { booking: sampleBooking() },
        }),
      );
      c.advance(DAY + 60_000);
      await app.ctx.jobs.drain();
      expect(await app.events(acc.id, 'booking.created')).toHaveLength(1);
      c.advance(DAY);
      await app.ctx.jobs.drain();
      expect(await app.events(acc.id, 'booking.created')).toHaveLength(0);
    } finally {
      await app.close();
    }
  });
});
