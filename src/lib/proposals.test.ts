import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allows,
  type Facts,
  type PollSlot,
  pollWinner,
  TRANSITIONS,
  transition,
  transitionTable,
} from './proposals.js';

const facts = (f: Partial<Facts> = {}): Facts => ({
  consentRevoked: false,
  othersPending: false,
  hasVotes: false,
  ...f,
});

describe('pollWinner', () => {
  const slots: PollSlot[] = [
    { id: 'slot_b', start: 2_000, end: 3_000 },
    { id: 'slot_a', start: 1_000, end: 2_000 },
    { id: 'slot_c', start: 3_000, end: 4_000 },
  ];

  it('answers null when nobody voted (the poll expires)', () => {
    expect(pollWinner(slots, [])).toBeNull();
    expect(pollWinner(slots, ['slot_unknown'])).toBeNull();
  });

  it('gives a clean winner tie_count 1', () => {
    expect(pollWinner(slots, ['slot_c', 'slot_c', 'slot_a'])).toEqual({
      slot: slots[2],
      voteCount: 2,
      totalVotes: 3,
      tieCount: 1,
    });
  });

  it('breaks a tie by the earliest start, whatever the order of the slots', () => {
    const r = pollWinner(slots, ['slot_b', 'slot_a', 'slot_c']);
    expect(r?.slot.id).toBe('slot_a');
    expect(r?.tieCount).toBe(3);
    expect(r?.voteCount).toBe(1);
  });

  it('property: most votes, earliest start among the tied, tie_count counts the tied slots', () => {
    const slotArb = fc
      .uniqueArray(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 10 })
      .map((starts) =>
        starts.map((s, i) => ({ id: `slot_${i}`, start: s * 1_800_000, end: s * 1_800_000 + 1_800_000 })),
      );
    fc.assert(
      fc.property(
        slotArb.chain((ss) =>
          fc.tuple(fc.constant(ss), fc.array(fc.constantFrom(...ss.map((s) => s.id)), { maxLength: 40 })),
        ),
        ([ss, votes]) => {
          const r = pollWinner(ss, votes);
          if (votes.length === 0) {
            expect(r).toBeNull();
            return;
          }
          const count = (id: string) => votes.filter((v) => v === id).length;
          const max = Math.max(...ss.map((s) => count(s.id)));
          const tied = ss.filter((s) => count(s.id) === max);
          const earliest = Math.min(...tied.map((s) => s.start));
          expect(r).not.toBeNull();
          expect(r!.voteCount).toBe(max);
          expect(count(r!.slot.id)).toBe(max);
          expect(r!.slot.start).toBe(earliest);
          expect(r!.tieCount).toBe(tied.length);
          expect(r!.totalVotes).toBe(votes.length);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the transition table', () => {
  it('lets the first accept of several participants leave the proposal proposed', () => {
    expect(transition('proposed', 'standard', 'accept', facts({ othersPending: true }))?.to).toBe('proposed');
  });

  it('accepts on the last acceptance, with bookings, calendars, mails and proposal.accepted', () => {
    const t = transition('proposed', 'standard', 'accept', facts());
    expect(t?.to).toBe('accepted');
    expect(t?.effects).toEqual([
      'record_answer',
      'book',
      'write_calendars',
      'mail_everyone',
      'event:proposal.accepted',
    ]);
  });

  it('expires on an accept after the consent was revoked: a mail to the requester and no event', () => {
    const t = transition(
      'proposed',
      'standard',
      'accept',
      facts({ consentRevoked: true, othersPending: true }),
    );
    expect(t?.to).toBe('expired');
    expect(t?.answer).toEqual({ status: 409, code: 'consent_revoked' });
    expect(t?.effects).toEqual(['mail_requester']);
    expect(t?.effects.some((e) => e.startsWith('event:'))).toBe(false);
  });

  it('resolves a poll on the last named vote, on close or at expiry only when there are votes', () => {
    expect(transition('proposed', 'poll', 'vote', facts({ othersPending: false, hasVotes: true }))?.to).toBe(
      'accepted',
    );
    expect(transition('proposed', 'poll', 'close', facts({ hasVotes: true }))?.to).toBe('accepted');
    expect(transition('proposed', 'poll', 'close', facts())?.to).toBe('expired');
    expect(transition('proposed', 'poll', 'expire', facts({ hasVotes: true }))?.to).toBe('accepted');
    expect(transition('proposed', 'poll', 'expire', facts())?.to).toBe('expired');
  });

  it('sends proposal.resolved only from rows that store accepted, and always after resolve', () => {
    for (const t of TRANSITIONS.filter((r) => r.effects.includes('event:proposal.resolved'))) {
      expect(t.to).toBe('accepted');
      expect(t.effects.indexOf('resolve')).toBeLessThan(t.effects.indexOf('event:proposal.resolved'));
    }
  });

  it('refuses what no row allows: nothing leaves a final status but the cancel of an accepted standard proposal; an open proposal can be withdrawn', () => {
    for (const from of ['rejected', 'countered', 'cancelled', 'expired'] as const) {
      for (const action of ['accept', 'reject', 'counter', 'vote', 'close', 'cancel', 'expire'] as const) {
        expect(allows(from, 'standard', action)).toBe(false);
        expect(allows(from, 'poll', action)).toBe(false);
      }
    }
    expect(allows('accepted', 'standard', 'cancel')).toBe(true);
    expect(allows('accepted', 'poll', 'cancel')).toBe(false);
    for (const mode of ['standard', 'poll'] as const) {
      const withdraw = transition('proposed', mode, 'cancel', {
        consentRevoked: false,
        othersPending: true,
        hasVotes: true,
      });
      expect(withdraw).toMatchObject({
        to: 'cancelled',
        effects: ['mail_withdrawn', 'event:proposal.cancelled'],
      });
    }
    expect(allows('proposed', 'standard', 'close')).toBe(false);
    expect(allows('proposed', 'poll', 'counter')).toBe(false);
  });

  it('renders as the markdown table docs/design.md prints', () => {
    expect(transitionTable().split('\n')).toHaveLength(TRANSITIONS.length + 2);
  });
});

describe('docs/design.md', () => {
  it('prints the transition table exactly as the code has it', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
    expect(doc).toContain(transitionTable());
  });
});
