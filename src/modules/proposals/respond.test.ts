/**
 * Answering a standard proposal (POST /v1/proposals/:id/response): accept, reject and counter by
 * credential or magic link, who may answer, and an accept whose time was taken meanwhile
 * (docs/api.md#proposals-and-polls; the state machine: src/lib/proposals.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { at, proposalsApp, slot } from '../../../test/helpers/proposals.js';

const p = proposalsApp();
const { t, user, requesterAnd, proposed, respond, mailedToken, mailsTo, bookingsOf } = p;

describe('a standard proposal', () => {
  it('is accepted when everyone accepts: the first accept fixes the slot, a different slot is 409 slot_mismatch, a magic link answers once; everyone is booked (the bookings named by the proposal’s title) and mailed an invite', async () => {
    const [a, b, c] = await requesterAnd(2);
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
    const raw = p.sink.raw.find((r) => r.includes('Booked: Quarterly review') && r.includes(b.email)) ?? '';
    expect(raw).toContain('METHOD:REQUEST');
    expect(raw).toContain(`UID:${proposal.id}@kairos`);
  });

  it('cannot be answered by its requester (403 organizer_cannot_respond) or by anyone outside it (404); without credential or token it is 401', async () => {
    const [a, b] = await requesterAnd(1);
    const stranger = await user();
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
    const [a, b] = await requesterAnd(1);
    const stranger = await user();
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
    const [a, b, c] = await requesterAnd(2);
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
    const [a, b] = await requesterAnd(1);
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

  it('cannot be accepted when someone’s time was taken meanwhile: 409 slot_unavailable, nothing stored, the token still usable', async () => {
    const [a, b] = await requesterAnd(1);
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
});
