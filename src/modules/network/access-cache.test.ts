/**
 * The access rule's remembered answers (service.ts `readGrants`): a read under a consent is answered
 * from memory until a consent or connection of the reader changes (NOTIFY from the triggers of
 * migration 0018), never past the consent's end, and a revocation or a removed connection is heard
 * by the next read. Across processes: test/e2e/network-two-processes.test.ts.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { serveCalendar, vcalendar } from '../../../test/helpers/ics.js';
import { FakeClock } from '../../platform/clock.js';

const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
const MINUTE = 60_000;
let t: TestApp;
let feed: Awaited<ReturnType<typeof serveCalendar>> | undefined;

beforeAll(async () => {
  feed = await serveCalendar(vcalendar('\r\n', []));
  t = await startTestApp({ clock, env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
});
afterAll(async () => {
  await t?.close();
  await feed?.close();
});

let users = 0;
/** A user of a new account, signed in, with an ICS calendar connected. */
async function user(): Promise<{ id: string; token: string }> {
  const acc = await t.account();
  const email = `cache${++users}-${Date.now()}@example.com`;
  await t.ctx.modules.accounts.createUser({ accountId: acc.id, email, password: fixtures.PASSWORD });
  const { token, id } = await fixtures.signIn(t, email);
  const c = await t.call('POST', '/v1/calendars/ics', { token, body: { url: feed!.url } });
  expect(c.status, await c.clone().text()).toBe(201);
  return { id, token };
}

/** The status of the grantee's read of the grantor's slots, under `consentId` or without one. */
async function read(token: string, grantor: string, consentId?: string): Promise<number> {
  const q = new URLSearchParams({
    principal_id: grantor,
    duration_minutes: '30',
    from: '2026-03-03T00:00:00Z',
    to: '2026-03-05T00:00:00Z',
    ...(consentId ? { consent_id: consentId } : {}),
  });
  return (await t.call('GET', `/v1/availability/slots?${q}`, { token })).status;
}

async function grant(grantor: { token: string }, granteeId: string, expiresAt?: string): Promise<string> {
  const res = await t.call('POST', '/v1/consents', {
    token: grantor.token,
    body: {
      grantee_id: granteeId,
      scopes: ['availability:read:freebusy'],
      ...(expiresAt ? { expires_at: expiresAt } : {}),
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).consent.id;
}

/** Changes a consent's row with the store's triggers off: no NOTIFY, so no process hears of it. */
async function silently(consentId: string, status: 'revoked' | 'active'): Promise<void> {
  await t.ctx.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL session_replication_role = replica`.execute(trx);
    await sql`UPDATE consents SET status = ${status} WHERE id = ${consentId}`.execute(trx);
  });
}

describe('the access rule’s remembered answers', () => {
  it('answers a repeated read from memory, and drops it when the store announces a change to the consent', async () => {
    clock.set(T0);
    const owner = await user();
    const reader = await user();
    const consent = await grant(owner, reader.id);
    expect(await read(reader.token, owner.id, consent)).toBe(200);
    expect(await read(reader.token, owner.id)).toBe(200);

    // Revoked behind the module's back (no trigger, no NOTIFY): the remembered answer still reads.
    await silently(consent, 'revoked');
    expect(await read(reader.token, owner.id, consent)).toBe(200);
    expect(await read(reader.token, owner.id)).toBe(200);

    // Any write the triggers see announces the reader: both questions are asked of the store again.
    await sql`UPDATE consents SET updated_at = now() WHERE id = ${consent}`.execute(t.ctx.db);
    await expect.poll(() => read(reader.token, owner.id, consent), { timeout: 3000 }).toBe(403);
    expect(await read(reader.token, owner.id)).toBe(403);
  });

  it('refuses the next read after a revocation through the API, and never reads past a consent’s end', async () => {
    clock.set(T0);
    const owner = await user();
    const reader = await user();
    const consent = await grant(owner, reader.id);
    expect(await read(reader.token, owner.id, consent)).toBe(200);
    const revoked = await t.call('DELETE', `/v1/consents/${consent}`, { token: owner.token });
    expect(revoked.status).toBe(200);
    expect(await read(reader.token, owner.id, consent)).toBe(403);
    expect(await read(reader.token, owner.id)).toBe(403);

    // A consent ending in 30 minutes, remembered, then read one second after its end: refused, with
    // the reaper not yet run (the row still says active).
    const ending = await grant(owner, reader.id, new Date(clock.nowMs() + 30 * MINUTE).toISOString());
    expect(await read(reader.token, owner.id, ending)).toBe(200);
    expect(await read(reader.token, owner.id)).toBe(200);
    clock.advance(30 * MINUTE + 1000);
    expect(await read(reader.token, owner.id, ending)).toBe(403);
    expect(await read(reader.token, owner.id)).toBe(403);
  });

  it('hears a consent granted again after a silent revocation (a grant announces the reader too)', async () => {
    clock.set(T0);
    const owner = await user();
    const reader = await user();
    const consent = await grant(owner, reader.id);
    await silently(consent, 'revoked');
    // Not remembered yet: the store says revoked.
    expect(await read(reader.token, owner.id)).toBe(403);
    const again = await grant(owner, reader.id);
    expect(again).not.toBe(consent);
    expect(await read(reader.token, owner.id, again)).toBe(200);
    expect(await read(reader.token, owner.id)).toBe(200);
  });
});
