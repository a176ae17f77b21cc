/**
 * POST /v1/bookings on the real runtime and database (docs/api.md#bookings): creation and its rules,
 * field checks, titles, the schedule re-checked under a lock, idempotency, and the exclusion
 * constraint under racing requests.
 */
import { describe, expect, it } from 'vitest';
import { bookingsApp, customer, lockWaiters } from '../../../test/helpers/bookings.js';
import { waitUntil } from '../../../test/helpers/promises.js';
import { DEFAULT_SCHEDULE } from '../../lib/schedule.js';
import { lockForChange, upsertSchedule } from '../principals/repo.js';

const { clock, t, host, link } = bookingsApp();

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
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', duration_minutes: 4 }, 'duration_minutes'],
      [{ ...customer, customer_name: '   ', start_time: '2026-03-03T10:00:00Z' }, 'customer_name'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', metadata: { a: 'x'.repeat(501) } }, 'metadata.a'],
      [
        { ...customer, start_time: '2026-03-03T10:00:00Z', metadata: { ['k'.repeat(41)]: 'v' } },
        `metadata.${'k'.repeat(41)}`,
      ],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', metadata: { '': 'v' } }, 'metadata'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', principal_id: 'nope' }, 'principal_id'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', booking_link_id: 'link_x' }, 'booking_link_id'],
      [{ ...customer, start_time: '2026-03-03T10:00:00Z', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/v1/bookings', { token: acc.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = await res.json();
      expect(problem.type, JSON.stringify(problem)).toMatch(/\/errors\/validation-error$/);
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
      // The booking has made its checks and waits for the lock on the host's row.
      await waitUntil('the booking to wait for the host’s lock', async () => (await lockWaiters(t)) > 0);
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
