/**
 * How polls end: closed or reaped with and without votes, and resolution exactly once when the last
 * votes, the close and the reaper race inside one process (across processes: test/e2e).
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { proposalsApp, slot, T0, tokenOf } from '../../../test/helpers/proposals.js';
import { HOUR } from '../../lib/time.js';

const p = proposalsApp();
const { t, clock, user, signIn, proposed, respond, eventsAbout, mailsTo, bookingsOf } = p;

describe('polls', () => {
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
      body: { url: p.feedUrl, principal_id: host },
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
