/**
 * What the booking route tests share (src/modules/bookings/*.test.ts): one app per file on a clock
 * standing at Monday 2 March 2026, 06:00 UTC (accounts and hosts default to Mon–Fri 09:00–17:00 UTC),
 * a customer, and hosts and links made over HTTP.
 */
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Json, TestApp } from './app.js';
import { clockedApp } from './clocked-app.js';
import { newHost } from './fixtures.js';

export const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };

export function bookingsApp() {
  const { clock, t } = clockedApp({ at: '2026-03-02T06:00:00.000Z' });
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
  return { clock, t, host, link };
}

/** Sessions of the app's database waiting for a lock (a lock request not yet granted). */
export async function lockWaiters(t: Pick<TestApp, 'ctx'>): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE NOT l.granted AND a.datname = current_database()`.execute(t.ctx.db);
  return rows[0]!.n;
}
