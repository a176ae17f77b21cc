/**
 * Bookings over HTTP on the real runtime and database (docs/api.md#bookings, #public-booking-surface):
 * creation and its rules, the exclusion constraint under racing requests, reschedule and cancel with
 * their events, the public surface and the attendee's self-service token, round robin and collective
 * links.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { DEFAULT_SCHEDULE } from '../../lib/schedule.js';
import { FakeClock } from '../../platform/clock.js';
import { lockForChange, upsertSchedule } from '../principals/repo.js';
import { newHost } from '../../../test/helpers/fixtures.js';

// Monday 2 March 2026, 06:00 UTC; accounts and hosts default to Mon–Fri 09:00–17:00 UTC.
const clock = new FakeClock('2026-03-02T06:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };

const host = (key: string, name = 'Host', body: Record<string, unknown> = {}) =>
  newHost(t, { token: key }, { display_name: name, timezone: 'UTC', ...body });

async function link(key: string, body: Record<string, unknown>): Promise<Json> {
  const res = await t.call('POST', '/v1/booking-links', {
    token: key,
    body: { title: 'Intro call', ...body },
  });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  return (await res.json()).booking_link;
}

describe('POST /v1/bookings', () => {
  it('books the caller’s own time: 201 with the booking, its self-service link, booking.created and mails', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-03T10:00:00+00:00', notes: 'Hi', metadata: { crm: '42' } },
    });
    expect(res.status).toBe(201);
    const { booking } = await res.json();
    expect(booking).toMatchObject({
      status: 'confirmed',
      principal_id: acc.id,
      host_ids: [acc.id],
      booking_link_id: null,
      start_time: '2026-03-03T10:00:00.000Z',
      end_time: '2026-03-03T10:30:00.000Z',
      customer_email: 'ada@example.com',
      notes: 'Hi',
      metadata: { crm: '42' },
    });
    expect(booking.id).toMatch(/^booking_/);
    expect(booking.manage_url).toMatch(new RegExp(`^${t.url}/b/[A-Za-z0-9_-]{43}$`));
    const created = await t.events(acc.id, 'booking.created');
    expect(created).toHaveLength(1);
    expect(created[0].booking).toMatchObject({
      id: booking.id,
      status: 'confirmed',
      start_time: booking.start_time,
      end_time: booking.end_time,
      customer_email: 'ada@example.com',
      customer_name: 'Ada Lovelace',
      principal_id: acc.id,
    });
    expect(created[0].booking.manage_url).toBeUndefined();
    const mails = await t.ctx.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('subject_id', '=', booking.id)
      .execute();
    // The account has no contact address: its copy is recorded as skipped, never sent.
    expect(mails.map((m) => [m.to_address, m.status])).toEqual([
      ['ada@example.com', 'pending'],
      [null, 'skipped'],
    ]);
    expect(mails[0]!.ics_method).toBe('REQUEST');
    expect(mails[1]!.last_error).toBe(`no e-mail address for principal ${acc.id}`);
    // The token is not stored, only its hash; GET shows no manage_url.
    const got = await (await t.call('GET', `/v1/bookings/${booking.id}`, { token: acc.key })).json();
    expect(got.booking.manage_url).toBeUndefined();
    expect(got.booking.id).toBe(booking.id);
  });

  it('answers 409 slot_unavailable for an overlap, outside hours, and calendar-free time past the horizon', async () => {
    const acc = await t.account();
    const first = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-03T11:00:00Z', duration_minutes: 60 },
    });
    expect(first.status).toBe(201);
    for (const [start, reason] of [
      ['2026-03-03T11:30:00Z', 'taken'],
      ['2026-03-03T10:45:00Z', 'taken'],
      ['2026-03-03T18:00:00Z', 'outside_working_hours'],
      ['2026-03-07T10:00:00Z', 'outside_working_hours'],
      ['2027-03-03T10:00:00Z', 'max_days_ahead'],
    ] as const) {
      const res = await t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, start_time: start },
      });
      expect(res.status, start).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const body = await res.json();
      expect(body).toMatchObject({
        type: expect.stringMatching(/\/errors\/conflict$/),
        code: 'slot_unavailable',
        reason,
      });
      expect(body.request_id).toMatch(/^req_/);
    }
    // Adjacent is fine (half-open intervals).
    const after = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-03T12:00:00Z' },
    });
    expect(after.status).toBe(201);
  });

  it('answers 422 for a start in the past and 400 per field for bad input, writing nothing', async () => {
    const acc = await t.account();
    const past = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-01T10:00:00Z' },
    });
    expect(past.status).toBe(422);
    expect(await past.json()).toMatchObject({
      code: 'start_in_past',
      type: expect.stringMatching(/unprocessable$/),
    });
    const cases: [Record<string, unknown>, string][] = [
      [{ ...customer, customer_email: 'nope', start_time: '2026-03-03T10:00:00Z' }, 'customer_email'],
      [{ customer_email: 'a@b.co', start_time: '2026-03-03T10:00:00Z' }, 'customer_name'],
      [{ ...customer }, 'start_time'],
      [{ ...customer, start_time: '2026-03-03T10:00:00' }, 'start_time'],
      [{ ...customer, start_time: 'tomorrow' }, 'start_time'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', end_time: '2026-03-03T09:00:00Z' }, 'end_time'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', duration_minutes: 2 }, 'duration_minutes'],
      [
        { ...customer, start_time: '2026-03-03T10:00:00Z', customer_timezone: 'Mars/Base' },
        'customer_timezone',
      ],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', metadata: { a: 'x'.repeat(501) } }, 'metadata.a'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', principal_id: 'nope' }, 'principal_id'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', booking_link_id: 'link_x' }, 'booking_link_id'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/v1/bookings', { token: acc.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const problem = await res.json();
      expect(Object.keys(problem.errors ?? {}).join(','), JSON.stringify(problem)).toContain(field);
    }
    const count = await t.ctx.db
      .selectFrom('bookings')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', acc.id)
      .executeTakeFirst();
    expect(Number(count?.n)).toBe(0);
  });

  it('books for a host of the account, never for another account’s principal (403)', async () => {
    const acc = await t.account();
    const other = await t.account();
    const h = await host(acc.key, 'Ann', { email: 'ann@example.com' });
    const ok = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, principal_id: h, start_time: '2026-03-03T09:00:00Z' },
    });
    expect(ok.status).toBe(201);
    const { booking } = await ok.json();
    expect(booking.principal_id).toBe(h);
    const mails = await t.ctx.db
      .selectFrom('mail_outbox')
      .select('to_address')
      .where('subject_id', '=', booking.id)
      .execute();
    expect(mails.map((m) => m.to_address).sort()).toEqual(['ada@example.com', 'ann@example.com']);
    const denied = await t.call('POST', '/v1/bookings', {
      token: other.key,
      body: { ...customer, principal_id: h, start_time: '2026-03-03T10:00:00Z' },
    });
    expect(denied.status).toBe(403);
    expect((await t.call('GET', `/v1/bookings/${booking.id}`, { token: other.key })).status).toBe(404);
    expect((await t.call('DELETE', `/v1/bookings/${booking.id}`, { token: other.key })).status).toBe(404);
  });

  it('names a booking made without a link “Meeting with <host>”, in the API, the attendee’s page and the mails; a link’s booking keeps the link’s title', async () => {
    const acc = await t.account();
    const h = await host(acc.key, 'Dr. Maya Chen');
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, principal_id: h, start_time: '2026-03-03T11:00:00Z' },
    });
    expect(res.status).toBe(201);
    const { booking } = await res.json();
    expect(booking.title).toBe('Meeting with Dr. Maya Chen');
    const token = booking.manage_url.split('/b/')[1];
    const view = await t.call('GET', `/v1/public/bookings/${token}`);
    expect((await view.json()).booking.title).toBe('Meeting with Dr. Maya Chen');
    const mails = await t.ctx.db
      .selectFrom('mail_outbox')
      .select('subject')
      .where('subject_id', '=', booking.id)
      .execute();
    expect(mails.length).toBeGreaterThan(0);
    for (const m of mails) expect(m.subject).toContain('Meeting with Dr. Maya Chen');
    const l = await link(acc.key, { slug: `titled-${Date.now()}`, host_ids: [h] });
    const viaLink = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, booking_link_id: l.id, start_time: '2026-03-03T13:00:00Z' },
    });
    expect(viaLink.status, await viaLink.clone().text()).toBe(201);
    expect((await viaLink.json()).booking.title).toBe('Intro call');
  });

  it('checks working hours again under a lock: a schedule change committed while a booking waits refuses it', async () => {
    const acc = await t.account();
    const h = await host(acc.key, 'Locked host');
    // Warm the process's copy of the host's profile (Mon–Fri 09–17): the first check passes on it.
    expect((await t.call('GET', `/v1/principals/${h}/schedule`, { token: acc.key })).status).toBe(200);
    let answer: Promise<Response> | undefined;
    await t.ctx.db.transaction().execute(async (trx) => {
      // A schedule change in progress, as PUT /v1/principals/{id}/schedule makes it: row locked first.
      await lockForChange(trx, h);
      await upsertSchedule(
        trx,
        h,
        { ...DEFAULT_SCHEDULE('UTC'), weekly: [{ day: 'tue', start: '13:00', end: '14:00' }] },
        clock.now(),
      );
      answer = t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, principal_id: h, start_time: '2026-03-03T10:00:00Z' },
      });
      await new Promise((r) => setTimeout(r, 300)); // the booking is waiting for the lock by now
    });
    const res = await answer!;
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'slot_unavailable', reason: 'outside_working_hours' });
    const rows = await t.ctx.db.selectFrom('bookings').select('id').where('principal_id', '=', h).execute();
    expect(rows).toEqual([]);
  });

  it('replays an Idempotency-Key instead of booking twice', async () => {
    const acc = await t.account();
    const send = () =>
      t.call('POST', '/v1/bookings', {
        token: acc.key,
        headers: { 'idempotency-key': 'book-1' },
        body: { ...customer, start_time: '2026-03-04T10:00:00Z' },
      });
    const a = await send();
    const b = await send();
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect((await b.json()).booking.id).toBe((await a.json()).booking.id);
    expect(await t.events(acc.id, 'booking.created')).toHaveLength(1);
  });

  it('lets exactly one of 50 racing requests for one slot through; the rest are 409, none 5xx', async () => {
    const acc = await t.account();
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const res = await t.call('POST', '/v1/bookings', {
          token: acc.key,
          body: { ...customer, customer_name: `Racer ${i}`, start_time: '2026-03-05T14:00:00Z' },
        });
        const body = (await res.json()) as { code?: string };
        return { status: res.status, code: body.code, ms: Math.round(performance.now() - started) };
      }),
    );
    // On failure the message says which answers came and when (a stalled store shows as late 503s).
    const outcome = results.map((r) => `${r.status}${r.code ? ` ${r.code}` : ''} @${r.ms}ms`).join(', ');
    const statuses = results.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 201),
      outcome,
    ).toHaveLength(1);
    expect(
      statuses.filter((s) => s === 409),
      outcome,
    ).toHaveLength(49);
    expect(await t.events(acc.id, 'booking.created')).toHaveLength(1);
  });
});

describe('reschedule and cancel', () => {
  it('moves a booking (booking.updated, rising SEQUENCE), refuses a taken time, cancels once', async () => {
    const acc = await t.account();
    const book = async (start: string) =>
      (
        await (
          await t.call('POST', '/v1/bookings', { token: acc.key, body: { ...customer, start_time: start } })
        ).json()
      ).booking;
    const a = await book('2026-03-03T09:00:00Z');
    const b = await book('2026-03-03T10:00:00Z');
    const moved = await t.call('PATCH', `/v1/bookings/${a.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T13:00:00Z' },
    });
    expect(moved.status).toBe(200);
    expect((await moved.json()).booking).toMatchObject({
      start_time: '2026-03-03T13:00:00.000Z',
      end_time: '2026-03-03T13:30:00.000Z',
    });
    const updated = await t.events(acc.id, 'booking.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].booking.start_time).toBe('2026-03-03T13:00:00.000Z');
    const taken = await t.call('PATCH', `/v1/bookings/${a.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T10:15:00Z' },
    });
    expect(taken.status).toBe(409);
    // Its old time is free again.
    expect(
      (
        await t.call('POST', '/v1/bookings', {
          token: acc.key,
          body: { ...customer, start_time: '2026-03-03T09:00:00Z' },
        })
      ).status,
    ).toBe(201);
    const notes = await t.call('PATCH', `/v1/bookings/${b.id}`, {
      token: acc.key,
      body: { notes: 'bring slides' },
    });
    expect((await notes.json()).booking.notes).toBe('bring slides');

    const cancel = await t.call('DELETE', `/v1/bookings/${b.id}?reason=ill`, { token: acc.key });
    expect(cancel.status).toBe(200);
    expect((await cancel.json()).booking).toMatchObject({ status: 'cancelled', cancellation_reason: 'ill' });
    const again = await t.call('DELETE', `/v1/bookings/${b.id}`, { token: acc.key });
    expect(again.status).toBe(200);
    expect((await again.json()).booking.status).toBe('cancelled');
    expect(await t.events(acc.id, 'booking.cancelled')).toHaveLength(1);
    const methods = await t.ctx.db
      .selectFrom('mail_outbox')
      .select('ics_method')
      .where('subject_id', '=', b.id)
      .where('status', '!=', 'skipped')
      .orderBy('seq')
      .execute();
    expect(methods.map((m) => m.ics_method)).toEqual(['REQUEST', 'CANCEL']);
    // The cancelled time can be booked again; a cancelled booking cannot be moved.
    expect(
      (
        await t.call('POST', '/v1/bookings', {
          token: acc.key,
          body: { ...customer, start_time: '2026-03-03T10:00:00Z' },
        })
      ).status,
    ).toBe(201);
    const dead = await t.call('PATCH', `/v1/bookings/${b.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T15:00:00Z' },
    });
    expect(dead.status).toBe(409);
    expect((await dead.json()).code).toBe('booking_not_live');
  });

  it('lists by start time with filters and a cursor', async () => {
    const acc = await t.account();
    for (const start of ['2026-03-04T12:00:00Z', '2026-03-03T12:00:00Z', '2026-03-05T12:00:00Z']) {
      expect(
        (await t.call('POST', '/v1/bookings', { token: acc.key, body: { ...customer, start_time: start } }))
          .status,
      ).toBe(201);
    }
    const first = await (await t.call('GET', '/v1/bookings?limit=2', { token: acc.key })).json();
    expect(first.bookings.map((b: Json) => b.start_time.slice(0, 10))).toEqual(['2026-03-03', '2026-03-04']);
    expect(first.pagination.has_more).toBe(true);
    const second = await (
      await t.call('GET', `/v1/bookings?limit=2&cursor=${first.pagination.next_cursor}`, { token: acc.key })
    ).json();
    expect(second.bookings.map((b: Json) => b.start_time.slice(0, 10))).toEqual(['2026-03-05']);
    const window = await (
      await t.call('GET', '/v1/bookings?from=2026-03-04T00:00:00Z&to=2026-03-05T00:00:00Z', {
        token: acc.key,
      })
    ).json();
    expect(window.bookings).toHaveLength(1);
    expect((await t.call('GET', '/v1/bookings?cursor=abc', { token: acc.key })).status).toBe(400);
    expect((await t.call('GET', '/v1/bookings?status=confirmed', { token: acc.key })).status).toBe(200);
  });

  it('lists only the bookings made through a booking link when given its id', async () => {
    const acc = await t.account();
    const h = await host(acc.key, 'Dr. Ann');
    const l = await link(acc.key, { slug: `listed-${Date.now()}`, host_ids: [h] });
    const viaLink = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, booking_link_id: l.id, start_time: '2026-03-03T13:00:00Z' },
    });
    expect(viaLink.status, await viaLink.clone().text()).toBe(201);
    const direct = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-03T15:00:00Z' },
    });
    expect(direct.status).toBe(201);
    const listed = await (
      await t.call('GET', `/v1/bookings?booking_link_id=${l.id}`, { token: acc.key })
    ).json();
    expect(listed.bookings.map((b: Json) => b.id)).toEqual([(await viaLink.json()).booking.id]);
    const bad = await t.call('GET', '/v1/bookings?booking_link_id=nope', { token: acc.key });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('booking_link_id');
  });
});

describe('booking links on the public surface', () => {
  it('resolves a link without ids or e-mails, shows its slots without booked time, books it, and hands out a working token', async () => {
    const acc = await t.account();
    const h = await host(acc.key, 'Dr. Ann', { email: 'ann@example.com' });
    const l = await link(acc.key, {
      slug: `intro-${Date.now()}`,
      host_ids: [h],
      durations: [30, 60],
      questions: [{ id: 'topic', label: 'Topic', type: 'text', required: true }],
    });
    const view = await t.call('GET', `/v1/public/links/${l.slug}`);
    expect(view.status).toBe(200);
    const text = await view.clone().text();
    expect(text).not.toContain(h);
    expect(text).not.toContain('ann@example.com');
    expect(text).not.toContain(acc.id);
    expect((await view.json()).booking_link).toMatchObject({
      title: 'Intro call',
      hosts: [{ display_name: 'Dr. Ann' }],
      durations: [30, 60],
    });

    const slotsOf = async () =>
      (
        await (
          await t.call(
            'GET',
            `/v1/public/links/${l.slug}/availability?from=2026-03-03T00:00:00Z&to=2026-03-04T00:00:00Z`,
          )
        ).json()
      ).slots.map((s: Json) => s.start.slice(11, 16));
    const before = await slotsOf();
    expect(before[0]).toBe('09:00');
    expect(before).toContain('10:00');

    const missing = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-03T10:00:00Z' },
    });
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors).toHaveProperty(['answers.topic']);
    const wrongLength = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: {
        ...customer,
        start_time: '2026-03-03T10:00:00Z',
        duration_minutes: 45,
        answers: { topic: 'x' },
      },
    });
    expect(wrongLength.status).toBe(400);

    const res = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-03T10:00:00Z', answers: { topic: 'Engines' } },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()).booking;
    expect(created).toMatchObject({
      status: 'confirmed',
      title: 'Intro call',
      hosts: [{ display_name: 'Dr. Ann' }],
      answers: { topic: 'Engines' },
    });
    expect(JSON.stringify(created)).not.toContain(h);
    const after = await slotsOf();
    expect(after).not.toContain('10:00');
    expect(after).not.toContain('09:45');
    expect(after).toContain('10:30');

    const token = created.manage_url.split('/b/')[1];
    const mine = await t.call('GET', `/v1/public/bookings/${token}`);
    expect(mine.status).toBe(200);
    expect((await mine.json()).booking.id).toBe(created.id);
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect((await t.call('GET', `/v1/public/bookings/${forged}`)).status).toBe(404);
    expect((await t.call('GET', '/v1/public/bookings/short')).status).toBe(404);

    const moved = await t.call('POST', `/v1/public/bookings/${token}/reschedule`, {
      body: { start_time: '2026-03-03T15:00:00Z' },
    });
    expect(moved.status).toBe(200);
    expect((await moved.json()).booking.start_time).toBe('2026-03-03T15:00:00.000Z');
    expect(await slotsOf()).toContain('10:00');
    const cancelled = await t.call('POST', `/v1/public/bookings/${token}/cancel`, {
      body: { reason: 'conflict' },
    });
    expect(cancelled.status).toBe(200);
    expect((await cancelled.json()).booking.status).toBe('cancelled');
    expect(await t.events(acc.id, 'booking.cancelled')).toHaveLength(1);
    expect((await t.call('POST', `/v1/public/bookings/${token}/cancel`, { body: {} })).status).toBe(200);
    expect(await t.events(acc.id, 'booking.cancelled')).toHaveLength(1);
  });

  it('is 404 for unknown and inactive links, and for a publishable key of another account', async () => {
    const acc = await t.account();
    const other = await t.account();
    const pk = await (
      await t.call('POST', '/v1/api-keys', {
        token: other.key,
        body: { name: 'widget', key_type: 'publishable' },
      })
    ).json();
    const ownPk = await (
      await t.call('POST', '/v1/api-keys', {
        token: acc.key,
        body: { name: 'widget', key_type: 'publishable' },
      })
    ).json();
    const l = await link(acc.key, { slug: `pk-${Date.now()}` });
    expect((await t.call('GET', '/v1/public/links/no-such-link')).status).toBe(404);
    expect(
      (await t.call('GET', `/v1/public/links/${l.slug}`, { token: pk.api_key?.key ?? pk.key })).status,
    ).toBe(404);
    expect(
      (await t.call('GET', `/v1/public/links/${l.slug}`, { token: ownPk.api_key?.key ?? ownPk.key })).status,
    ).toBe(200);
    // A publishable key books on the public surface, not through /v1/bookings.
    const viaPk = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      token: ownPk.api_key?.key ?? ownPk.key,
      body: { ...customer, start_time: '2026-03-04T09:00:00Z' },
    });
    expect(viaPk.status).toBe(201);
    expect(
      (
        await t.call('POST', '/v1/bookings', {
          token: ownPk.api_key?.key ?? ownPk.key,
          body: { ...customer, start_time: '2026-03-04T11:00:00Z' },
        })
      ).status,
    ).toBe(403);
    await t.call('PATCH', `/v1/booking-links/${l.id}`, { token: acc.key, body: { active: false } });
    expect((await t.call('GET', `/v1/public/links/${l.slug}`)).status).toBe(404);
    expect(
      (
        await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
          body: { ...customer, start_time: '2026-03-04T10:00:00Z' },
        })
      ).status,
    ).toBe(404);
  });

  it('answers a widget’s browser from its allowed domains with CORS and refuses other origins (403)', async () => {
    const acc = await t.account();
    const pk = await (
      await t.call('POST', '/v1/api-keys', {
        token: acc.key,
        body: { name: 'widget', key_type: 'publishable', allowed_domains: ['shop.example'] },
      })
    ).json();
    const key: string = pk.api_key?.key ?? pk.key;
    const l = await link(acc.key, { slug: `cors-${Date.now()}` });
    const path = `/v1/public/links/${l.slug}/availability?from=2026-03-03T00:00:00Z&to=2026-03-04T00:00:00Z`;
    const preflight = await t.call('OPTIONS', path, {
      headers: {
        origin: 'https://www.shop.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://www.shop.example');
    const allowed = await t.call('GET', path, {
      token: key,
      headers: { origin: 'https://www.shop.example' },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://www.shop.example');
    const other = await t.call('GET', path, { token: key, headers: { origin: 'https://evil.example' } });
    expect(other.status).toBe(403);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('without Stripe: a link cannot be priced (422 payments_not_configured on create and update), one priced earlier is never booked for free, the Stripe routes say why', async () => {
    const acc = await t.account();
    const refused = await t.call('POST', '/v1/booking-links', {
      token: acc.key,
      body: { title: 'Paid', slug: `paid-no-${Date.now()}`, price_amount: 5000, price_currency: 'eur' },
    });
    expect(refused.status).toBe(422);
    const why = await refused.json();
    expect(why).toMatchObject({ status: 422, code: 'payments_not_configured' });
    expect(why.detail).toMatch(/cannot be priced/);
    const l = await link(acc.key, { slug: `paid-${Date.now()}` });
    const priced = await t.call('PATCH', `/v1/booking-links/${l.id}`, {
      token: acc.key,
      body: { price_amount: 5000, price_currency: 'eur' },
    });
    expect(priced.status).toBe(422);
    expect((await priced.json()).code).toBe('payments_not_configured');
    const stillFree = await t.call('GET', `/v1/booking-links/${l.id}`, { token: acc.key });
    expect((await stillFree.json()).booking_link).toMatchObject({ price_amount: null, price_currency: null });
    // A link priced while the server had a Stripe key, which it has since lost.
    await t.ctx.db
      .updateTable('booking_links')
      .set({ price_amount: 5000, price_currency: 'eur' })
      .where('id', '=', l.id)
      .execute();
    const res = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-04T10:00:00Z' },
    });
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe('payments_not_configured');
    expect((await t.call('GET', `/v1/public/links/${l.slug}`)).status).toBe(200);
    const hook = await t.call('POST', '/v1/payments/stripe/webhook', { body: { id: 'evt_1' } });
    expect(hook.status).toBe(404);
    expect((await hook.json()).code).toBe('payments_not_configured');
    for (const [method, path] of [
      ['POST', '/v1/stripe/connect'],
      ['GET', '/v1/stripe/account'],
    ] as const) {
      const stripe = await t.call(method, path, { token: acc.key });
      expect(stripe.status).toBe(422);
      const problem = await stripe.json();
      expect(problem.code).toBe('payments_not_configured');
      expect(problem.detail).not.toMatch(/link/);
      expect(problem.detail).toMatch(/Payments are not configured on this server/);
    }
  });

  it('round robin spreads bookings evenly over free hosts and falls back to a free one', async () => {
    const acc = await t.account();
    const hosts = [await host(acc.key, 'A'), await host(acc.key, 'B'), await host(acc.key, 'C')];
    const l = await link(acc.key, { slug: `rr-${Date.now()}`, host_ids: hosts, assignment: 'round_robin' });
    const counts = new Map<string, number>();
    for (let i = 0; i < 9; i++) {
      const start = new Date(Date.parse('2026-03-03T09:00:00Z') + i * 30 * 60_000).toISOString();
      const res = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
        body: { ...customer, start_time: start },
      });
      expect(res.status).toBe(201);
    }
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select('principal_id')
      .where('booking_link_id', '=', l.id)
      .execute();
    for (const r of rows) counts.set(r.principal_id, (counts.get(r.principal_id) ?? 0) + 1);
    expect([...counts.values()]).toEqual([3, 3, 3]);
    // Three bookings of one slot take the three hosts; the fourth finds none free.
    const same = await Promise.all(
      [0, 1, 2, 3].map(() =>
        t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
          body: { ...customer, start_time: '2026-03-04T09:00:00Z' },
        }),
      ),
    );
    expect(same.map((r) => r.status).sort()).toEqual([201, 201, 201, 409]);
  });

  it('a rescheduled collective booking moves every host’s time', async () => {
    const acc = await t.account();
    const a = await host(acc.key, 'A');
    const b = await host(acc.key, 'B');
    const l = await link(acc.key, { slug: `pair-${Date.now()}`, host_ids: [a, b], assignment: 'collective' });
    const made = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-06T10:00:00Z' },
    });
    expect(made.status).toBe(201);
    const token = (await made.json()).booking.manage_url.split('/b/')[1];
    const moved = await t.call('POST', `/v1/public/bookings/${token}/reschedule`, {
      body: { start_time: '2026-03-06T14:00:00Z' },
    });
    expect(moved.status).toBe(200);
    const single = (principal: string, start: string) =>
      t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, principal_id: principal, start_time: start },
      });
    for (const h of [a, b]) {
      expect((await single(h, '2026-03-06T14:00:00Z')).status).toBe(409);
      expect((await single(h, '2026-03-06T10:00:00Z')).status).toBe(201);
    }
  });

  it('a collective link racing single-host bookings of one of its hosts: one of them wins', async () => {
    const acc = await t.account();
    const a = await host(acc.key, 'A');
    const b = await host(acc.key, 'B');
    const l = await link(acc.key, { slug: `team-${Date.now()}`, host_ids: [a, b], assignment: 'collective' });
    const results = await Promise.all([
      ...Array.from({ length: 10 }, () =>
        t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
          body: { ...customer, start_time: '2026-03-05T10:00:00Z' },
        }),
      ),
      ...Array.from({ length: 10 }, () =>
        t.call('POST', '/v1/bookings', {
          token: acc.key,
          body: { ...customer, principal_id: b, start_time: '2026-03-05T10:00:00Z' },
        }),
      ),
    ]);
    const statuses = results.map((r) => r.status);
    const bodies = await Promise.all(results.map((r) => r.clone().text()));
    expect(
      statuses.filter((s) => s === 201),
      bodies.join('\n'),
    ).toHaveLength(1);
    expect(
      statuses.filter((s) => s === 409),
      bodies.filter((b) => !b.includes('slot_unavailable')).join('\n'),
    ).toHaveLength(19);
    // Host A alone is free at that time unless the collective booking won.
    const won = results.findIndex((r) => r.status === 201);
    const collectiveWon = won < 10;
    const aAlone = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, principal_id: a, start_time: '2026-03-05T10:00:00Z' },
    });
    expect(aAlone.status).toBe(collectiveWon ? 409 : 201);
    if (collectiveWon) {
      const booking = (
        await (await t.call('GET', `/v1/bookings?principal_id=${a}`, { token: acc.key })).json()
      ).bookings[0];
      expect(booking.host_ids.sort()).toEqual([a, b].sort());
    }
  });
});
