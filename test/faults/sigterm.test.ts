import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { spawnServer } from '../helpers/process.js';
import { waitUntil } from '../helpers/promises.js';
import { weekdaySlots } from '../helpers/slots.js';

/**
 * SIGTERM while a `kairos serve` process takes bookings (docs/operations.md, Shutdown): the requests in
 * flight finish and are answered; one that still arrives is 503 problem+json `shutting_down`; the
 * process exits 0 with nothing claimed. The check that no answer was lost: every booking in the store
 * was answered 201 to its client (a request cut mid-way would have written a booking nobody heard of).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('SIGTERM under load', () => {
  it('in-flight bookings finish and are answered, late ones get 503 problem+json shutting_down, no other 5xx, the process exits 0 with no job left claimed', async () => {
    const server = await spawnServer({ DATABASE_URL: t.database.url, KAIROS_MASTER_KEY: t.masterKey });
    const acc = await t.account();
    const hostRes = await fetch(`${server.url}/v1/hosts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acc.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Draining host', timezone: 'UTC' }),
    });
    expect(hostRes.status).toBe(201);
    const host = ((await hostRes.json()) as { host: { principal_id: string } }).host.principal_id;

    const next = weekdaySlots();
    const answers: { email: string; status: number; type: string; code?: string }[] = [];
    let stop = false;
    const worker = async (w: number) => {
      for (let n = 0; !stop; n++) {
        const email = `drain-${w}-${n}@example.com`;
        try {
          const res = await fetch(`${server.url}/v1/bookings`, {
            method: 'POST',
            headers: { authorization: `Bearer ${acc.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              principal_id: host,
              start_time: next.next().value,
              customer_email: email,
              customer_name: 'Drain',
            }),
            signal: AbortSignal.timeout(20_000),
          });
          const body = (await res.json()) as { code?: string };
          answers.push({
            email,
            status: res.status,
            type: res.headers.get('content-type') ?? '',
            code: body.code,
          });
        } catch {
          // Refused or cut: no answer. Once the listener is closed that is expected; the store says
          // below whether any such request had been taken in.
          answers.push({ email, status: 0, type: '' });
          if (server.child.exitCode !== null) return;
          // A client's pause before asking again (real time, not a wait for anything).
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
    await waitUntil(
      '30 bookings before the SIGTERM',
      () => answers.filter((a) => a.status === 201).length >= 30,
      60_000,
      50,
    );
    const code = await server.stop('SIGTERM');
    stop = true;
    await load;

    expect(code, server.output()).toBe(0);
    expect(server.output()).toContain('shutdown complete');
    const odd = answers.filter(
      (a) => a.status !== 201 && a.status !== 0 && !(a.status === 503 && a.code === 'shutting_down'),
    );
    expect(odd).toEqual([]);
    for (const a of answers.filter((x) => x.status === 503))
      expect(a.type).toMatch(/^application\/problem\+json/);

    // Every booking the process made was answered: none was cut after it wrote.
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select('customer_email')
      .where('principal_id', '=', host)
      .execute();
    const answered = new Set(answers.filter((a) => a.status === 201).map((a) => a.email));
    expect(rows.map((r) => r.customer_email).filter((e) => !answered.has(e))).toEqual([]);
    expect(rows).toHaveLength(answered.size);
    // Nothing is left claimed by the process that stopped.
    const claimed = await t.ctx.db
      .selectFrom('jobs')
      .select(['queue', 'locked_by'])
      .where('locked_until', '>', new Date())
      .execute();
    expect(claimed).toEqual([]);
  }, 90_000);
});
