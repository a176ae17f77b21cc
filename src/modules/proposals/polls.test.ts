/**
 * Voting on polls: named (a single-use link per invitee, the last vote resolves) and open (one shared
 * link, a vote per e-mail, closed by its requester, ties) (docs/api.md#proposals-and-polls).
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { at, proposalsApp, slot, tokenOf } from '../../../test/helpers/proposals.js';

const p = proposalsApp();
const { t, user, proposed, respond, mailsTo, bookingsOf } = p;

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
      p.sink.raw.filter((r) => r.includes('Decided: Team dinner') && r.includes('METHOD:REQUEST')).length,
    ).toBe(4);
    // A voter's mail and invite name that voter only, never the other voters' addresses.
    const annRaw = p.sink.raw.find(
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
});
