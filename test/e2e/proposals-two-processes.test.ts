import { describe, expect, it } from 'vitest';
import type { Json, TestApp } from '../helpers/app.js';
import { useEmptyCalendar } from '../helpers/ics.js';
import { callServer, type ServerProcess, useTwoServers } from '../helpers/process.js';
import { HOUR } from '../../src/lib/time.js';

/**
 * Proposals across two `kairos serve` processes on one database: the triggers of one change, sent to
 * both processes at once, make one change — one acceptance with one set of bookings and one
 * proposal.accepted per account; one poll resolution with one proposal.resolved.
 */
const feed = useEmptyCalendar();
let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers((s) => ({ t, a, b } = s), { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' });

const slotAt = (hours: number) => {
  const start = new Date(Math.ceil((Date.now() + hours * HOUR) / HOUR) * HOUR);
  return { start: start.toISOString(), end: new Date(start.getTime() + 30 * 60_000).toISOString() };
};

async function typesAbout(proposalId: string) {
  const rows = await t.ctx.db
    .selectFrom('events')
    .select(['type', 'account_id', 'data'])
    .where('type', 'like', 'proposal.%')
    .execute();
  return rows
    .filter((r) => {
      const d = r.data as Json;
      return d.proposal_id === proposalId || d.proposal?.id === proposalId;
    })
    .map((r) => `${r.type}@${r.account_id}`);
}

describe('proposals across two server processes', () => {
  it('two accepts of the last participant through A and B at once: one acceptance, one booking each, one proposal.accepted per account (10 rounds)', async () => {
    const requester = await t.account();
    const p1 = await t.account();
    const p2 = await t.account();
    expect(
      (await callServer(a.url, 'POST', '/v1/calendars/ics', requester.key, { url: feed.url })).status,
    ).toBe(201);
    for (const p of [p1, p2]) {
      const granted = await callServer(a.url, 'POST', '/v1/consents', p.key, {
        grantee_id: requester.id,
        scopes: ['booking:propose'],
      });
      expect(granted.status).toBe(201);
    }
    for (let round = 0; round < 10; round++) {
      const slot = slotAt(48 + round);
      const created = await callServer(a.url, 'POST', '/v1/proposals', requester.key, {
        mode: 'standard',
        participant_ids: [p1.id, p2.id],
        slots: [slot],
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const id = ((await created.json()) as Json).proposal.id as string;
      expect(
        (await callServer(b.url, 'POST', `/v1/proposals/${id}/response`, p1.key, { action: 'accept' }))
          .status,
      ).toBe(200);
      const answers = await Promise.all([
        callServer(a.url, 'POST', `/v1/proposals/${id}/response`, p2.key, { action: 'accept' }),
        callServer(b.url, 'POST', `/v1/proposals/${id}/response`, p2.key, { action: 'accept' }),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      const types = await typesAbout(id);
      for (const acc of [requester, p1, p2]) {
        expect(
          types.filter((x) => x === `proposal.accepted@${acc.id}`),
          `round ${round}`,
        ).toHaveLength(1);
      }
      const bookings = await t.ctx.db
        .selectFrom('bookings')
        .select(['principal_id'])
        .where('proposal_id', '=', id)
        .execute();
      expect(bookings.map((x) => x.principal_id).sort()).toEqual([requester.id, p1.id, p2.id].sort());
    }
  });

  it('the last two votes of a named poll through A and B at once: one resolution, one proposal.resolved, one booking (10 rounds)', async () => {
    const requester = await t.account();
    expect(
      (await callServer(b.url, 'POST', '/v1/calendars/ics', requester.key, { url: feed.url })).status,
    ).toBe(201);
    for (let round = 0; round < 10; round++) {
      const created = await callServer(b.url, 'POST', '/v1/proposals', requester.key, {
        mode: 'poll',
        participant_emails: ['one@poll.test', 'two@poll.test'],
        slots: [slotAt(100 + round), slotAt(200 + round)],
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const body = (await created.json()) as Json;
      const id = body.proposal.id as string;
      const [s1, s2] = body.proposal.slots.map((s: Json) => s.id);
      const [k1, k2] = body.invitations.map((i: Json) => (i.magic_link_url as string).split('/p/')[1]);
      const votes = await Promise.all([
        callServer(a.url, 'POST', `/v1/proposals/${id}/response`, undefined, {
          action: 'accept',
          token: k1,
          selected_slot_id: s1,
        }),
        callServer(b.url, 'POST', `/v1/proposals/${id}/response`, undefined, {
          action: 'accept',
          token: k2,
          selected_slot_id: s2,
        }),
      ]);
      expect(votes.map((r) => r.status)).toEqual([200, 200]);
      const types = await typesAbout(id);
      expect(types.filter((x) => x.startsWith('proposal.resolved@'))).toEqual([
        `proposal.resolved@${requester.id}`,
      ]);
      const p = (await (await callServer(a.url, 'GET', `/v1/proposals/${id}`, requester.key)).json()) as Json;
      // A tie of one vote each: the earliest start wins.
      expect(p.proposal.resolution).toMatchObject({
        winning_slot: { id: s1 },
        vote_count: 1,
        total_votes: 2,
        tie_count: 2,
      });
      const bookings = await t.ctx.db
        .selectFrom('bookings')
        .select(['id'])
        .where('proposal_id', '=', id)
        .execute();
      expect(bookings).toHaveLength(1);
    }
  });
});
