import { describe, expect, it } from 'vitest';
import type { Json, TestApp } from '../helpers/app.js';
import { pgBouncerAvailable } from '../helpers/pgbouncer.js';
import { callServer, type ServerProcess, useTwoServers } from '../helpers/process.js';
import { nextWeekdayAt } from '../helpers/slots.js';
import { newHost, serverAt } from '../helpers/fixtures.js';

/**
 * Two `kairos serve` processes behind PgBouncer in transaction mode, configured as docs/operations.md
 * (Poolers) says: DATABASE_URL names PgBouncer, DATABASE_LISTEN_URL the server, no named statements.
 * Every pass of the suite runs this file; CI's PostgreSQL pass runs every two-process file this way.
 */
const run = pgBouncerAvailable();
let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers((s) => ({ t, a, b } = s), {}, { pooler: 'pgbouncer', skip: !run });

const nextWednesdayAt = (hour: number): string => nextWeekdayAt(3, hour).toISOString();

describe.skipIf(!run)('through PgBouncer in transaction mode', () => {
  it('100 racing bookings for one slot across both processes: one 201, 99 409 slot_unavailable, none 5xx', async () => {
    const acc = await t.account();
    const host = await newHost(
      serverAt(a.url),
      { token: acc.key },
      { display_name: 'Pooled', timezone: 'UTC' },
    );
    const body = {
      principal_id: host,
      start_time: nextWednesdayAt(11),
      customer_email: 'ada@example.com',
      customer_name: 'Ada',
    };
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const res = await callServer(i % 2 ? a.url : b.url, 'POST', '/v1/bookings', acc.key, body);
        const answer = (await res.json()) as Json;
        const status = res.status === 201 ? '201' : `${res.status} ${answer.code}`;
        return { status, ms: Math.round(performance.now() - started) };
      }),
    );
    const statuses = answers.map((x) => x.status);
    // On failure the message says which answers came and when (a stall shows as late answers).
    const outcome = answers.map((x) => `${x.status} @${x.ms}ms`).join(', ');
    expect(
      statuses.filter((s) => s === '201'),
      outcome,
    ).toHaveLength(1);
    expect(
      statuses.filter((s) => s === '409 slot_unavailable'),
      outcome,
    ).toHaveLength(99);
  });

  it('a key revoked through process A is refused by process B at once (LISTEN on the direct connection)', async () => {
    const acc = await t.account();
    const made = await callServer(a.url, 'POST', '/v1/api-keys', acc.key, { name: 'pooled' });
    expect(made.status).toBe(201);
    const key = ((await made.json()) as Json).api_key as { id: string; key: string };
    expect((await callServer(b.url, 'GET', '/v1/me', key.key)).status).toBe(200);
    expect((await callServer(a.url, 'DELETE', `/v1/api-keys/${key.id}`, acc.key)).status).toBe(200);
    expect((await callServer(b.url, 'GET', '/v1/me', key.key)).status).toBe(401);
  });
});
