/**
 * Consents and the network over HTTP on the real runtime, with invitation mails to a real SMTP server
 * (docs/api.md#consents, #network): grant, merge, list, revoke, expire (with their events, to both
 * parties' accounts), racing grants, invitations and their tokens, racing accepts, connections.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { serveCalendar, vcalendar } from '../../../test/helpers/ics.js';
import { genericPlan } from '../../../test/helpers/plans.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { expireConsentsQuery, lockActiveConsentQuery } from './repo.js';
import { DAY } from '../../lib/time.js';

const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
let t: TestApp;
let sink: SmtpSink;
let feed: Awaited<ReturnType<typeof serveCalendar>> | undefined;
let feedUrl: string;

beforeAll(async () => {
  sink = await startSmtpSink();
  // A calendar with one titled event on Tuesday 3 March 10:00–11:00 UTC.
  const ics = vcalendar('\r\n', [
    'BEGIN:VEVENT',
    'UID:dentist@test',
    'DTSTAMP:20260101T000000Z',
    'DTSTART:20260303T100000Z',
    'DTEND:20260303T110000Z',
    'SUMMARY:Dentist',
    'END:VEVENT',
  ]);
  feed = await serveCalendar(ics);
  feedUrl = feed.url;
  t = await startTestApp({ clock, env: { SMTP_URL: sink.url, KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
  await feed?.close();
});
beforeEach(() => clock.set(T0));

/** A new account with a user signed in: its key, the user's principal id and session token. */
const user = (email?: string) => fixtures.signedInUser(t, email === undefined ? {} : { email });

/** A fresh session for a user (sessions last an hour: tests that move the clock sign in again). */
const signIn = async (email: string): Promise<string> => (await fixtures.signIn(t, email)).token;

const grant = (token: string, body: Record<string, unknown>) =>
  t.call('POST', '/v1/consents', { token, body });

describe('consents', () => {
  it('grants (201), merges a second grant into the same consent (200), and tells both accounts', async () => {
    const a = await user();
    const b = await user();
    const first = await grant(a.token, { grantee_id: b.id, scopes: ['availability:read:freebusy'] });
    expect(first.status).toBe(201);
    const { consent } = await first.json();
    expect(consent).toMatchObject({
      grantor_id: a.id,
      grantee_id: b.id,
      scopes: ['availability:read:freebusy'],
      status: 'active',
      expires_at: null,
      revoked_at: null,
    });
    expect(consent.id).toMatch(/^cons_/);
    const second = await grant(a.token, {
      grantee_id: b.id,
      scopes: ['booking:propose', 'availability:read:freebusy'],
    });
    expect(second.status).toBe(200);
    const merged = (await second.json()).consent;
    expect(merged.id).toBe(consent.id);
    expect(merged.scopes).toEqual(['availability:read:freebusy', 'booking:propose']);
    // The same grant again changes nothing and announces nothing.
    expect((await grant(a.token, { grantee_id: b.id, scopes: ['booking:propose'] })).status).toBe(200);
    expect(await t.events(a.accountId, 'consent.granted')).toHaveLength(2);
    expect(await t.events(b.accountId, 'consent.granted')).toHaveLength(2);
  });

  it('refuses unknown scopes (with the allowed list), oneself, unknown and malformed grantees, past ends', async () => {
    const a = await user();
    const b = await user();
    const bad = await grant(a.token, { grantee_id: b.id, scopes: ['calendar:write'] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors['scopes.0']).toContain(
      'availability:read:freebusy, availability:read:details, booking:propose',
    );
    const self = await grant(a.token, { grantee_id: a.id, scopes: ['booking:propose'] });
    expect(self.status).toBe(400);
    expect((await self.json()).errors.grantee_id).toMatch(/itself/);
    const unknown = await grant(a.token, {
      grantee_id: '00000000-0000-4000-8000-000000000000',
      scopes: ['booking:propose'],
    });
    expect(unknown.status).toBe(404);
    expect((await grant(a.token, { grantee_id: 'nope', scopes: ['booking:propose'] })).status).toBe(400);
    const past = await grant(a.token, {
      grantee_id: b.id,
      scopes: ['booking:propose'],
      expires_at: '2026-03-01T00:00:00Z',
    });
    expect(past.status).toBe(400);
  });

  it('lists by role, reads, and revokes once (grantor or grantee); consent.revoked to both accounts', async () => {
    const a = await user();
    const b = await user();
    const c = await user();
    const ab = (
      await (await grant(a.token, { grantee_id: b.id, scopes: ['availability:read:freebusy'] })).json()
    ).consent;
    const ca = (await (await grant(c.token, { grantee_id: a.id, scopes: ['booking:propose'] })).json())
      .consent;
    const asGrantor = await (await t.call('GET', '/v1/consents?role=grantor', { token: a.token })).json();
    expect(asGrantor.consents.map((x: Json) => x.id)).toEqual([ab.id]);
    const asGrantee = await (await t.call('GET', '/v1/consents?role=grantee', { token: a.token })).json();
    expect(asGrantee.consents.map((x: Json) => x.id)).toEqual([ca.id]);
    expect((await t.call('GET', `/v1/consents/${ab.id}`, { token: b.token })).status).toBe(200);
    expect((await t.call('GET', `/v1/consents/${ab.id}`, { token: c.token })).status).toBe(404);

    const revoked = await t.call('DELETE', `/v1/consents/${ab.id}`, { token: b.token }); // the grantee gives it up
    expect(revoked.status).toBe(200);
    expect((await revoked.json()).consent).toMatchObject({ status: 'revoked', revoked_at: T0 });
    await t.call('DELETE', `/v1/consents/${ab.id}`, { token: a.token });
    expect(await t.events(a.accountId, 'consent.revoked')).toHaveLength(1);
    expect(await t.events(b.accountId, 'consent.revoked')).toHaveLength(1);
    const active = await (await t.call('GET', '/v1/consents?role=grantor', { token: a.token })).json();
    expect(active.consents).toEqual([]);
    const all = await (
      await t.call('GET', '/v1/consents?role=grantor&active_only=false', { token: a.token })
    ).json();
    expect(all.consents.map((x: Json) => x.status)).toEqual(['revoked']);
    // Granting again after a revocation makes a new consent.
    const again = await grant(a.token, { grantee_id: b.id, scopes: ['availability:read:freebusy'] });
    expect(again.status).toBe(201);
  });

  it('expires at its end: shown expired at once, and the reaper records it with consent.revoked', async () => {
    const a = await user();
    const b = await user();
    const end = new Date(clock.nowMs() + DAY).toISOString();
    const c = (
      await (
        await grant(a.token, { grantee_id: b.id, scopes: ['availability:read:freebusy'], expires_at: end })
      ).json()
    ).consent;
    clock.advance(DAY + 1000);
    const read = await t.call('GET', `/v1/consents/${c.id}`, { token: await signIn(a.email) });
    expect((await read.json()).consent.status).toBe('expired');
    await t.ctx.modules.network.expireConsents();
    expect(await t.events(b.accountId, 'consent.revoked')).toHaveLength(1);
    await t.ctx.modules.network.expireConsents();
    expect(await t.events(b.accountId, 'consent.revoked')).toHaveLength(1);
  });

  it('finds the consents past their end through the index of active ones by end, not by reading them all', async () => {
    const plan = await genericPlan(t.ctx.db, (trx) =>
      expireConsentsQuery(trx, new Date(clock.nowMs()), { livemode: true }),
    );
    expect(plan).toMatch(/"Index Name":"consents_expiry_idx"/);
  });

  it('finds the active consent of a pair through the index of active ones, not among all the grantor gave', async () => {
    const [a, b] = [await user(), await user()];
    const plan = await genericPlan(t.ctx.db, (trx) => lockActiveConsentQuery(trx, a.id, b.id, true));
    expect(plan).toMatch(/"Index Name":"consents_one_active_idx"/);
  });

  it('20 concurrent identical grants make one consent and one consent.granted', async () => {
    const a = await user();
    const b = await user();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        grant(a.token, { grantee_id: b.id, scopes: ['availability:read:freebusy'] }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 201 && s !== 200)).toEqual([]);
    const ids = new Set(await Promise.all(answers.map(async (r) => (await r.json()).consent.id)));
    expect(ids.size).toBe(1);
    expect(await t.events(a.accountId, 'consent.granted')).toHaveLength(1);
  });
});

describe('the network', () => {
  async function invite(from: { token: string }, email: string, extra: Record<string, unknown> = {}) {
    return t.call('POST', '/v1/network/invitations', {
      token: from.token,
      body: { invitee_email: email, relationship_type: 'colleague', ...extra },
    });
  }

  async function tokenFrom(to: string, since: number): Promise<string> {
    const mails = await sink.waitFor(since + 1);
    const mail = [...mails].reverse().find((m) =>
      JSON.stringify(m.to ?? '')
        .toLowerCase()
        .includes(to.toLowerCase()),
    );
    const m = /\/invitations\/([A-Za-z0-9_-]{43})/.exec(mail?.text ?? '');
    if (!m) throw new Error(`no invitation mail to ${to}`);
    return m[1]!;
  }

  it('invites by e-mail with a working link; the invited user accepts (e-mail matched case-insensitively) and both see the connection', async () => {
    const a = await user();
    const b = await user();
    const before = sink.messages.length;
    const res = await invite(a, b.email.toUpperCase(), { invitee_name: 'Bea', message: 'Let us meet' });
    expect(res.status).toBe(201);
    const { invitation } = await res.json();
    expect(invitation).toMatchObject({ status: 'pending', relationship_type: 'colleague' });
    expect(invitation.id).toMatch(/^inv_/);
    await t.ctx.jobs.drain();
    const token = await tokenFrom(b.email, before);

    const byKey = await t.call('POST', `/v1/network/invitations/${token}/accept`, { token: b.key });
    expect(byKey.status).toBe(403);
    expect((await byKey.json()).code).toBe('auth_method_invalid');
    const stranger = await user();
    const wrong = await t.call('POST', `/v1/network/invitations/${token}/accept`, { token: stranger.token });
    expect(wrong.status).toBe(403);
    expect((await wrong.json()).code).toBe('auth_email_mismatch');

    const ok = await t.call('POST', `/v1/network/invitations/${token}/accept`, { token: b.token });
    expect(ok.status).toBe(200);
    expect((await ok.json()).invitation.status).toBe('accepted');
    const reused = await t.call('POST', `/v1/network/invitations/${token}/accept`, { token: b.token });
    expect(reused.status).toBe(401);

    const mine = await (await t.call('GET', '/v1/network', { token: a.token })).json();
    expect(mine.connections).toEqual([
      expect.objectContaining({ principal_id: b.id, relationship_type: 'colleague', connected_at: T0 }),
    ]);
    // Users who gave no name are listed by their account's name, never their e-mail; then by the name.
    expect(mine.connections[0].display_name).toBe('Test account');
    expect((await t.call('PATCH', '/v1/me', { token: b.token, body: { name: 'Bea Brown' } })).status).toBe(
      200,
    );
    const renamed = await (await t.call('GET', '/v1/network', { token: a.token })).json();
    expect(renamed.connections[0].display_name).toBe('Bea Brown');
    const theirs = await (await t.call('GET', '/v1/network', { token: b.token })).json();
    expect(theirs.connections.map((c: Json) => c.principal_id)).toEqual([a.id]);
    expect(await t.ctx.modules.network.mayPropose(a.id, b.id, true, clock.now())).toBe(true);
    expect(await t.ctx.modules.network.mayPropose(b.id, a.id, true, clock.now())).toBe(true);

    // Connected already (the address of the user, in any case): 409; removing the connection removes it both ways.
    expect((await invite(a, b.email)).status).toBe(409);
    const again = await invite(a, b.email.toUpperCase());
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe('already_connected');
    expect((await t.call('DELETE', `/v1/network/${a.id}`, { token: b.token })).status).toBe(204);
    expect((await (await t.call('GET', '/v1/network', { token: a.token })).json()).connections).toEqual([]);
    expect(await t.ctx.modules.network.mayPropose(a.id, b.id, true, clock.now())).toBe(false);
    expect((await t.call('DELETE', `/v1/network/${a.id}`, { token: b.token })).status).toBe(404);
  });

  it('sends a pending invitation again instead of a second one; the old link stops working', async () => {
    const a = await user();
    const email = `late-${Date.now()}@example.com`;
    const before = sink.messages.length;
    const first = await (await invite(a, email)).json();
    await t.ctx.jobs.drain();
    const oldToken = await tokenFrom(email, before);
    const again = await invite(a, email);
    expect(again.status).toBe(200);
    expect((await again.json()).invitation.id).toBe(first.invitation.id);
    await t.ctx.jobs.drain();
    const newToken = await tokenFrom(email, before + 1);
    expect(newToken).not.toBe(oldToken);
    const invitee = await user(email);
    expect(
      (await t.call('POST', `/v1/network/invitations/${oldToken}/accept`, { token: invitee.token })).status,
    ).toBe(401);
    expect(
      (await t.call('POST', `/v1/network/invitations/${newToken}/decline`, { token: invitee.token })).status,
    ).toBe(200);
    expect(
      (await t.call('POST', `/v1/network/invitations/${newToken}/accept`, { token: invitee.token })).status,
    ).toBe(401);
  });

  it('answers 410 for an expired invitation', async () => {
    const a = await user();
    const b = await user();
    const before = sink.messages.length;
    await invite(a, b.email);
    await t.ctx.jobs.drain();
    const token = await tokenFrom(b.email, before);
    clock.advance(8 * DAY);
    const res = await t.call('POST', `/v1/network/invitations/${token}/accept`, {
      token: await signIn(b.email),
    });
    expect(res.status).toBe(410);
    expect((await res.json()).code).toBe('invitation_expired');
  });

  it('lists the invitations the caller sent, newest first, by state, a page at a time', async () => {
    const a = await user();
    const b = await user();
    const addresses = ['one@example.com', 'two@example.com', 'three@example.com'];
    for (const address of addresses) {
      expect((await invite(a, address)).status).toBe(201);
      clock.advance(1000);
    }
    const before = sink.messages.length;
    expect((await invite(a, b.email)).status).toBe(201);
    await t.ctx.jobs.drain();
    const token = await tokenFrom(b.email, before);
    expect(
      (await t.call('POST', `/v1/network/invitations/${token}/decline`, { token: b.token })).status,
    ).toBe(200);
    const list = async (query: string, token = a.token) => {
      const res = await t.call('GET', `/v1/network/invitations${query}`, { token });
      expect(res.status, await res.clone().text()).toBe(200);
      return res.json();
    };
    const all = await list('');
    expect(all.invitations.map((i: Json) => i.invitee_email)).toEqual([b.email, ...addresses.reverse()]);
    const first = await list('?limit=2');
    expect(first.pagination.has_more).toBe(true);
    const rest = await list(`?limit=2&cursor=${first.pagination.next_cursor}`);
    expect([...first.invitations, ...rest.invitations].map((i: Json) => i.id)).toEqual(
      all.invitations.map((i: Json) => i.id),
    );
    expect((await list('?status=declined')).invitations.map((i: Json) => i.invitee_email)).toEqual([b.email]);
    expect((await list('?status=pending')).invitations).toHaveLength(3);
    // Past their end, pending invitations are listed as expired.
    clock.advance(8 * DAY);
    const lapsed = await list('?status=expired', await signIn(a.email));
    expect(lapsed.invitations).toHaveLength(3);
    expect(lapsed.invitations.every((i: Json) => i.status === 'expired')).toBe(true);
    // Another account sees none of them.
    expect((await list('', await signIn(b.email))).invitations).toEqual([]);
    const bad = await t.call('GET', '/v1/network/invitations?status=lost', { token: await signIn(a.email) });
    expect(bad.status).toBe(400);
  });

  it('two accepts of one token at once make one connection', async () => {
    const a = await user();
    const b = await user();
    const before = sink.messages.length;
    await invite(a, b.email);
    await t.ctx.jobs.drain();
    const token = await tokenFrom(b.email, before);
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => t.call('POST', `/v1/network/invitations/${token}/accept`, { token: b.token })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
    const rows = await t.ctx.db
      .selectFrom('network_connections')
      .selectAll()
      .where('invitation_id', 'is not', null)
      .execute();
    expect(rows.filter((r) => [r.principal_a, r.principal_b].includes(b.id))).toHaveLength(1);
  });

  it('invites in bulk, skipping invalid and connected addresses, with or without mails', async () => {
    const a = await user();
    const before = sink.messages.length;
    const res = await t.call('POST', '/v1/network/invitations/bulk', {
      token: a.token,
      body: {
        contacts: [{ email: `x-${Date.now()}@example.com`, name: 'X' }, { email: 'not-an-address' }],
        relationship_type: 'client',
        send_emails: false,
      },
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.invitations).toHaveLength(1);
    expect(body.skipped).toEqual([{ email: 'not-an-address', reason: 'invalid_email' }]);
    await t.ctx.jobs.drain();
    expect(sink.messages.length).toBe(before);
  });
});

describe('event details', () => {
  it('availability:read:details adds the events’ titles to calendar blocks on request; free/busy alone or a connection answer 403 details_not_granted', async () => {
    const owner = await user();
    const connected = await t.call('POST', '/v1/calendars/ics', {
      token: owner.token,
      body: { url: feedUrl },
    });
    expect(connected.status, await connected.clone().text()).toBe(201);
    const reader = await user();
    const blocks = (token: string, details: boolean) =>
      t.call(
        'GET',
        `/v1/principals/${owner.id}/availability?from=2026-03-03T09:00:00Z&to=2026-03-03T12:00:00Z${details ? '&details=true' : ''}`,
        { token },
      );
    const calendarBlock = async (res: Awaited<ReturnType<typeof blocks>>) =>
      ((await res.json()).blocks as Json[]).find((b) => b.source === 'calendar');

    // The principal itself.
    const own = await blocks(owner.token, true);
    expect(own.status).toBe(200);
    expect(await calendarBlock(own)).toMatchObject({
      start: '2026-03-03T10:00:00.000Z',
      titles: ['Dentist'],
    });

    // Free/busy only: blocks without titles; asking for details is refused.
    const c = (
      await (
        await grant(owner.token, { grantee_id: reader.id, scopes: ['availability:read:freebusy'] })
      ).json()
    ).consent;
    const plain = await blocks(reader.token, false);
    expect(plain.status).toBe(200);
    expect((await calendarBlock(plain))?.titles).toBeUndefined();
    const refused = await blocks(reader.token, true);
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe('details_not_granted');

    // With details.
    await grant(owner.token, { grantee_id: reader.id, scopes: ['availability:read:details'] });
    const detailed = await blocks(reader.token, true);
    expect(detailed.status).toBe(200);
    expect(await calendarBlock(detailed)).toMatchObject({ titles: ['Dentist'] });

    // Revoked: nothing at all.
    await t.call('DELETE', `/v1/consents/${c.id}`, { token: owner.token });
    expect((await blocks(reader.token, true)).status).toBe(403);
  });
});
