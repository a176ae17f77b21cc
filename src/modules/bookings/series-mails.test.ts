/**
 * What a series' mail takes from its occurrences (series-mails.ts `seriesMail`): the live occurrences
 * not at their rule time (moved, or their length changed) as the overrides a REQUEST of the series
 * carries, RECURRENCE-ID their occurrence_start; the rule's first occurrence and length as the rule
 * made them even when the first was moved; and the snapshot a mail intent stores (ISO instants).
 */
import { describe, expect, it } from 'vitest';
import { occurrences, type RecurrenceRule } from '../../lib/recurrence.js';
import { type BookingRow, newBookingRow } from './repo.js';
import { seriesMail, seriesSnapshot } from './series-mails.js';
import type { SeriesRow } from './series-repo.js';

// Tuesdays 09:00–09:30 in Berlin, 6 weeks from 16 March 2027.
const RULE: RecurrenceRule = { frequency: 'weekly', interval: 1, count: 6, timezone: 'Europe/Berlin' };
const FIRST = { start: Date.parse('2027-03-16T08:00:00Z'), end: Date.parse('2027-03-16T08:30:00Z') };
const ALL = occurrences(FIRST, RULE);
const at = new Date('2027-03-01T10:00:00Z');

const SERIES: SeriesRow = {
  id: 'ser_1',
  account_id: 'acc_1',
  livemode: true,
  principal_id: 'hst_ann',
  booking_link_id: null,
  frequency: 'weekly',
  interval: 1,
  count: 6,
  timezone: 'Europe/Berlin',
  sequence: 4,
  created_at: at,
  updated_at: at,
};

/** Occurrence `i` of the rule, at its rule time unless `over` says otherwise. */
function occurrence(i: number, over: Partial<BookingRow> = {}): BookingRow {
  const o = ALL[i]!;
  return {
    ...newBookingRow({
      row: {
        id: `bk_${i}`,
        account_id: 'acc_1',
        principal_id: 'hst_ann',
        host_ids: ['hst_ann'],
        status: 'confirmed',
        start_time: new Date(o.start),
        end_time: new Date(o.end),
        customer_email: 'ada@example.com',
        customer_name: 'Ada',
        manage_token_hash: 'h',
        manage_nonce: 'n',
        sequence: 0,
        answers: '{}',
        metadata: '{}',
        series_id: 'ser_1',
        occurrence_start: new Date(o.start),
        created_at: at,
        updated_at: at,
      },
      answers: {},
      metadata: {},
    }),
    ...over,
  };
}

const d = (iso: string) => new Date(iso);

describe('a series mail from its occurrences', () => {
  it('lists as moved the live occurrences off their rule time, at their occurrence_start', () => {
    const rows = [
      occurrence(0),
      // Moved a day later.
      occurrence(1, { start_time: d('2027-03-24T12:00:00Z'), end_time: d('2027-03-24T12:30:00Z') }),
      // Moved, then cancelled: an EXDATE, no override.
      occurrence(2, {
        start_time: d('2027-03-31T12:00:00Z'),
        end_time: d('2027-03-31T12:30:00Z'),
        status: 'cancelled',
      }),
      // At its rule start, longer.
      occurrence(3, { end_time: d('2027-04-06T08:00:00Z') }),
      occurrence(4),
      occurrence(5),
    ];
    const s = seriesMail(SERIES, rows, { cancelled: [], whole: false });
    expect(s.first).toEqual({ start: new Date(FIRST.start), end: new Date(FIRST.end) });
    expect(s.exdates).toEqual([new Date(ALL[2]!.start)]);
    expect(s.moved).toEqual([
      { at: new Date(ALL[1]!.start), start: d('2027-03-24T12:00:00Z'), end: d('2027-03-24T12:30:00Z') },
      { at: new Date(ALL[3]!.start), start: new Date(ALL[3]!.start), end: d('2027-04-06T08:00:00Z') },
    ]);
    expect(seriesSnapshot(s).moved).toEqual([
      { at: '2027-03-23T08:00:00.000Z', start: '2027-03-24T12:00:00.000Z', end: '2027-03-24T12:30:00.000Z' },
      { at: '2027-04-06T07:00:00.000Z', start: '2027-04-06T07:00:00.000Z', end: '2027-04-06T08:00:00.000Z' },
    ]);
  });

  it('keeps the rule first occurrence and length when the first was moved and made longer', () => {
    const rows = [
      occurrence(0, { start_time: d('2027-03-17T12:00:00Z'), end_time: d('2027-03-17T13:00:00Z') }),
      ...[1, 2, 3, 4, 5].map((i) => occurrence(i)),
    ];
    const s = seriesMail(SERIES, rows, { cancelled: [], whole: false });
    expect(s.first).toEqual({ start: new Date(FIRST.start), end: new Date(FIRST.end) });
    expect(s.moved).toEqual([
      { at: new Date(FIRST.start), start: d('2027-03-17T12:00:00Z'), end: d('2027-03-17T13:00:00Z') },
    ]);
  });

  it('lists none when every occurrence is at its rule time, or has no occurrence_start', () => {
    const rows = ALL.map((_, i) => occurrence(i));
    expect(seriesMail(SERIES, rows, { cancelled: [], whole: false }).moved).toEqual([]);
    const loose = rows.map((r) => ({ ...r, occurrence_start: null }));
    expect(seriesMail(SERIES, loose, { cancelled: [], whole: false }).moved).toEqual([]);
  });
});
