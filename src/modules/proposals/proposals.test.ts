/**
 * Proposals and polls over HTTP on the real runtime, with mails to a real SMTP server and webhooks to a
 * real receiver (docs/api.md#proposals-and-polls): the guards, every row of the state machine
 * (src/lib/proposals.ts), magic-link tokens, counters and threads, bookings of an accepted proposal,
 * consent revoked before acceptance, poll resolution (last vote, close, reaper; ties), and races of
 * the triggers of one resolution inside one process (across processes: test/e2e).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { serveCalendar, vcalendar } from '../../../test/helpers/ics.js';
import { genericPlan } from '../../../test/helpers/plans.js';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { findDueQuery } from './repo.js';
import { HOUR } from '../../lib/time.js';

const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
let t: TestApp;
let sink: SmtpSink;
let feed: Awaited<ReturnType<typeof serveCalendar>> | undefined;
let feedUrl: string;
let receiver: Receiver;

beforeAll(async () => {
  sink = await startSmtpSink();
  receiver = await startReceiver();
  feed = await serveCalendar(vcalendar('\r\n', []));
  feedUrl = feed.url;
  t = await startTestApp({ clock, env: { SMTP_URL: sink.url, KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
  await receiver?.close();
  await feed?.close();
});
beforeEach(() => clock.set(T0));

interface User {
  accountId: string;
  key: string;
  id: string;
  token: string;
  email: string;
  name: string;
}

let users = 0;
/** A new account with a signed-in user; `calendar` connects an (empty) ICS feed for it. */
async function user(opts: { calendar?: boolean } = {}): Promise<User> {
  const acc = await t.account();
  const n = ++users;
  const address = `prop${n}-${Date.now()}@example.com`;
  await t.ctx.modules.accounts.createUser({
    accountId: acc.id,
    email: address,
    password: 'correct horse battery',
  });
  const res = await t.call('POST', '/v1/sessions', {
    body: { email: address, password: 'correct horse battery' },
  });
  expect(res.status).toBe(201);
  const { session } = await res.json();
  const u = {
    accountId: acc.id,
    key: acc.key,
    id: session.user.id,
    token: session.token,
    email: address,
    name: '',
  };
  if (opts.calendar) {
    const c = await t.call('POST', '/v1/calendars/ics', { token: u.token, body: { url: feedUrl } });
    expect(c.status, await c.clone().text()).toBe(201);
  }
  return u;
}

/** `grantor` lets `grantee` propose meetings to it. */
async function allow(grantor: User, grantee: User): Promise<string> {
  const res = await t.call('POST', '/v1/consents', {
    token: grantor.token,
    body: { grantee_id: grantee.id, scopes: ['booking:propose'] },
  });
  expect(res.status).toBe(201);
  return (await res.json()).consent.id;
}

/** A fresh session (sessions last an hour: tests that move the clock sign in again). */
async function signIn(u: User): Promise<void> {
  u.token = (await fixtures.signIn(t, u.email)).token;
}

const at = (hoursFromT0: number) => new Date(Date.parse(T0) + hoursFromT0 * HOUR).toISOString();
const slot = (h: number, minutes = 30) => ({
  start: at(h),
  end: new Date(Date.parse(at(h)) + minutes * 60_000).toISOString(),
});

async function propose(requester: User, body: Json) {
  return t.call('POST', '/v1/proposals', { token: requester.token, body });
}

async function proposed(requester: User, body: Json): Promise<Json> {
  const res = await propose(requester, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

function respond(id: string, body: Json, token?: string) {
  return t.call('POST', `/v1/proposals/${id}/response`, { ...(token ? { token } : {}), body });
}

async function eventsAbout(proposalId: string): Promise<{ type: string; account_id: string }[]> {
  const rows = await t.ctx.db
    .selectFrom('events')
    .select(['type', 'account_id', 'data'])
    .where('type', 'like', 'proposal.%')
    .orderBy('created_at')
    .execute();
  return rows
    .filter((r) => {
      const d = r.data as Json;
      return d.proposal_id === proposalId || d.proposal?.id === proposalId;
    })
    .map((r) => ({ type: r.type, account_id: r.account_id }));
}

/** The magic link mailed to `to` most recently (mails are sent by the job runner, drained here). */
async function mailedToken(to: string, about = ''): Promise<string> {
  await t.ctx.jobs.drain();
  for (let i = 0; i < 50; i++) {
    const m = [...sink.messages]
      .reverse()
      .find(
        (x) =>
          JSON.stringify(x.to ?? '').includes(to) &&
          /\/p\//.test(x.text ?? '') &&
          (x.text ?? '').includes(about),
      );
    const token = m ? /\/p\/([A-Za-z0-9_-]{43})/.exec(m.text ?? '')?.[1] : undefined;
    if (token) return token;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no proposal link mailed to ${to}`);
}

async function mailsTo(to: string, subject: RegExp) {
  await t.ctx.jobs.drain();
  for (let i = 0; i < 50; i++) {
    const found = sink.messages.filter(
      (x) => JSON.stringify(x.to ?? '').includes(to) && subject.test(x.subject ?? ''),
    );
    if (found.length > 0) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  return [];
}

async function bookingsOf(u: User): Promise<Json[]> {
  const res = await t.call('GET', `/v1/bookings?from=${at(0)}&to=${at(24 * 40)}`, { token: u.key });
  expect(res.status).toBe(200);
  return (await res.json()).bookings;
}

const tokenOf = (url: string) => url.split('/p/')[1]!;

describe('creating a proposal', () => {
  it('needs every participant’s booking:propose (403 consent_required) and the requester’s calendar (409 calendar_disconnected_originator)', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    const c = await user();
    await allow(b, a);
    const refused = await propose(a, { mode: 'standard', participant_ids: [b.id, c.id], slots: [slot(48)] });
    expect(refused.status).toBe(403);
    const problem = await refused.json();
    expect(problem.code).toBe('consent_required');
    expect(problem.participant_ids).toEqual([c.id]);
    expect(refused.headers.get('content-type')).toMatch(/problem\+json/);

    const noCalendar = await user();
    await allow(b, noCalendar);
    const disconnected = await propose(noCalendar, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(48)],
    });
    expect(disconnected.status).toBe(409);
    expect((await disconnected.json()).code).toBe('calendar_disconnected_originator');
  });

  it('refuses poll slots under 25 hours ahead (400 earliest_slot_too_soon) and bad input with field errors, writing nothing', async () => {
    const a = await user({ calendar: true });
    const soon = await propose(a, { mode: 'poll', slots: [slot(30), slot(24)] });
    expect(soon.status).toBe(400);
    expect((await soon.json()).code).toBe('earliest_slot_too_soon');
    expect((await propose(a, { mode: 'poll', slots: [slot(25)] })).status).toBe(201);

    for (const [body, field] of [
      [{ mode: 'standard', slots: [slot(48)] }, 'participant_ids'],
      [{ mode: 'standard', participant_ids: [a.id], slots: [slot(48)] }, 'participant_ids'],
      [{ mode: 'poll', participant_emails: ['nope'], slots: [slot(48)] }, 'participant_emails'],
      [{ mode: 'poll', slots: [{ start: at(50), end: at(49) }] }, 'slots[0]'],
      [{ mode: 'poll', slots: [slot(48), slot(48)] }, 'slots[1]'],
      [{ mode: 'poll', slots: [slot(-1)] }, 'slots[0]'],
      [{ mode: 'poll', slots: [slot(48)], expires_in_hours: 100 }, 'expires_in_hours'],
    ] as const) {
      const res = await propose(a, body as Json);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys((await res.json()).errors ?? {})).toContain(field);
    }
    const count = await t.ctx.db
      .selectFrom('proposals')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('requester_id', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });
});

describe('a standard proposal', () => {
  it('is accepted when everyone accepts: the first accept fixes the slot, a different slot is 409 slot_mismatch, a magic link answers once; everyone is booked (the bookings named by the proposal’s title) and mailed an invite', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    const c = await user();
    await allow(b, a);
    await allow(c, a);
    const { proposal } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id, c.id],
      slots: [slot(48), slot(50)],
      title: 'Quarterly review',
      message: 'Let us meet',
    });
    expect(proposal).toMatchObject({
      mode: 'standard',
      poll_variant: null,
      status: 'proposed',
      requester_id: a.id,
      title: 'Quarterly review',
    });
    expect(proposal.id).toMatch(/^prop_/);
    expect(proposal.thread_id).toMatch(/^thr_/);
    expect(proposal.slots.map((s: Json) => s.id)).toEqual([
      expect.stringMatching(/^slot_/),
      expect.stringMatching(/^slot_/),
    ]);
    expect(proposal.participants.map((p: Json) => [p.principal_id, p.response])).toEqual([
      [b.id, 'pending'],
      [c.id, 'pending'],
    ]);
    const [s1, s2] = proposal.slots.map((s: Json) => s.id);
    // Each party's account hears proposal.created once.
    for (const u of [a, b, c]) expect(await t.events(u.accountId, 'proposal.created')).toHaveLength(1);

    // Several slots: an accept must name one.
    const unnamed = await respond(proposal.id, { action: 'accept' }, b.token);
    expect(unnamed.status).toBe(400);
    const first = await respond(proposal.id, { action: 'accept', selected_slot_id: s1 }, b.token);
    expect(first.status).toBe(200);
    expect((await first.json()).proposal).toMatchObject({ status: 'proposed' });
    const again = await respond(proposal.id, { action: 'accept', selected_slot_id: s1 }, b.token);
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe('already_responded');

    const mismatch = await respond(proposal.id, { action: 'accept', selected_slot_id: s2 }, c.token);
    expect(mismatch.status).toBe(409);
    expect((await mismatch.json()).code).toBe('slot_mismatch');

    // C answers by the link in its mail, without a credential.
    const link = await mailedToken(c.email);
    const byToken = await t.call('GET', `/v1/proposals/by-token?token=${link}`);
    expect(byToken.status).toBe(200);
    const view = (await byToken.json()).proposal;
    expect(view).toMatchObject({ status: 'proposed', viewer: { response: 'pending', can_respond: true } });
    expect(JSON.stringify(view)).not.toContain(b.id);
    expect(JSON.stringify(view)).not.toContain(b.email);
    const accepted = await t.call('POST', `/v1/proposals/${proposal.id}/response`, {
      body: { action: 'accept', token: link },
    });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    const done = (await accepted.json()).proposal;
    expect(done).toMatchObject({ status: 'accepted' });
    expect(done.slots.find((s: Json) => s.is_selected).id).toBe(s1);
    // Answered by a link, the answer is the link's view: no principal ids, no addresses.
    expect(done.viewer).toMatchObject({ response: 'accepted', can_respond: false });
    expect(done.requester_id).toBeUndefined();
    for (const who of [a, b, c]) {
      expect(JSON.stringify(done)).not.toContain(who.id);
      expect(JSON.stringify(done)).not.toContain(who.email);
    }
    const reused = await t.call('POST', `/v1/proposals/${proposal.id}/response`, {
      body: { action: 'accept', token: link },
    });
    expect(reused.status).toBe(401);
    expect((await reused.json()).code).toBe('invalid_token');

    // Everyone booked at the slot, each in their own account; events once per account.
    for (const u of [a, b, c]) {
      const bs = (await bookingsOf(u)).filter((x) => x.start_time === at(48));
      expect(bs, u.email).toHaveLength(1);
      // Each booking's customer is the other side: the requester's, its participants; theirs, the requester.
      expect(bs[0].customer_email, u.email).toBe(u === a ? b.email : a.email);
      expect(bs[0].customer_name, u.email).not.toContain('@');
      expect(bs[0]).toMatchObject({
        status: 'confirmed',
        principal_id: u.id,
        end_time: slot(48).end,
        title: 'Quarterly review',
      });
      expect(await t.events(u.accountId, 'proposal.accepted')).toHaveLength(1);
      expect((await t.events(u.accountId, 'booking.created')).length).toBeGreaterThanOrEqual(1);
    }
    // The time is taken: availability of B no longer offers it.
    const mails = await mailsTo(b.email, /^Booked: Quarterly review/);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain('Everyone accepted');
    const raw = sink.raw.find((r) => r.includes('Booked: Quarterly review') && r.includes(b.email)) ?? '';
    expect(raw).toContain('METHOD:REQUEST');
    expect(raw).toContain(`UID:${proposal.id}@kairos`);
  });

  it('cannot be answered by its requester (403 organizer_cannot_respond) or by anyone outside it (404); without credential or token it is 401', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    const stranger = await user();
    await allow(b, a);
    const { proposal } = await proposed(a, { mode: 'standard', participant_ids: [b.id], slots: [slot(48)] });
    const own = await respond(proposal.id, { action: 'accept' }, a.token);
    expect(own.status).toBe(403);
    expect((await own.json()).code).toBe('organizer_cannot_respond');
    const other = await respond(proposal.id, { action: 'accept' }, stranger.token);
    expect(other.status).toBe(404);
    expect((await other.json()).code).toBe('proposal_not_found');
    expect((await t.call('GET', `/v1/proposals/${proposal.id}`, { token: stranger.token })).status).toBe(404);
    const anonymous = await respond(proposal.id, { action: 'accept' });
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).code).toBe('invalid_token');
    const bogus = await respond(proposal.id, { action: 'accept', token: 'x'.repeat(43) });
    expect(bogus.status).toBe(401);
  });

  it('is answered with an explicit principal_id by a party acting for it (booked); naming the requester is 403, a stranger naming a party 404', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    const stranger = await user();
    await allow(b, a);
    const { proposal } = await proposed(a, { mode: 'standard', participant_ids: [b.id], slots: [slot(48)] });
    const requester = await respond(proposal.id, { action: 'accept', principal_id: a.id }, b.token);
    expect(requester.status).toBe(403);
    expect((await requester.json()).code).toBe('organizer_cannot_respond');
    const outsider = await respond(proposal.id, { action: 'accept', principal_id: b.id }, stranger.token);
    expect(outsider.status).toBe(404);
    const own = await respond(proposal.id, { action: 'accept', principal_id: b.id.toUpperCase() }, b.token);
    expect(own.status, await own.clone().text()).toBe(200);
    const answered = (await own.json()).proposal;
    expect(answered).toMatchObject({ status: 'accepted' });
    expect(answered.participants).toMatchObject([{ principal_id: b.id, response: 'accepted' }]);
    // The acceptance booked both parties (the profiles read before the transaction were the right ones).
    const booked = await t.ctx.db
      .selectFrom('bookings')
      .select(['principal_id', 'status'])
      .where('proposal_id', '=', proposal.id)
      .execute();
    expect(booked.map((x) => x.principal_id).sort()).toEqual([a.id, b.id].sort());
    expect(booked.every((x) => x.status === 'confirmed')).toBe(true);
  });

  it('is rejected by one reject (proposal.rejected, a mail to the requester); anything after is 409 with the HTTP status in status and the state in proposal_status', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    const c = await user();
    await allow(b, a);
    await allow(c, a);
    const { proposal } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id, c.id],
      slots: [slot(48)],
    });
    const rejected = await respond(proposal.id, { action: 'reject', message: 'Busy that week' }, b.token);
    expect(rejected.status).toBe(200);
    expect((await rejected.json()).proposal.status).toBe('rejected');
    expect(await t.events(a.accountId, 'proposal.rejected')).toHaveLength(1);
    expect(await mailsTo(a.email, /^Declined/)).toHaveLength(1);
    const late = await respond(proposal.id, { action: 'accept' }, c.token);
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({
      code: 'proposal_not_open',
      status: 409,
      proposal_status: 'rejected',
    });
    const cancel = await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, { token: a.token, body: {} });
    expect(cancel.status).toBe(409);
    expect(await cancel.json()).toMatchObject({
      code: 'proposal_not_open',
      status: 409,
      proposal_status: 'rejected',
    });
    const close = await t.call('POST', `/v1/proposals/${proposal.id}/close`, { token: a.token });
    expect(close.status).toBe(409);
    expect(await close.json()).toMatchObject({
      code: 'not_a_poll',
      status: 409,
      proposal_status: 'rejected',
    });
  });

  it('is countered: countered, and a new proposal from the counterer to the requester in the same thread (proposal.countered, proposal.created)', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    await allow(b, a);
    const { proposal } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(48)],
      title: 'Sync',
    });
    const countered = await respond(
      proposal.id,
      { action: 'counter', counter_slots: [slot(72), slot(74)], message: 'Thursday?' },
      b.token,
    );
    expect(countered.status, await countered.clone().text()).toBe(200);
    const out = await countered.json();
    expect(out.proposal.status).toBe('countered');
    expect(out.counter_proposal).toMatchObject({
      status: 'proposed',
      requester_id: b.id,
      thread_id: proposal.thread_id,
      parent_id: proposal.id,
      message: 'Thursday?',
    });
    expect(out.counter_proposal.participants).toMatchObject([{ principal_id: a.id, response: 'pending' }]);
    const thread = await t.call('GET', `/v1/threads/${proposal.thread_id}`, { token: a.token });
    expect(thread.status).toBe(200);
    expect((await thread.json()).thread.proposals.map((p: Json) => p.id)).toEqual([
      proposal.id,
      out.counter_proposal.id,
    ]);
    expect(await t.events(a.accountId, 'proposal.countered')).toHaveLength(1);
    expect(await t.events(b.accountId, 'proposal.created')).toHaveLength(2);

    // A answers the counter (by the link mailed to it), accepting: both are booked.
    const link = await mailedToken(a.email);
    const ok = await respond(out.counter_proposal.id, {
      action: 'accept',
      selected_slot_id: out.counter_proposal.slots[1].id,
      token: link,
    });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect((await ok.json()).proposal.status).toBe('accepted');
    expect((await bookingsOf(a)).filter((x) => x.start_time === at(74))).toHaveLength(1);

    // The lists: by role.
    const asRequester = await (
      await t.call('GET', '/v1/proposals?role=requester', { token: b.token })
    ).json();
    expect(asRequester.proposals.map((p: Json) => p.id)).toEqual([out.counter_proposal.id]);
    const asParticipant = await (
      await t.call('GET', '/v1/proposals?role=participant&status=countered', { token: b.token })
    ).json();
    expect(asParticipant.proposals.map((p: Json) => p.id)).toEqual([proposal.id]);
  });

  it('accepted, is cancelled by a party: every booking cancelled, proposal.cancelled, a CANCEL invite; a second cancel is 409', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    await allow(b, a);
    const { proposal } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(96)],
      title: 'Lunch',
    });
    expect((await respond(proposal.id, { action: 'accept' }, b.token)).status).toBe(200);
    expect(
      (await bookingsOf(b)).filter((x) => x.start_time === at(96) && x.status === 'confirmed'),
    ).toHaveLength(1);
    const cancelled = await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, {
      token: b.token,
      body: { reason: 'Sick' },
    });
    expect(cancelled.status, await cancelled.clone().text()).toBe(200);
    expect((await cancelled.json()).proposal.status).toBe('cancelled');
    for (const u of [a, b]) {
      const bs = (await bookingsOf(u)).filter((x) => x.start_time === at(96));
      expect(bs.map((x) => x.status)).toEqual(['cancelled']);
      expect(await t.events(u.accountId, 'proposal.cancelled')).toHaveLength(1);
    }
    expect(await mailsTo(a.email, /^Cancelled: Lunch/)).toHaveLength(1);
    expect(
      (await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, { token: a.token, body: {} })).status,
    ).toBe(409);
    // The time is free again: a new proposal at the same time can be accepted.
    const { proposal: again } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(96)],
    });
    expect((await respond(again.id, { action: 'accept' }, b.token)).status).toBe(200);
  });

  it('open, is withdrawn by its requester with cancel: cancelled, proposal.cancelled to every party, a mail to each participant, no answer afterwards; a participant’s cancel is 403 requester_only', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    const c = await user();
    await allow(b, a);
    await allow(c, a);
    const { proposal } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id, c.id],
      slots: [slot(100)],
      title: 'Roadmap',
    });
    const link = await mailedToken(b.email, 'Roadmap');
    expect((await respond(proposal.id, { action: 'accept' }, c.token)).status).toBe(200);
    const byParticipant = await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, {
      token: b.token,
      body: {},
    });
    expect(byParticipant.status).toBe(403);
    expect(await byParticipant.json()).toMatchObject({ status: 403, code: 'requester_only' });
    const withdrawn = await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, {
      token: a.token,
      body: { reason: 'Plans changed' },
    });
    expect(withdrawn.status, await withdrawn.clone().text()).toBe(200);
    expect((await withdrawn.json()).proposal.status).toBe('cancelled');
    for (const u of [a, b, c]) {
      expect(await t.events(u.accountId, 'proposal.cancelled')).toHaveLength(1);
      expect((await bookingsOf(u)).filter((x) => x.start_time === at(100))).toHaveLength(0);
    }
    for (const u of [b, c]) {
      const [m] = await mailsTo(u.email, /^Withdrawn: Roadmap/);
      expect(m?.text).toContain('Plans changed');
    }
    const late = await respond(proposal.id, { action: 'accept', token: link });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ code: 'proposal_not_open', proposal_status: 'cancelled' });
    const again = await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, { token: a.token, body: {} });
    expect(again.status).toBe(409);
  });

  it('cannot be accepted when someone’s time was taken meanwhile: 409 slot_unavailable, nothing stored, the token still usable', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    await allow(b, a);
    const { proposal: p1 } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(120)],
    });
    const { proposal: p2 } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(120)],
      title: 'Second one',
    });
    const link2 = await mailedToken(b.email, 'Second one');
    expect((await respond(p1.id, { action: 'accept' }, b.token)).status).toBe(200);
    const taken = await respond(p2.id, { action: 'accept', token: link2 });
    expect(taken.status).toBe(409);
    expect((await taken.json()).code).toBe('slot_unavailable');
    const view = await (await t.call('GET', `/v1/proposals/${p2.id}`, { token: a.token })).json();
    expect(view.proposal.status).toBe('proposed');
    expect(view.proposal.participants[0].response).toBe('pending');
    // The same link still answers (a reject now).
    expect((await respond(p2.id, { action: 'reject', token: link2 })).status).toBe(200);
  });

  it('expires at expires_at by the reaper: proposal.expired to every party, a mail to the requester', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    await allow(b, a);
    const { proposal } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(100)],
      expires_in_hours: 2,
    });
    const link = await mailedToken(b.email);
    await t.ctx.modules.proposals.expireDue();
    expect(
      (await (await t.call('GET', `/v1/proposals/${proposal.id}`, { token: a.token })).json()).proposal
        .status,
    ).toBe('proposed');
    clock.advance(2 * HOUR);
    // Before the reaper passes, a late answer is refused already.
    const late = await respond(proposal.id, { action: 'accept', token: link });
    expect(late.status).toBe(410);
    expect((await late.json()).code).toBe('token_expired');
    expect(await t.ctx.modules.proposals.expireDue()).toBeGreaterThanOrEqual(1);
    await signIn(b);
    expect(
      (await (await t.call('GET', `/v1/proposals/${proposal.id}`, { token: b.token })).json()).proposal
        .status,
    ).toBe('expired');
    expect(await t.events(a.accountId, 'proposal.expired')).toHaveLength(1);
    expect(await t.events(b.accountId, 'proposal.expired')).toHaveLength(1);
    const byToken = await t.call('GET', `/v1/proposals/by-token?token=${link}`);
    expect(byToken.status).toBe(410);
    expect((await byToken.json()).code).toBe('token_expired');
  });

  it('finds the proposals due through the index of open ones by expiry, not by reading them all', async () => {
    const plan = await genericPlan(t.ctx.db, (trx) => findDueQuery(trx, new Date(clock.nowMs()), 100));
    expect(plan).toMatch(/"Index Name":"proposals_due_idx"/);
  });
});

describe('consent revoked before acceptance (docs/api.md#proposals-and-polls)', () => {
  it('the accept expires the proposal, mails the requester, fires no webhook and answers 409 consent_revoked', async () => {
    const a = await user({ calendar: true });
    const b = await user();
    const consentId = await allow(b, a);
    const hook = await t.call('POST', '/v1/webhooks', {
      token: a.key,
      body: {
        url: receiver.url,
        events: ['proposal.created', 'proposal.expired', 'proposal.accepted', 'proposal.rejected'],
      },
    });
    expect(hook.status).toBe(201);
    const { proposal } = await proposed(a, {
      mode: 'standard',
      participant_ids: [b.id],
      slots: [slot(48)],
      title: 'Pitch',
    });
    await t.ctx.jobs.drain();
    await receiver.waitFor(1);
    const before = receiver.received.length;
    expect((await t.call('DELETE', `/v1/consents/${consentId}`, { token: b.token })).status).toBe(200);

    const res = await respond(proposal.id, { action: 'accept' }, b.token);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      code: 'consent_revoked',
      status: 409,
      proposal_status: 'expired',
    });
    expect(
      (await (await t.call('GET', `/v1/proposals/${proposal.id}`, { token: a.token })).json()).proposal
        .status,
    ).toBe('expired');
    const mails = await mailsTo(a.email, /^Expired: Pitch/);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain('consent was revoked');
    await t.ctx.jobs.drain();
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received.slice(before).map((r) => JSON.parse(r.body).type)).toEqual([]);
    expect(await eventsAbout(proposal.id)).toEqual(
      expect.arrayContaining([
        { type: 'proposal.created', account_id: a.accountId },
        { type: 'proposal.created', account_id: b.accountId },
      ]),
    );
    expect(await eventsAbout(proposal.id)).toHaveLength(2);
    expect((await bookingsOf(b)).filter((x) => x.start_time === at(48))).toEqual([]);
  });
});

describe('polls', () => {
  it('named: one single-use link per invitee; the last vote resolves (most votes), proposal.resolved with exactly the docs/api.md#events fields to the requester only, a booking for the requester, result mails with an invite', async () => {
    const a = await user({ calendar: true });
    const out = await proposed(a, {
      mode: 'poll',
      participant_emails: ['ann@voters.test', 'bob@voters.test', 'cat@voters.test'],
      slots: [slot(50), slot(60), slot(70)],
      title: 'Team dinner',
    });
    const { proposal, invitations } = out;
    expect(proposal).toMatchObject({ mode: 'poll', poll_variant: 'named', status: 'proposed' });
    expect(out.magic_link_url).toBeUndefined();
    expect(invitations.map((i: Json) => i.email)).toEqual([
      'ann@voters.test',
      'bob@voters.test',
      'cat@voters.test',
    ]);
    const [ann, bob, cat] = invitations.map((i: Json) => tokenOf(i.magic_link_url));
    const [s1, s2] = proposal.slots.map((s: Json) => s.id);

    const counter = await respond(proposal.id, { action: 'counter', token: ann, counter_slots: [slot(80)] });
    expect(counter.status).toBe(400);
    expect((await counter.json()).code).toBe('poll_mode_only_supports_accept');
    expect((await respond(proposal.id, { action: 'accept', token: ann, selected_slot_id: s2 })).status).toBe(
      200,
    );
    const twice = await respond(proposal.id, { action: 'accept', token: ann, selected_slot_id: s1 });
    expect(twice.status).toBe(401);
    expect((await respond(proposal.id, { action: 'accept', token: bob, selected_slot_id: s1 })).status).toBe(
      200,
    );
    const organiser = await respond(proposal.id, { action: 'accept', selected_slot_id: s1 }, a.token);
    expect((await organiser.json()).code).toBe('organizer_cannot_respond');
    const last = await respond(proposal.id, { action: 'accept', token: cat, selected_slot_id: s2 });
    expect(last.status).toBe(200);
    const lastText = await last.clone().text();
    expect(lastText).not.toContain('@voters.test');
    expect(lastText).not.toContain(a.id);
    const resolved = (await last.json()).proposal;
    expect(resolved).toMatchObject({ status: 'accepted' });
    expect(resolved.slots.map((s: Json) => [s.votes, s.is_selected])).toEqual([
      [1, false],
      [2, true],
      [0, false],
    ]);

    const sent = await t.events(a.accountId, 'proposal.resolved');
    expect(sent).toEqual([
      {
        proposal_id: proposal.id,
        thread_id: proposal.thread_id,
        poll_variant: 'named',
        winning_slot: { id: s2, start: at(60), end: slot(60).end },
        vote_count: 2,
        total_votes: 3,
        tie_count: 1,
      },
    ]);
    const pollBookings = (await bookingsOf(a)).filter((x) => x.start_time === at(60));
    expect(pollBookings).toHaveLength(1);
    // The requester's booking is with the voters of the winning slot, not a placeholder or itself.
    expect(pollBookings[0]).toMatchObject({ customer_email: 'ann@voters.test' });
    expect(pollBookings[0].customer_name).not.toContain('@');
    for (const v of ['ann@voters.test', 'bob@voters.test', 'cat@voters.test', a.email]) {
      const m = await mailsTo(v, /^Decided: Team dinner/);
      expect(m, v).toHaveLength(1);
    }
    expect(
      sink.raw.filter((r) => r.includes('Decided: Team dinner') && r.includes('METHOD:REQUEST')).length,
    ).toBe(4);
    // A voter's mail and invite name that voter only, never the other voters' addresses.
    const annRaw = sink.raw.find(
      (r) => r.includes('Decided: Team dinner') && /^To: ann@voters\.test/m.test(r),
    );
    expect(annRaw).toBeDefined();
    expect(annRaw).not.toContain('bob@voters.test');
    expect(annRaw).not.toContain('cat@voters.test');
    // The links still show the result; nothing more can be voted.
    const view = await (await t.call('GET', `/v1/proposals/by-token?token=${bob}`)).json();
    expect(view.proposal).toMatchObject({
      status: 'accepted',
      viewer: { response: 'voted', voted_slot_id: s1, can_respond: false },
    });
    expect(JSON.stringify(view)).not.toContain('voters.test');
  });

  it('open, is withdrawn by its requester with cancel: cancelled, no booking, proposal.cancelled to the requester’s account only, a mail to each invitee; votes afterwards are refused', async () => {
    const a = await user({ calendar: true });
    const { proposal, invitations } = await proposed(a, {
      mode: 'poll',
      participant_emails: ['dee@withdrawn.test', 'eli@withdrawn.test'],
      slots: [slot(52), slot(62)],
      title: 'Offsite',
    });
    const [dee, eli] = invitations.map((i: Json) => tokenOf(i.magic_link_url));
    const [s1] = proposal.slots.map((s: Json) => s.id);
    expect((await respond(proposal.id, { action: 'accept', token: dee, selected_slot_id: s1 })).status).toBe(
      200,
    );
    const withdrawn = await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, {
      token: a.token,
      body: {},
    });
    expect(withdrawn.status, await withdrawn.clone().text()).toBe(200);
    expect((await withdrawn.json()).proposal).toMatchObject({ status: 'cancelled', resolution: null });
    // Both events, in either order: they may carry the same millisecond.
    const events = await eventsAbout(proposal.id);
    expect(events).toHaveLength(2);
    expect(events).toEqual(
      expect.arrayContaining([
        { type: 'proposal.created', account_id: a.accountId },
        { type: 'proposal.cancelled', account_id: a.accountId },
      ]),
    );
    expect((await bookingsOf(a)).filter((x) => x.start_time === at(52))).toEqual([]);
    for (const to of ['dee@withdrawn.test', 'eli@withdrawn.test']) {
      expect(await mailsTo(to, /^Withdrawn: Offsite/)).toHaveLength(1);
    }
    const late = await respond(proposal.id, { action: 'accept', token: eli, selected_slot_id: s1 });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ code: 'proposal_not_open', proposal_status: 'cancelled' });
  });

  it('open: one shared link, name and e-mail at vote time, one vote per e-mail; the requester closes it; a tie goes to the earliest start (tie_count)', async () => {
    const a = await user({ calendar: true });
    const out = await proposed(a, { mode: 'poll', slots: [slot(90), slot(30), slot(60)] });
    expect(out.proposal.poll_variant).toBe('open');
    expect(out.invitations).toBeUndefined();
    const link = tokenOf(out.magic_link_url);
    const [late, early, mid] = out.proposal.slots.map((s: Json) => s.id);
    const vote = (slotId: string, email: string, name = 'Voter') =>
      respond(out.proposal.id, {
        action: 'accept',
        token: link,
        selected_slot_id: slotId,
        voter_name: name,
        voter_email: email,
      });
    const anonymous = await respond(out.proposal.id, {
      action: 'accept',
      token: link,
      selected_slot_id: late,
    });
    expect(anonymous.status).toBe(400);
    expect(Object.keys((await anonymous.json()).errors)).toEqual(['voter_name', 'voter_email']);
    expect((await vote(late, 'x@open.test')).status).toBe(200);
    expect((await vote(early, 'y@open.test')).status).toBe(200);
    const dup = await vote(mid, 'X@Open.test');
    expect(dup.status).toBe(409);
    expect((await dup.json()).code).toBe('already_voted');
    const badSlot = await vote('slot_nope', 'z@open.test');
    expect(badSlot.status).toBe(400);
    expect((await vote(mid, 'z@open.test')).status).toBe(200);

    const closed = await t.call('POST', `/v1/proposals/${out.proposal.id}/close`, { token: a.token });
    expect(closed.status, await closed.clone().text()).toBe(200);
    const p = (await closed.json()).proposal;
    expect(p.status).toBe('accepted');
    expect(p.resolution).toEqual({
      winning_slot: { id: early, start: at(30), end: slot(30).end },
      vote_count: 1,
      total_votes: 3,
      tie_count: 3,
    });
    expect(await t.events(a.accountId, 'proposal.resolved')).toContainEqual(
      expect.objectContaining({ proposal_id: out.proposal.id, tie_count: 3, poll_variant: 'open' }),
    );
    const again = await t.call('POST', `/v1/proposals/${out.proposal.id}/close`, { token: a.token });
    expect(again.status).toBe(409);
    expect((await vote(mid, 'w@open.test')).status).toBe(409);
  });

  it('closed or reaped without votes expires (proposal.expired); reaped with votes resolves; by-token answers 401 for an unknown link', async () => {
    const a = await user({ calendar: true });
    const empty = await proposed(a, { mode: 'poll', slots: [slot(48)] });
    const closed = await t.call('POST', `/v1/proposals/${empty.proposal.id}/close`, {
      token: a.token,
      body: {},
    });
    expect((await closed.json()).proposal.status).toBe('expired');
    expect((await eventsAbout(empty.proposal.id)).map((e) => `${e.type}@${e.account_id}`).sort()).toEqual([
      `proposal.created@${a.accountId}`,
      `proposal.expired@${a.accountId}`,
    ]);

    const voted = await proposed(a, {
      mode: 'poll',
      participant_emails: ['v@reap.test', 'w@reap.test'],
      slots: [slot(200)],
      expires_in_hours: 24,
    });
    const [v] = voted.invitations.map((i: Json) => tokenOf(i.magic_link_url));
    expect(
      (
        await respond(voted.proposal.id, {
          action: 'accept',
          token: v,
          selected_slot_id: voted.proposal.slots[0].id,
        })
      ).status,
    ).toBe(200);
    const silent = await proposed(a, {
      mode: 'poll',
      participant_emails: ['q@reap.test'],
      slots: [slot(200)],
      expires_in_hours: 24,
    });
    clock.advance(25 * HOUR);
    await t.ctx.modules.proposals.expireDue();
    await signIn(a);
    const get = async (id: string) =>
      (await (await t.call('GET', `/v1/proposals/${id}`, { token: a.token })).json()).proposal;
    expect((await get(voted.proposal.id)).status).toBe('accepted');
    expect((await get(voted.proposal.id)).resolution).toMatchObject({
      vote_count: 1,
      total_votes: 1,
      tie_count: 1,
    });
    expect((await get(silent.proposal.id)).status).toBe('expired');
    expect(await mailsTo(a.email, /^Expired/)).not.toHaveLength(0);

    const unknown = await t.call('GET', `/v1/proposals/by-token?token=${'A'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).code).toBe('invalid_token');

    // A host's poll whose host was deleted: its link answers 404 proposal_not_found.
    const acc = await t.account();
    const host = (
      await (
        await t.call('POST', '/v1/hosts', {
          token: acc.key,
          body: { display_name: 'Gone soon', timezone: 'UTC' },
        })
      ).json()
    ).host.principal_id;
    const ics = await t.call('POST', '/v1/calendars/ics', {
      token: acc.key,
      body: { url: feedUrl, principal_id: host },
    });
    expect(ics.status).toBe(201);
    const poll = await t.call('POST', '/v1/proposals', {
      token: acc.key,
      body: { mode: 'poll', slots: [slot(400)], principal_id: host },
    });
    expect(poll.status, await poll.clone().text()).toBe(201);
    const link = tokenOf((await poll.json()).magic_link_url);
    expect((await t.call('GET', `/v1/proposals/by-token?token=${link}`)).status).toBe(200);
    expect((await t.call('DELETE', `/v1/hosts/${host}`, { token: acc.key })).status).toBeLessThan(300);
    const gone = await t.call('GET', `/v1/proposals/by-token?token=${link}`);
    expect(gone.status).toBe(404);
    expect((await gone.json()).code).toBe('proposal_not_found');
  });

  it('resolves exactly once when the last two votes and the close race, and when the close races the reaper', async () => {
    const a = await user({ calendar: true });
    for (let round = 0; round < 4; round++) {
      clock.set(T0);
      const first = slot(300 + round * 10);
      const second = slot(302 + round * 10);
      const out = await proposed(a, {
        mode: 'poll',
        participant_emails: ['r1@race.test', 'r2@race.test', 'r3@race.test'],
        slots: [first, second],
        expires_in_hours: 30,
      });
      const [t1, t2, t3] = out.invitations.map((i: Json) => tokenOf(i.magic_link_url));
      const [s1, s2] = out.proposal.slots.map((s: Json) => s.id);
      expect(
        (await respond(out.proposal.id, { action: 'accept', token: t1, selected_slot_id: s1 })).status,
      ).toBe(200);
      if (round % 2 === 0) {
        // The last two votes and the requester's close at once.
        const results = await Promise.all([
          respond(out.proposal.id, { action: 'accept', token: t2, selected_slot_id: s2 }),
          respond(out.proposal.id, { action: 'accept', token: t3, selected_slot_id: s2 }),
          t.call('POST', `/v1/proposals/${out.proposal.id}/close`, { token: a.token }),
        ]);
        for (const r of results) expect([200, 409]).toContain(r.status);
      } else {
        // Past its end: the close and two reaper passes at once.
        clock.advance(31 * HOUR);
        await signIn(a);
        const [closed] = await Promise.all([
          t.call('POST', `/v1/proposals/${out.proposal.id}/close`, { token: a.token }),
          t.ctx.modules.proposals.expireDue(),
          t.ctx.modules.proposals.expireDue(),
        ]);
        expect([200, 409]).toContain(closed.status);
      }
      const kinds = (await eventsAbout(out.proposal.id)).map((e) => e.type);
      expect(
        kinds.filter((k) => k === 'proposal.resolved'),
        `round ${round}`,
      ).toHaveLength(1);
      expect(kinds.filter((k) => k === 'proposal.expired')).toHaveLength(0);
      const booked = (await bookingsOf(a)).filter((x) => [first.start, second.start].includes(x.start_time));
      expect(booked).toHaveLength(1);
    }
  });
});
