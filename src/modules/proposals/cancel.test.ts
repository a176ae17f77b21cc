/**
 * Cancelling (POST /v1/proposals/:id/cancel): an accepted proposal by a party, an open one or an open
 * poll withdrawn by its requester (docs/api.md#proposals-and-polls).
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { at, proposalsApp, slot, tokenOf } from '../../../test/helpers/proposals.js';

const { t, user, requesterAnd, proposed, respond, eventsAbout, mailedToken, mailsTo, bookingsOf } =
  proposalsApp();

describe('a standard proposal', () => {
  it('accepted, is cancelled by a party: every booking cancelled, proposal.cancelled, a CANCEL invite; a second cancel is 409', async () => {
    const [a, b] = await requesterAnd(1);
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
    const [a, b, c] = await requesterAnd(2);
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
});

describe('polls', () => {
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
});
