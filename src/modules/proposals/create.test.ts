/**
 * Creating a proposal or poll: the guards (consent, the requester's calendar, how soon a poll may
 * start) and the input refused field by field (docs/api.md#proposals-and-polls).
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { at, proposalsApp, slot } from '../../../test/helpers/proposals.js';

const { t, user, allow, propose } = proposalsApp();

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
