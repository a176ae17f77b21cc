/**
 * Consents, connections and invitations in test mode (docs/api.md#test-mode): made in the key's mode,
 * found only by it, and a test-mode consent expires on the account's test clock.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';
import { HOUR } from '../../lib/time.js';

const { t, clock } = clockedApp({ at: '2026-03-02T06:00:00.000Z' });
afterEach(() => {
  vi.restoreAllMocks();
});

/** The messages handed to the mail outbox from now on (the mail module decides what a test mail becomes). */
function spyMails(): { subjectId: string | null; livemode: boolean | undefined }[] {
  const seen: { subjectId: string | null; livemode: boolean | undefined }[] = [];
  const mail = t.ctx.modules.mail;
  const real = mail.enqueue.bind(mail);
  vi.spyOn(mail, 'enqueue').mockImplementation((trx, messages, batch) => {
    for (const m of messages) seen.push({ subjectId: m.subjectId ?? null, livemode: m.livemode });
    return real(trx, messages, batch);
  });
  return seen;
}

async function grant(token: string, body: Record<string, unknown>) {
  const res = await t.call('POST', '/v1/consents', { token, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).consent;
}

describe('consents in test mode', () => {
  it('a live and a test-mode consent of one pair stand side by side, each 404 and unlisted to the other mode', async () => {
    const u = await fixtures.signedInUser(t, { prefix: 'consmode' });
    const test = await testKeyFor(t, u.key);
    const body = { grantee_id: u.id, scopes: ['availability:read:freebusy'] };
    const live = await grant(u.key, body);
    const testConsent = await grant(test.key, body);
    expect(live.livemode).toBe(true);
    expect(testConsent.livemode).toBe(false);
    expect(testConsent.id).not.toBe(live.id);

    for (const [token, other] of [
      [u.key, testConsent.id],
      [test.key, live.id],
    ] as const) {
      expect((await t.call('GET', `/v1/consents/${other}`, { token })).status).toBe(404);
      expect((await t.call('DELETE', `/v1/consents/${other}`, { token })).status).toBe(404);
    }
    const ids = async (token: string) =>
      (await (await t.call('GET', '/v1/consents', { token })).json()).consents.map(
        (c: { id: string }) => c.id,
      );
    expect(await ids(u.key)).toEqual([live.id]);
    expect(await ids(test.key)).toEqual([testConsent.id]);

    // Revoking the test-mode one leaves the live one active.
    const revoked = await t.call('DELETE', `/v1/consents/${testConsent.id}`, { token: test.key });
    expect((await revoked.json()).consent.status).toBe('revoked');
    expect(
      (await (await t.call('GET', `/v1/consents/${live.id}`, { token: u.key })).json()).consent.status,
    ).toBe('active');
  });

  it('a test-mode consent expires when the test clock passes its end, with consent.revoked at that time, before the advance answers; a live one is untouched', async () => {
    const u = await fixtures.signedInUser(t, { prefix: 'consexp' });
    const test = await testKeyFor(t, u.key);
    const end = new Date(clock.nowMs() + HOUR).toISOString();
    const body = { grantee_id: u.id, scopes: ['availability:read:freebusy'], expires_at: end };
    const live = await grant(u.key, body);
    const testConsent = await grant(test.key, body);

    // The live reaper leaves test-mode consents alone (and has nothing live due yet).
    await t.ctx.modules.network.expireConsents();
    await advanceTestClock(t, test.key, 2 * 3600);

    const stored = async (id: string) =>
      t.ctx.db
        .selectFrom('consents')
        .select(['status', 'livemode'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    expect(await stored(testConsent.id)).toEqual({ status: 'expired', livemode: false });
    expect(await stored(live.id)).toEqual({ status: 'active', livemode: true });
    const events = await t.ctx.db
      .selectFrom('events')
      .select(['livemode', 'created_at', 'envelope'])
      .where('account_id', '=', u.accountId)
      .where('type', '=', 'consent.revoked')
      .execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(events[0]!.created_at.toISOString()).toBe(end);
    expect(JSON.parse(events[0]!.envelope)).toMatchObject({ livemode: false, created_at: end });
  });
});

describe('invitations and connections in test mode', () => {
  it('an invitation of a test key is of test mode, listed in test mode only, beside a live one to the same address', async () => {
    const inviter = await fixtures.signedInUser(t, { prefix: 'invmode' });
    const test = await testKeyFor(t, inviter.key);
    const enqueued = spyMails();
    const email = `invitee-${Date.now()}@example.com`;
    const made = await t.call('POST', '/v1/network/invitations', {
      token: test.key,
      body: { invitee_email: email, relationship_type: 'colleague' },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const inv = (await made.json()).invitation;
    expect(inv.livemode).toBe(false);
    const list = async (token: string) =>
      (await (await t.call('GET', '/v1/network/invitations', { token })).json()).invitations.map(
        (i: { id: string }) => i.id,
      );
    expect(await list(test.key)).toEqual([inv.id]);
    expect(await list(inviter.key)).toEqual([]);

    // The same address invited live is another invitation (one pending per mode).
    const liveMade = await t.call('POST', '/v1/network/invitations', {
      token: inviter.key,
      body: { invitee_email: email, relationship_type: 'colleague' },
    });
    expect(liveMade.status).toBe(201);
    const liveInv = (await liveMade.json()).invitation;
    expect(liveInv.id).not.toBe(inv.id);
    expect(liveInv.livemode).toBe(true);
    expect(await list(inviter.key)).toEqual([liveInv.id]);

    // Its mail is handed to the mail outbox as of test mode (kept, never sent).
    const modes = enqueued.flatMap((m) => (m.subjectId === inv.id ? [m.livemode] : []));
    expect(modes).toEqual([false]);

    // Connections are listed per mode: none in either yet.
    for (const token of [inviter.key, test.key]) {
      expect((await (await t.call('GET', '/v1/network', { token })).json()).connections).toEqual([]);
    }
  });
});
