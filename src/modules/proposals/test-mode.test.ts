/**
 * Proposals and polls in test mode (docs/api.md#test-mode, #test-clock): made in the key's mode, found
 * only by it, expired on the account's test clock (their events of test mode, at the deadline, before
 * the advance answers), and left alone by the live reaper.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { serveCalendar, vcalendar } from '../../../test/helpers/ics.js';
import { at, proposalsApp, slot } from '../../../test/helpers/proposals.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';
import { HOUR } from '../../lib/time.js';

const { t, clock, user, requesterAnd, proposed, respond } = proposalsApp();
let feed: Awaited<ReturnType<typeof serveCalendar>>;
beforeAll(async () => {
  feed = await serveCalendar(vcalendar('\r\n', []));
});
afterAll(async () => {
  await feed?.close();
});
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

/** An account whose own principal (shared by both modes) has a calendar, with a live and a test key. */
async function account() {
  const u = await user();
  const c = await t.call('POST', '/v1/calendars/ics', { token: u.key, body: { url: feed.url } });
  expect(c.status, await c.clone().text()).toBe(201);
  const test = await testKeyFor(t, u.key);
  return { ...u, testKey: test.key };
}

const poll = (email: string, hours = 2) => ({
  mode: 'poll',
  participant_emails: [email],
  slots: [slot(100)],
  expires_in_hours: hours,
});

async function stored(id: string) {
  return t.ctx.db
    .selectFrom('proposals')
    .select(['status', 'livemode'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

describe('proposals in test mode', () => {
  it('a proposal of one mode is 404 and unlisted to the other; its magic link answers in its own mode', async () => {
    const a = await account();
    const enqueued = spyMails();
    const { proposal: testPoll, invitations } = await proposed(
      { ...a, token: a.testKey },
      poll('tp@example.com'),
    );
    const { proposal: livePoll } = await proposed({ ...a, token: a.key }, poll('lp@example.com'));
    expect(testPoll.livemode).toBe(false);
    expect(livePoll.livemode).toBe(true);
    for (const [token, other] of [
      [a.key, testPoll.id],
      [a.testKey, livePoll.id],
    ] as const) {
      expect((await t.call('GET', `/v1/proposals/${other}`, { token })).status).toBe(404);
      expect((await t.call('POST', `/v1/proposals/${other}/close`, { token })).status).toBe(404);
      expect((await t.call('POST', `/v1/proposals/${other}/cancel`, { token, body: {} })).status).toBe(404);
    }
    const ids = async (token: string) =>
      (await (await t.call('GET', '/v1/proposals', { token })).json()).proposals.map(
        (p: { id: string }) => p.id,
      );
    expect(await ids(a.key)).toEqual([livePoll.id]);
    expect(await ids(a.testKey)).toEqual([testPoll.id]);

    // The invitee votes by the link, with no credential: in the poll's (test) mode.
    const link = invitations[0].magic_link_url.split('/p/')[1];
    const vote = await respond(testPoll.id, {
      action: 'accept',
      token: link,
      selected_slot_id: testPoll.slots[0].id,
    });
    expect(vote.status, await vote.clone().text()).toBe(200);
    // Its mails (invitation, result) are handed to the mail outbox as of test mode.
    const modes = enqueued.flatMap((m) => (m.subjectId === testPoll.id ? [m.livemode] : []));
    expect(modes.length).toBeGreaterThan(1);
    expect(modes.every((x) => x === false)).toBe(true);
  });

  it('a live consent lets its grantee propose in live mode only', async () => {
    const [requester, participant] = await requesterAnd(1);
    // requesterAnd's consents are granted with sessions: live, so test mode finds none.
    expect(await t.ctx.modules.network.mayPropose(requester!.id, participant!.id, false, clock.now())).toBe(
      false,
    );
    expect(await t.ctx.modules.network.mayPropose(requester!.id, participant!.id, true, clock.now())).toBe(
      true,
    );
  });

  it('a poll of a test key expires when the test clock passes its deadline, with proposal.expired of test mode at the deadline, before the advance answers; a live poll is untouched', async () => {
    const a = await account();
    const { proposal: testPoll } = await proposed({ ...a, token: a.testKey }, poll('tx@example.com', 2));
    const { proposal: livePoll } = await proposed({ ...a, token: a.key }, poll('lx@example.com', 2));
    expect(testPoll.expires_at).toBe(at(2));

    await advanceTestClock(t, a.testKey, 3 * 3600);

    expect(await stored(testPoll.id)).toEqual({ status: 'expired', livemode: false });
    expect(await stored(livePoll.id)).toEqual({ status: 'proposed', livemode: true });
    const events = await t.ctx.db
      .selectFrom('events')
      .select(['livemode', 'created_at', 'envelope', 'data'])
      .where('account_id', '=', a.accountId)
      .where('type', '=', 'proposal.expired')
      .execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(events[0]!.created_at.toISOString()).toBe(testPoll.expires_at);
    expect(JSON.parse(events[0]!.envelope)).toMatchObject({
      livemode: false,
      created_at: testPoll.expires_at,
    });
    expect((events[0]!.data as { proposal: { id: string } }).proposal.id).toBe(testPoll.id);
    const read = await t.call('GET', `/v1/proposals/${testPoll.id}`, { token: a.testKey });
    expect((await read.json()).proposal).toMatchObject({ status: 'expired', livemode: false });
  });

  it('the live reaper expires live proposals only, whatever the test clock says', async () => {
    const a = await account();
    const { proposal: testPoll } = await proposed({ ...a, token: a.testKey }, poll('ty@example.com', 2));
    const { proposal: livePoll } = await proposed({ ...a, token: a.key }, poll('ly@example.com', 2));
    clock.advance(3 * HOUR);
    await t.ctx.modules.proposals.expireDue();
    expect(await stored(livePoll.id)).toEqual({ status: 'expired', livemode: true });
    expect(await stored(testPoll.id)).toEqual({ status: 'proposed', livemode: false });
  });
});
