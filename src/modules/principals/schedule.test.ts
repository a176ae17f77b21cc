import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { waitForLockWaiter } from '../../../test/helpers/db.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { waitUntil } from '../../../test/helpers/promises.js';
import { DEFAULT_SCHEDULE } from '../../lib/schedule.js';
import { lockForChange, lockWithSchedules, upsertSchedule } from './repo.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const host = (token: string, body: Record<string, unknown> = {}) => newHost(t, { token }, body);

const WEEKDAYS_9_TO_5 = ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({
  day,
  start: '09:00',
  end: '17:00',
}));

describe('schedules', () => {
  it('answers the default schedule (Mon–Fri 09:00–17:00, principal’s zone) until one is set', async () => {
    const acc = await t.account();
    const id = await host(acc.key, { timezone: 'America/New_York' });
    const res = await t.call('GET', `/v1/principals/${id}/schedule`, { token: acc.key });
    expect(res.status).toBe(200);
    expect((await res.json()).schedule).toEqual({
      timezone: 'America/New_York',
      weekly: WEEKDAYS_9_TO_5,
      overrides: [],
      buffer_before_minutes: 0,
      buffer_after_minutes: 0,
      minimum_notice_minutes: 0,
      max_days_ahead: 60,
    });
    // the default follows the principal's zone
    await t.call('PATCH', `/v1/hosts/${id}`, { token: acc.key, body: { timezone: 'Asia/Tokyo' } });
    const after = await (await t.call('GET', `/v1/principals/${id}/schedule`, { token: acc.key })).json();
    expect(after.schedule.timezone).toBe('Asia/Tokyo');
  });

  it('stores a full schedule (several intervals a day, overrides, buffers) and reads it back', async () => {
    const acc = await t.account();
    const id = await host(acc.key);
    const schedule = {
      timezone: 'Europe/London',
      weekly: [
        { day: 'mon', start: '09:00', end: '12:00' },
        { day: 'mon', start: '13:00', end: '17:30' },
        { day: 'sat', start: '10:00', end: '24:00' },
      ],
      overrides: [
        { date: '2026-12-25', unavailable: true },
        { date: '2026-12-24', intervals: [{ start: '09:00', end: '12:00' }] },
      ],
      buffer_before_minutes: 10,
      buffer_after_minutes: 5,
      minimum_notice_minutes: 120,
      max_days_ahead: 30,
    };
    const put = await t.call('PUT', `/v1/principals/${id}/schedule`, { token: acc.key, body: schedule });
    expect(put.status).toBe(200);
    expect((await put.json()).schedule).toEqual(schedule);
    const got = await (await t.call('GET', `/v1/principals/${id}/schedule`, { token: acc.key })).json();
    expect(got.schedule).toEqual(schedule);

    // fields left out take their defaults
    const partial = await t.call('PUT', `/v1/principals/${id}/schedule`, {
      token: acc.key,
      body: { weekly: [{ day: 'tue', start: '08:00', end: '10:00' }] },
    });
    expect((await partial.json()).schedule).toMatchObject({
      timezone: 'UTC',
      overrides: [],
      buffer_before_minutes: 0,
      max_days_ahead: 60,
    });
  });

  it('takes back what GET answers: {"schedule": …} round-trips through PUT', async () => {
    const acc = await t.account();
    const id = await host(acc.key, { timezone: 'Europe/Berlin' });
    const read = await (await t.call('GET', `/v1/principals/${id}/schedule`, { token: acc.key })).json();
    read.schedule.buffer_after_minutes = 15;
    const put = await t.call('PUT', `/v1/principals/${id}/schedule`, { token: acc.key, body: read });
    expect(put.status, await put.clone().text()).toBe(200);
    expect((await put.json()).schedule).toEqual(read.schedule);
  });

  it('rejects invalid schedules with a message per field path', async () => {
    const acc = await t.account();
    const id = await host(acc.key);
    const res = await t.call('PUT', `/v1/principals/${id}/schedule`, {
      token: acc.key,
      body: {
        timezone: 'Mars/Base',
        weekly: [
          { day: 'mon', start: '17:00', end: '09:00' },
          { day: 'funday', start: '9am', end: '10:00' },
        ],
        overrides: [{ date: '2026-02-30', unavailable: true }],
        buffer_before_minutes: -1,
        colour: 'blue',
      },
    });
    expect(res.status).toBe(400);
    const problem = await res.json();
    expect(problem.type).toMatch(/\/errors\/validation-error$/);
    expect(problem.errors).toMatchObject({
      timezone: 'must be a valid IANA time zone',
      'weekly.0.end': 'must be after start',
      'weekly.1.day': expect.stringContaining('must be one of'),
      'weekly.1.start': 'must be HH:MM',
      'overrides.0.date': 'must be a date YYYY-MM-DD',
      buffer_before_minutes: expect.stringContaining('must be an integer'),
      colour: 'is not a known field',
    });
    // nothing was stored
    const got = await (await t.call('GET', `/v1/principals/${id}/schedule`, { token: acc.key })).json();
    expect(got.schedule.timezone).toBe('UTC');
    for (const body of ['[]', '"x"']) {
      const r = await t.call('PUT', `/v1/principals/${id}/schedule`, { token: acc.key, body });
      expect(r.status).toBe(400);
    }
  });

  it('allows the caller itself and its managed hosts, else 403 (also for unknown ids)', async () => {
    const acc = await t.account();
    const other = await t.account();
    const mine = await host(acc.key);
    const theirs = await host(other.key);
    const get = (token: string, id: string) => t.call('GET', `/v1/principals/${id}/schedule`, { token });
    expect((await get(acc.key, acc.id)).status).toBe(200);
    expect((await get(acc.key, mine)).status).toBe(200);
    const denied = await get(acc.key, theirs);
    expect(denied.status).toBe(403);
    expect((await denied.json()).type).toMatch(/\/errors\/forbidden$/);
    expect((await get(acc.key, other.id)).status).toBe(403);
    expect((await get(acc.key, '01900000-0000-7000-8000-000000000000')).status).toBe(403);
    const put = await t.call('PUT', `/v1/principals/${theirs}/schedule`, {
      token: acc.key,
      body: { weekly: [] },
    });
    expect(put.status).toBe(403);
    // a deleted host is no longer manageable
    await t.call('DELETE', `/v1/hosts/${mine}`, { token: acc.key });
    expect((await get(acc.key, mine)).status).toBe(403);
  });

  it('lets a signed-in user manage its own schedule, its account’s and the account’s hosts', async () => {
    const acc = await t.account();
    const user = await t.ctx.modules.accounts.createUser({
      accountId: acc.id,
      email: `u${Date.now()}@example.com`,
      password: 'correct horse battery',
    });
    const signIn = await t.call('POST', '/v1/sessions', {
      body: { email: user.email, password: 'correct horse battery' },
    });
    const token = (await signIn.json()).session.token;
    const h = await host(acc.key);
    for (const id of [user.id, acc.id, h]) {
      const res = await t.call('PUT', `/v1/principals/${id}/schedule`, {
        token,
        body: { weekly: [{ day: 'wed', start: '10:00', end: '11:00' }] },
      });
      expect(res.status, id).toBe(200);
    }
    // the account's secret key does not reach the user (a user is not a host)
    expect((await t.call('GET', `/v1/principals/${user.id}/schedule`, { token: acc.key })).status).toBe(403);
  });

  it('drops cached schedules in every process when one changes (NOTIFY)', async () => {
    const t2 = await startTestApp({ database: t.database, masterKey: t.masterKey });
    try {
      const acc = await t.account();
      const id = await host(acc.key);
      const read = async () =>
        (await (await t2.call('GET', `/v1/principals/${id}/schedule`, { token: acc.key })).json()).schedule;
      expect((await read()).weekly).toEqual(WEEKDAYS_9_TO_5); // now cached by the second process
      const weekly = [{ day: 'sun', start: '10:00', end: '11:00' }];
      await t.call('PUT', `/v1/principals/${id}/schedule`, { token: acc.key, body: { weekly } });
      let seen = await read();
      await waitUntil('the second process to read the new schedule', async () => {
        seen = await read();
        return seen.weekly[0].day === 'sun';
      });
      expect(seen.weekly).toEqual(weekly);
      // a deleted host disappears for the other process too
      await t.call('DELETE', `/v1/hosts/${id}`, { token: acc.key });
      let status = 200;
      await waitUntil('the second process to stop serving the deleted host', async () => {
        status = (await t2.call('GET', `/v1/principals/${id}/schedule`, { token: acc.key })).status;
        return status !== 200;
      });
      expect(status).toBe(403);
    } finally {
      await t2.close();
    }
  });

  it('locks principals and reads each schedule as a change it waited for left it (written, replaced, untouched)', async () => {
    const acc = await t.account();
    const put = (id: string, weekly: unknown) =>
      t.call('PUT', `/v1/principals/${id}/schedule`, { token: acc.key, body: { weekly } });
    const [fresh, replaced, untouched] = [await host(acc.key), await host(acc.key), await host(acc.key)];
    expect((await put(replaced, [{ day: 'mon', start: '08:00', end: '09:00' }])).status).toBe(200);
    expect((await put(untouched, [{ day: 'tue', start: '08:00', end: '09:00' }])).status).toBe(200);
    const sunday = [{ day: 'sun' as const, start: '10:00', end: '11:00' }];
    let read: ReturnType<typeof lockWithSchedules> | undefined;
    let committed = false;
    await t.ctx.db.transaction().execute(async (change) => {
      // Two schedule changes in progress, as PUT makes them: each row locked, then its schedule written.
      for (const id of [fresh, replaced]) {
        await lockForChange(change, id);
        await upsertSchedule(change, id, { ...DEFAULT_SCHEDULE('UTC'), weekly: sunday }, new Date());
      }
      read = t.ctx.db.transaction().execute(async (booking) => {
        const rows = await lockWithSchedules(booking, [untouched, replaced, fresh]);
        expect(committed).toBe(true); // it waited for the change
        return rows;
      });
      await waitForLockWaiter(t.ctx.db, 'the reader');
      committed = true;
    });
    const rows = new Map((await read!).map((r) => [r.id, r.schedule?.weekly]));
    expect(rows.get(fresh)).toEqual(sunday);
    expect(rows.get(replaced)).toEqual(sunday);
    expect(rows.get(untouched)).toEqual([{ day: 'tue', start: '08:00', end: '09:00' }]);
  });
});
