import { createHmac, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sampleBooking } from '../../../test/helpers/events.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { type ReceivedRequest, type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { FakeClock } from '../../platform/clock.js';
import { closeOutboundDispatchers } from '../../platform/outbound.js';
import type { EmitEventInput } from './api.js';
import { emitEvent } from './events.js';
import { claimTargets, targetsRead } from './repo.js';
import { MINUTE } from '../../lib/time.js';

const clock = new FakeClock('2026-06-01T12:00:00.000Z');
let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  // No background workers: the test moves the fake clock and drains the due jobs itself.
  t = await startTestApp({ clock, env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
});
afterEach(async () => {
  receiver.setBehaviour(() => ({ status: 200 }));
  // Each test starts with no subscription: pending retries of earlier tests become no-ops.
  await t.ctx.db.deleteFrom('webhooks').execute();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
  await closeOutboundDispatchers();
});

/** What a receiver does with docs/api.md#signatures-and-retries: HMAC of the raw body, constant-time, length checked first. */
function receiverAccepts(secret: string, rawBody: string, header: string | undefined): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex'), 'utf8');
  const given = Buffer.from(header ?? '', 'utf8');
  if (given.length !== expected.length) return false;
  return timingSafeEqual(given, expected);
}

/** The Standard Webhooks check a receiver library makes; true when any v1 entry matches `secret`. */
function standardAccepts(secret: string, req: ReceivedRequest, nowMs: number): boolean {
  const id = String(req.headers['webhook-id']);
  const ts = String(req.headers['webhook-timestamp']);
  if (Math.abs(Math.floor(nowMs / 1000) - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${ts}.${req.body}`, 'utf8').digest('base64');
  const expected = Buffer.from(`v1,${mac}`);
  return String(req.headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const given = Buffer.from(entry);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

async function setup(events: string[] = ['booking.created']) {
  const acc = await t.account();
  const res = await t.call('POST', '/v1/webhooks', { token: acc.key, body: { url: receiver.url, events } });
  expect(res.status).toBe(201);
  const hook = (await res.json()) as { id: string; secret: string };
  return { acc, hook };
}

function emit(accountId: string, over: Partial<EmitEventInput> = {}) {
  return t.ctx.db.transaction().execute((trx) =>
    emitEvent(trx, clock, {
      accountId,
      livemode: true,
      type: 'booking.created',
      data: { booking: sampleBooking({ customer_name: 'Zoë Ünicode 🗓️' }) },
      ...over,
    }),
  );
}

async function deliveries(token: string, hookId: string, query = '') {
  const res = await t.call('GET', `/v1/webhooks/${hookId}/deliveries${query}`, { token });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    deliveries: {
      id: string;
      event_id: string;
      event_type: string;
      status: string;
      next_attempt_at: string | null;
      attempts: {
        number: number;
        at: string;
        manual: boolean;
        response_status: number | null;
        duration_ms: number;
        error: string | null;
      }[];
    }[];
    pagination: { next_cursor: string | null; has_more: boolean };
  };
}

/** Requests the receiver got for one event since `from`. */
function requestsFor(eventId: string, from = 0): ReceivedRequest[] {
  return receiver.received.slice(from).filter((r) => r.headers['webhook-id'] === eventId);
}

describe('delivery of an event', () => {
  it('POSTs the envelope once with signatures a receiver verifies on its own', async () => {
    const { acc, hook } = await setup();
    const before = receiver.received.length;
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    const [req] = requestsFor(event.id, before);
    expect(req).toBeDefined();
    expect(requestsFor(event.id, before)).toHaveLength(1);
    expect(req!.method).toBe('POST');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req!.body)).toEqual({
      id: event.id,
      type: 'booking.created',
      created_at: '2026-06-01T12:00:00.000Z',
      livemode: true,
      data: { booking: sampleBooking({ customer_name: 'Zoë Ünicode 🗓️' }) },
    });
    expect(req!.headers['x-webhook-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(receiverAccepts(hook.secret, req!.body, req!.headers['x-webhook-signature'] as string)).toBe(true);
    expect(receiverAccepts(hook.secret, `${req!.body} `, req!.headers['x-webhook-signature'] as string)).toBe(
      false,
    );
    expect(receiverAccepts('whsec_other', req!.body, req!.headers['x-webhook-signature'] as string)).toBe(
      false,
    );
    expect(receiverAccepts(hook.secret, req!.body, 'abc')).toBe(false);
    expect(req!.headers['webhook-id']).toBe(event.id);
    expect(req!.headers['webhook-timestamp']).toBe(String(clock.nowMs() / 1000));
    expect(standardAccepts(hook.secret, req!, clock.nowMs())).toBe(true);

    const { deliveries: list } = await deliveries(acc.key, hook.id);
    expect(list).toEqual([
      expect.objectContaining({
        event_id: event.id,
        event_type: 'booking.created',
        status: 'succeeded',
        next_attempt_at: null,
        attempts: [
          expect.objectContaining({
            number: 1,
            manual: false,
            at: clock.now().toISOString(),
            response_status: 200,
            error: null,
          }),
        ],
      }),
    ]);
  });

  it('retries at exactly +1, +5 and +30 minutes, then fails the delivery after 4 attempts', async () => {
    const { acc, hook } = await setup();
    receiver.setBehaviour(() => ({ status: 503, body: 'down for maintenance' }));
    const before = receiver.received.length;
    const start = clock.nowMs();
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    expect(requestsFor(event.id, before)).toHaveLength(1);

    let expectedAt = start;
    for (const [i, delayMin] of [1, 5, 30].entries()) {
      expectedAt += delayMin * MINUTE;
      const [d] = (await deliveries(acc.key, hook.id)).deliveries;
      expect(d!.status).toBe('pending');
      expect(d!.next_attempt_at).toBe(new Date(expectedAt).toISOString());
      clock.set(expectedAt - 1);
      await t.ctx.jobs.drain();
      expect(requestsFor(event.id, before), `not before +${delayMin} min`).toHaveLength(i + 1);
      clock.set(expectedAt);
      await t.ctx.jobs.drain();
      expect(requestsFor(event.id, before), `at +${delayMin} min`).toHaveLength(i + 2);
    }

    const [d] = (await deliveries(acc.key, hook.id)).deliveries;
    expect(d!.status).toBe('failed');
    expect(d!.next_attempt_at).toBeNull();
    expect(d!.attempts.map((a) => [a.number, a.at, a.response_status, a.error])).toEqual([
      [1, new Date(start).toISOString(), 503, 'HTTP 503'],
      [2, new Date(start + MINUTE).toISOString(), 503, 'HTTP 503'],
      [3, new Date(start + 6 * MINUTE).toISOString(), 503, 'HTTP 503'],
      [4, new Date(start + 36 * MINUTE).toISOString(), 503, 'HTTP 503'],
    ]);
    clock.advance(24 * 60 * MINUTE);
    await t.ctx.jobs.drain();
    const sent = requestsFor(event.id, before);
    expect(sent).toHaveLength(4);
    // Identical bytes every time; a fresh timestamp and signature per attempt.
    expect(new Set(sent.map((r) => r.body)).size).toBe(1);
    expect(new Set(sent.map((r) => r.headers['webhook-timestamp'])).size).toBe(4);
    for (const r of sent) {
      expect(receiverAccepts(hook.secret, r.body, r.headers['x-webhook-signature'] as string)).toBe(true);
    }
    const fetched = await (await t.call('GET', `/v1/events/${event.id}`, { token: acc.key })).json();
    expect(JSON.stringify(fetched.event)).toBe(sent[0]!.body);
  });

  it('succeeds on the 3rd attempt and stops there', async () => {
    const { acc, hook } = await setup();
    const before = receiver.received.length;
    receiver.setBehaviour((n) => ({ status: n - before <= 2 ? 500 : 200 }));
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    clock.advance(MINUTE);
    await t.ctx.jobs.drain();
    clock.advance(5 * MINUTE);
    await t.ctx.jobs.drain();
    clock.advance(30 * MINUTE);
    await t.ctx.jobs.drain();
    expect(requestsFor(event.id, before)).toHaveLength(3);
    const [d] = (await deliveries(acc.key, hook.id)).deliveries;
    expect(d!.status).toBe('succeeded');
    expect(d!.next_attempt_at).toBeNull();
    expect(d!.attempts.map((a) => a.response_status)).toEqual([500, 500, 200]);
  });

  it('counts a 3xx answer as a failure and does not follow the redirect', async () => {
    const { acc, hook } = await setup();
    const before = receiver.received.length;
    receiver.setBehaviour(() => ({ status: 307, headers: { location: `${receiver.url}/elsewhere` } }));
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    expect(receiver.received.slice(before).map((r) => r.path)).toEqual(['/hook']);
    const [d] = (await deliveries(acc.key, hook.id)).deliveries;
    expect(d).toMatchObject({ event_id: event.id, status: 'pending' });
    expect(d!.attempts).toEqual([expect.objectContaining({ response_status: 307, error: 'HTTP 307' })]);
  });

  it('stores the event but enqueues no dispatch when no active subscription of the account lists its type', async () => {
    const { acc, hook } = await setup(['booking.cancelled']);
    const dispatchJobs = async (eventId: string) =>
      (
        await t.ctx.db
          .selectFrom('jobs')
          .select('id')
          .where('queue', '=', 'webhook-dispatch')
          .where(sql<boolean>`payload->>'event_id' = ${eventId}`)
          .execute()
      ).length;
    const unwanted = await emit(acc.id);
    expect(await dispatchJobs(unwanted.id)).toBe(0);
    const stored = await t.call('GET', `/v1/events/${unwanted.id}`, { token: acc.key });
    expect(stored.status).toBe(200);
    const wanted = await emit(acc.id, { type: 'booking.cancelled' });
    expect(await dispatchJobs(wanted.id)).toBe(1);
    await t.ctx.jobs.drain();
    expect((await deliveries(acc.key, hook.id)).deliveries.map((d) => d.event_id)).toEqual([wanted.id]);
  });

  it('delivers only to active subscriptions of the event’s account that list its type', async () => {
    const { acc, hook } = await setup(['booking.created']);
    const cancelled = await t.call('POST', '/v1/webhooks', {
      token: acc.key,
      body: { url: receiver.url, events: ['booking.cancelled'] },
    });
    const paused = (await (
      await t.call('POST', '/v1/webhooks', {
        token: acc.key,
        body: { url: receiver.url, events: ['booking.created'] },
      })
    ).json()) as { id: string };
    await t.call('PATCH', `/v1/webhooks/${paused.id}`, { token: acc.key, body: { active: false } });
    const other = await setup(['booking.created']);
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    expect((await deliveries(acc.key, hook.id)).deliveries.map((d) => d.event_id)).toEqual([event.id]);
    const cancelledId = ((await cancelled.json()) as { id: string }).id;
    expect((await deliveries(acc.key, cancelledId)).deliveries).toEqual([]);
    expect((await deliveries(acc.key, paused.id)).deliveries).toEqual([]);
    expect((await deliveries(other.acc.key, other.hook.id)).deliveries).toEqual([]);
  });

  it('sends proposal.resolved only to the organiser’s and the account’s own subscriptions', async () => {
    const acc = await t.account();
    const subscribe = async (token: string) => {
      const res = await t.call('POST', '/v1/webhooks', {
        token,
        body: { url: receiver.url, events: ['proposal.resolved', 'booking.created'] },
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const session = async (email: string) => {
      const user = await t.ctx.modules.accounts.createUser({
        accountId: acc.id,
        email,
        password: 'correct horse battery',
      });
      const res = await t.call('POST', '/v1/sessions', {
        body: { email, password: 'correct horse battery' },
      });
      return { id: user.id, token: ((await res.json()) as { session: { token: string } }).session.token };
    };
    const organiser = await session(`organiser-${acc.id}@example.com`);
    const colleague = await session(`colleague-${acc.id}@example.com`);
    const accountHook = await subscribe(acc.key);
    const organiserHook = await subscribe(organiser.token);
    const colleagueHook = await subscribe(colleague.token);

    const resolved = await emit(acc.id, {
      type: 'proposal.resolved',
      recipientPrincipalId: organiser.id,
      data: {
        proposal_id: 'prop_1',
        thread_id: 'thr_1',
        poll_variant: 'open',
        winning_slot: { id: 'slot_1', start: '2026-06-10T14:00:00.000Z', end: '2026-06-10T14:30:00.000Z' },
        vote_count: 2,
        total_votes: 3,
        tie_count: 1,
      },
    });
    const booking = await emit(acc.id);
    await t.ctx.jobs.drain();
    const eventsOf = async (id: string) =>
      (await deliveries(acc.key, id)).deliveries.map((d) => d.event_id).sort();
    expect(await eventsOf(accountHook)).toEqual([resolved.id, booking.id].sort());
    expect(await eventsOf(organiserHook)).toEqual([resolved.id, booking.id].sort());
    expect(await eventsOf(colleagueHook)).toEqual([booking.id]);

    // The claim of a dispatch job reads its targets: the subscriptions receiving the event, with what a
    // first attempt sends, a rotated secret's end too.
    const rotated = await t.call('POST', `/v1/webhooks/${accountHook}/rotate-secret`, { token: acc.key });
    expect(rotated.status).toBe(200);
    const hooks = await t.ctx.db.selectFrom('webhooks').selectAll().execute();
    for (const [event, receivers] of [
      [resolved, [accountHook, organiserHook]],
      [booking, [accountHook, organiserHook, colleagueHook]],
    ] as const) {
      const { rows } = await sql<{ read: unknown }>`
        SELECT ${claimTargets(sql`${JSON.stringify({ event_id: event.id })}::jsonb`)} AS read`.execute(
        t.ctx.db,
      );
      const stored = await t.ctx.db
        .selectFrom('events')
        .select('envelope')
        .where('id', '=', event.id)
        .executeTakeFirstOrThrow();
      expect(targetsRead(rows[0]!.read)).toEqual(
        [...receivers].sort().map((id) => {
          const w = hooks.find((h) => h.id === id)!;
          return {
            event_id: event.id,
            event_type: event.type,
            envelope: stored.envelope,
            webhook_id: id,
            url: w.url,
            secret_enc: w.secret_enc,
            previous_secret_enc: w.previous_secret_enc,
            previous_secret_expires_at: w.previous_secret_expires_at,
          };
        }),
      );
      expect(targetsRead(rows[0]!.read).some((r) => r.previous_secret_expires_at instanceof Date)).toBe(true);
    }
  });

  it('does not create a delivery twice when the dispatcher runs again for the same event', async () => {
    const { acc, hook } = await setup();
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    await t.ctx.db
      .insertInto('jobs')
      .values({
        queue: 'webhook-dispatch',
        payload: JSON.stringify({ event_id: event.id }),
        run_at: clock.now(),
        attempts: 0,
        created_at: clock.now(),
      })
      .execute();
    await t.ctx.jobs.drain();
    const made = (await deliveries(acc.key, hook.id)).deliveries;
    expect(made).toHaveLength(1);
    expect(requestsFor(event.id)).toHaveLength(1);
    // The second dispatch ended, and made no attempt job for the delivery that existed already.
    const left = await t.ctx.db
      .selectFrom('jobs')
      .select(['queue', 'payload'])
      .where((eb) =>
        eb.or([
          eb(sql`payload->>'event_id'`, '=', event.id),
          eb(sql`payload->>'delivery_id'`, '=', made[0]!.id),
        ]),
      )
      .execute();
    expect(left).toEqual([]);
  });
});

describe('secret rotation', () => {
  it('signs with both secrets for 24 hours (X-Webhook-Signature with the old one until the overlap ends), then with the new one', async () => {
    const { acc, hook } = await setup();
    const rotated = await t.call('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { token: acc.key });
    const newSecret = ((await rotated.json()) as { webhook: { secret: string } }).webhook.secret;

    const before = receiver.received.length;
    const during = await emit(acc.id);
    await t.ctx.jobs.drain();
    const [req] = requestsFor(during.id, before);
    expect(String(req!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(standardAccepts(newSecret, req!, clock.nowMs())).toBe(true);
    expect(standardAccepts(hook.secret, req!, clock.nowMs())).toBe(true);
    // X-Webhook-Signature (docs/api.md#signatures-and-retries) carries one value: during the overlap the
    // previous secret's, so a receiver using the README snippet keeps working until it switches.
    expect(receiverAccepts(hook.secret, req!.body, req!.headers['x-webhook-signature'] as string)).toBe(true);
    expect(receiverAccepts(newSecret, req!.body, req!.headers['x-webhook-signature'] as string)).toBe(false);

    clock.advance(24 * 60 * MINUTE + 1);
    const after = await emit(acc.id);
    await t.ctx.jobs.drain();
    const [late] = requestsFor(after.id, before);
    expect(String(late!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(standardAccepts(newSecret, late!, clock.nowMs())).toBe(true);
    expect(standardAccepts(hook.secret, late!, clock.nowMs())).toBe(false);
    expect(receiverAccepts(newSecret, late!.body, late!.headers['x-webhook-signature'] as string)).toBe(true);
  });
});

describe('test events, history and manual retries', () => {
  it('sends webhook.test to that endpoint only', async () => {
    const { acc, hook } = await setup(['booking.cancelled']);
    const { hook: sibling } = await setup(['booking.cancelled']);
    const before = receiver.received.length;
    const res = await t.call('POST', `/v1/webhooks/${hook.id}/test`, { token: acc.key });
    expect(res.status).toBe(202);
    const sent = (await res.json()) as { event: { id: string; type: string }; delivery: { status: string } };
    expect(sent.event.type).toBe('webhook.test');
    expect(sent.delivery.status).toBe('pending');
    await t.ctx.jobs.drain();
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ id: sent.event.id, type: 'webhook.test' });
    expect(receiverAccepts(hook.secret, got[0]!.body, got[0]!.headers['x-webhook-signature'] as string)).toBe(
      true,
    );
    expect((await deliveries(acc.key, hook.id)).deliveries[0]).toMatchObject({ status: 'succeeded' });
    expect(sibling.id).not.toBe(hook.id);
  });

  it('filters history by status and event type and pages with a cursor', async () => {
    const { acc, hook } = await setup(['booking.created', 'booking.cancelled']);
    const before = receiver.received.length;
    receiver.setBehaviour((n) => ({ status: n - before === 2 ? 500 : 200 }));
    const a = await emit(acc.id);
    await t.ctx.jobs.drain();
    clock.advance(1);
    const b = await emit(acc.id, {
      type: 'booking.cancelled',
      data: { booking: sampleBooking({ status: 'cancelled' }) },
    });
    await t.ctx.jobs.drain();
    clock.advance(1);
    const c = await emit(acc.id);
    await t.ctx.jobs.drain();
    const ids = async (query: string) =>
      (await deliveries(acc.key, hook.id, query)).deliveries.map((d) => d.event_id);
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('?status=pending')).toEqual([b.id]);
    expect(await ids('?status=succeeded')).toEqual([c.id, a.id]);
    expect(await ids('?event_type=booking.created')).toEqual([c.id, a.id]);
    expect(await ids('?event_type=booking.created&status=pending')).toEqual([]);
    const first = await deliveries(acc.key, hook.id, '?limit=2');
    expect(first.deliveries.map((d) => d.event_id)).toEqual([c.id, b.id]);
    expect(first.pagination.has_more).toBe(true);
    const rest = await deliveries(
      acc.key,
      hook.id,
      `?limit=2&cursor=${encodeURIComponent(first.pagination.next_cursor!)}`,
    );
    expect(rest.deliveries.map((d) => d.event_id)).toEqual([a.id]);
    expect(rest.pagination.has_more).toBe(false);
    const bad = await t.call('GET', `/v1/webhooks/${hook.id}/deliveries?status=lost`, { token: acc.key });
    expect(bad.status).toBe(400);
  });

  it('retries a failed delivery by hand once, recorded as a manual attempt', async () => {
    const { acc, hook } = await setup();
    receiver.setBehaviour(() => ({ status: 500 }));
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    const [pending] = (await deliveries(acc.key, hook.id)).deliveries;
    const retryPath = `/v1/webhooks/${hook.id}/deliveries/${pending!.id}/retry`;
    expect((await t.call('POST', retryPath, { token: acc.key })).status).toBe(409);
    for (const minutes of [1, 5, 30]) {
      clock.advance(minutes * MINUTE);
      await t.ctx.jobs.drain();
    }
    const [failed] = (await deliveries(acc.key, hook.id)).deliveries;
    expect(failed!.status).toBe('failed');

    receiver.setBehaviour(() => ({ status: 200 }));
    const res = await t.call('POST', retryPath, { token: acc.key });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { delivery: { status: string } }).delivery.status).toBe('pending');
    await t.ctx.jobs.drain();
    const [done] = (await deliveries(acc.key, hook.id)).deliveries;
    expect(done!.status).toBe('succeeded');
    expect(done!.attempts.map((a) => [a.number, a.manual, a.response_status])).toEqual([
      [1, false, 500],
      [2, false, 500],
      [3, false, 500],
      [4, false, 500],
      [5, true, 200],
    ]);
    expect(requestsFor(event.id)).toHaveLength(5);
    expect((await t.call('POST', retryPath, { token: acc.key })).status).toBe(409);
    const other = await t.account();
    expect((await t.call('POST', retryPath, { token: other.key })).status).toBe(404);
  });

  it('a failed manual retry ends failed again without scheduling automatic retries', async () => {
    const { acc, hook } = await setup();
    receiver.setBehaviour(() => ({ status: 500 }));
    await emit(acc.id);
    await t.ctx.jobs.drain();
    for (const minutes of [1, 5, 30]) {
      clock.advance(minutes * MINUTE);
      await t.ctx.jobs.drain();
    }
    const [failed] = (await deliveries(acc.key, hook.id)).deliveries;
    await t.call('POST', `/v1/webhooks/${hook.id}/deliveries/${failed!.id}/retry`, { token: acc.key });
    await t.ctx.jobs.drain();
    const [after] = (await deliveries(acc.key, hook.id)).deliveries;
    expect(after).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(after!.attempts.at(-1)).toMatchObject({ number: 5, manual: true, response_status: 500 });
  });

  it('pausing a webhook ends its pending deliveries as failed; nothing more is sent', async () => {
    const { acc, hook } = await setup();
    receiver.setBehaviour(() => ({ status: 500 }));
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    await t.call('PATCH', `/v1/webhooks/${hook.id}`, { token: acc.key, body: { active: false } });
    clock.advance(MINUTE);
    await t.ctx.jobs.drain();
    expect(requestsFor(event.id)).toHaveLength(1);
    const [d] = (await deliveries(acc.key, hook.id)).deliveries;
    expect(d).toMatchObject({ status: 'failed', next_attempt_at: null });
    const retry = await t.call('POST', `/v1/webhooks/${hook.id}/deliveries/${d!.id}/retry`, {
      token: acc.key,
    });
    expect(retry.status).toBe(409);
    expect((await t.call('POST', `/v1/webhooks/${hook.id}/test`, { token: acc.key })).status).toBe(409);
  });

  it('deleting a webhook drops its pending attempts', async () => {
    const { acc, hook } = await setup();
    receiver.setBehaviour(() => ({ status: 500 }));
    const event = await emit(acc.id);
    await t.ctx.jobs.drain();
    expect((await t.call('DELETE', `/v1/webhooks/${hook.id}`, { token: acc.key })).status).toBe(204);
    clock.advance(MINUTE);
    await t.ctx.jobs.drain();
    expect(requestsFor(event.id)).toHaveLength(1);
  });
});

describe('time-outs', () => {
  it('records a time-out as a failed attempt and schedules the retry', async () => {
    const short = await startTestApp({
      clock,
      database: t.database,
      masterKey: t.masterKey,
      env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true', KAIROS_WEBHOOK_TIMEOUT_MS: '300' },
    });
    try {
      const acc = await short.account();
      const res = await short.call('POST', '/v1/webhooks', {
        token: acc.key,
        body: { url: receiver.url, events: ['booking.created'] },
      });
      const hook = (await res.json()) as { id: string };
      receiver.setBehaviour(() => ({ status: 200, delayMs: 2_000 }));
      await short.ctx.db.transaction().execute((trx) =>
        emitEvent(trx, clock, {
          accountId: acc.id,
          livemode: true,
          type: 'booking.created',
          data: { booking: sampleBooking() },
        }),
      );
      const started = Date.now();
      await short.ctx.jobs.drain();
      expect(Date.now() - started).toBeLessThan(1_500);
      const list = await short.call('GET', `/v1/webhooks/${hook.id}/deliveries`, { token: acc.key });
      const [d] = ((await list.json()) as Awaited<ReturnType<typeof deliveries>>).deliveries;
      expect(d!.status).toBe('pending');
      expect(d!.next_attempt_at).toBe(new Date(clock.nowMs() + MINUTE).toISOString());
      expect(d!.attempts).toEqual([
        expect.objectContaining({ number: 1, response_status: null, error: 'timeout' }),
      ]);
      const duration = d!.attempts[0]!.duration_ms;
      expect(duration).toBeGreaterThanOrEqual(290);
      expect(duration).toBeLessThan(1_000);
    } finally {
      await short.close();
    }
  });
});
