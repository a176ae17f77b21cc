/**
 * Expiry: the reaper at expires_at, the index it reads, and consent revoked before acceptance
 * (docs/api.md#proposals-and-polls).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { genericPlan } from '../../../test/helpers/plans.js';
import { at, proposalsApp, slot } from '../../../test/helpers/proposals.js';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { HOUR } from '../../lib/time.js';
import { findDueQuery } from './repo.js';

const {
  t,
  clock,
  user,
  allow,
  requesterAnd,
  signIn,
  proposed,
  respond,
  eventsAbout,
  mailedToken,
  mailsTo,
  bookingsOf,
} = proposalsApp();
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe('a standard proposal', () => {
  it('expires at expires_at by the reaper: proposal.expired to every party, a mail to the requester', async () => {
    const [a, b] = await requesterAnd(1);
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
    const plan = await genericPlan(t.ctx.db, (trx) =>
      findDueQuery(trx, new Date(clock.nowMs()), 100, { livemode: true }),
    );
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
    // A later event to the same subscription, delivered once the jobs are drained: whatever the
    // revocation and the refused accept would have sent has been sent by then.
    const marker = await proposed(a, { mode: 'poll', slots: [slot(60)] });
    await t.ctx.jobs.drain();
    await receiver.waitFor(before + 1);
    const since = receiver.received.slice(before).map((r) => JSON.parse(r.body));
    expect(since.map((e) => e.type)).toEqual(['proposal.created']);
    expect(JSON.stringify(since[0])).toContain(marker.proposal.id);
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
