/**
 * Invites of recurring series (invite.ts; docs/api.md#recurring-series), read back with a real
 * iCalendar parser (ical.js): the series' VEVENT expands to exactly the instants src/lib/recurrence.ts
 * makes, across both DST changes of its zone (an EXDATE takes one away); CANCEL names the series' UID;
 * an occurrence changed alone is a RECURRENCE-ID override; a series' REQUEST carries an override per
 * occurrence moved so far, which the parser applies to its expansion; invites without a series are
 * unchanged.
 */
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { occurrences, type RecurrenceRule, rrule } from '../../lib/recurrence.js';
import type { InviteSpec } from './api.js';
import { buildInvite, inviteCalendar, vtimezone } from './invite.js';

const STAMP = new Date('2027-03-01T12:00:00Z');
// Tuesdays at 09:00 in Berlin for 34 weeks from 16 March 2027: summer time from 28 March, winter
// time again from 31 October.
const RULE: RecurrenceRule = { frequency: 'weekly', interval: 1, count: 34, timezone: 'Europe/Berlin' };
const FIRST = { start: Date.parse('2027-03-16T08:00:00Z'), end: Date.parse('2027-03-16T08:30:00Z') };
const OCCURRENCES = occurrences(FIRST, RULE);

function seriesSpec(over: Partial<InviteSpec> = {}): InviteSpec {
  return {
    method: 'REQUEST',
    uid: 'ser_1@kairos',
    sequence: 2,
    start: new Date(FIRST.start),
    end: new Date(FIRST.end),
    summary: 'Weekly sync',
    timezone: 'America/New_York',
    organizer: { name: 'Ann', email: 'ann@kairos.test' },
    attendees: [{ name: 'Ada', email: 'ada@example.test' }],
    recurrence: { rrule: rrule(RULE), timezone: RULE.timezone, exdates: [] },
    ...over,
  };
}

/** The parsed calendar's VEVENTs. */
function eventsOf(ics: string) {
  const cal = new ICAL.Component(ICAL.parse(ics));
  return { cal, events: cal.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v)) };
}

/** Every start the event repeats at, as ISO instants (the parser's expansion, EXDATE applied). */
function expand(event: ICAL.Event): string[] {
  const out: string[] = [];
  const it = event.iterator();
  for (let t = it.next(); t; t = it.next()) {
    out.push(t.toJSDate().toISOString());
    if (out.length > 1000) throw new Error('runaway expansion');
  }
  return out;
}

/**
 * Every occurrence of the series' event as a client shows it: the rule's expansion (EXDATE applied)
 * with the overrides of the same UID applied (RECURRENCE-ID), as ISO start/end.
 */
function shown(ics: string): { start: string; end: string }[] {
  const cal = new ICAL.Component(ICAL.parse(ics));
  const vevents = cal.getAllSubcomponents('vevent');
  const masters = vevents.filter((v) => !v.hasProperty('recurrence-id'));
  expect(masters).toHaveLength(1);
  const master = new ICAL.Event(masters[0]!);
  for (const v of vevents) if (v !== masters[0]) master.relateException(v);
  const out: { start: string; end: string }[] = [];
  const it = master.iterator();
  for (let t = it.next(); t; t = it.next()) {
    const d = master.getOccurrenceDetails(t);
    out.push({ start: d.startDate.toJSDate().toISOString(), end: d.endDate.toJSDate().toISOString() });
    if (out.length > 1000) throw new Error('runaway expansion');
  }
  return out;
}

const isoStarts = (xs: readonly { start: number }[]) => xs.map((x) => new Date(x.start).toISOString());

describe('the invite of a recurring series', () => {
  it('expands, in a real parser, to exactly the occurrences the rule makes across both DST changes', () => {
    const ics = buildInvite(seriesSpec(), { stamp: STAMP });
    expect(ics).toContain('DTSTART;TZID=Europe/Berlin:20270316T090000\r\n');
    expect(ics).toContain('DTEND;TZID=Europe/Berlin:20270316T093000\r\n');
    expect(ics).toContain('RRULE:FREQ=WEEKLY;INTERVAL=1;COUNT=34\r\n');
    expect(ics).toContain('SEQUENCE:2\r\n');
    expect(ics).toContain('DTSTAMP:20270301T120000Z\r\n');
    expect(ics).not.toContain('EXDATE');
    // The reader's zone first, then the series' zone as the calendar's first component.
    expect(ics.indexOf('X-WR-TIMEZONE:America/New_York')).toBeLessThan(ics.indexOf('BEGIN:VTIMEZONE'));
    expect(ics.indexOf('END:VTIMEZONE')).toBeLessThan(ics.indexOf('BEGIN:VEVENT'));
    const { cal, events } = eventsOf(ics);
    expect(cal.getFirstSubcomponent('vtimezone')?.getFirstPropertyValue('tzid')).toBe('Europe/Berlin');
    expect(events).toHaveLength(1);
    const event = events[0]!;
    expect(event.uid).toBe('ser_1@kairos');
    expect(event.startDate.zone?.tzid).toBe('Europe/Berlin');
    const starts = expand(event);
    // 08:00Z in winter time, 07:00Z in summer time: the wall clock stays at 09:00.
    expect(starts).toHaveLength(34);
    expect(starts.filter((s) => s.endsWith('T07:00:00.000Z')).length).toBeGreaterThan(0);
    expect(starts.filter((s) => s.endsWith('T08:00:00.000Z')).length).toBeGreaterThan(0);
    expect(starts).toEqual(isoStarts(OCCURRENCES));
    expect(event.duration.toSeconds()).toBe(30 * 60);
  });

  it('drops an EXDATE occurrence (written in the series zone), one fewer', () => {
    // The occurrence of 6 April 2027 (summer time: 07:00Z).
    const gone = OCCURRENCES[3]!;
    expect(new Date(gone.start).toISOString()).toBe('2027-04-06T07:00:00.000Z');
    const ics = buildInvite(
      seriesSpec({
        recurrence: { rrule: rrule(RULE), timezone: RULE.timezone, exdates: [new Date(gone.start)] },
      }),
      { stamp: STAMP },
    );
    expect(ics).toContain('EXDATE;TZID=Europe/Berlin:20270406T090000\r\n');
    const starts = expand(eventsOf(ics).events[0]!);
    expect(starts).toHaveLength(33);
    expect(starts).toEqual(isoStarts(OCCURRENCES.filter((o) => o !== gone)));
  });

  it('writes many EXDATEs in order, each once, on one folded line the parser reads back', () => {
    const gone = [OCCURRENCES[20]!, OCCURRENCES[2]!, OCCURRENCES[33]!, OCCURRENCES[2]!, OCCURRENCES[9]!];
    const ics = buildInvite(
      seriesSpec({
        recurrence: {
          rrule: rrule(RULE),
          timezone: RULE.timezone,
          exdates: gone.map((o) => new Date(o.start)),
        },
      }),
      { stamp: STAMP },
    );
    expect(ics.split('\r\n').every((line) => Buffer.byteLength(line) <= 75)).toBe(true);
    const starts = expand(eventsOf(ics).events[0]!);
    expect(starts).toEqual(isoStarts(OCCURRENCES.filter((o) => !gone.includes(o))));
  });

  it('cancels the whole series with METHOD:CANCEL of the series UID', () => {
    const ics = buildInvite(seriesSpec({ method: 'CANCEL', sequence: 5 }), { stamp: STAMP });
    expect(ics).toContain('METHOD:CANCEL\r\n');
    const { cal, events } = eventsOf(ics);
    expect(cal.getFirstPropertyValue('method')).toBe('CANCEL');
    expect(events).toHaveLength(1);
    expect(events[0]!.uid).toBe('ser_1@kairos');
    expect(events[0]!.sequence).toBe(5);
    expect(events[0]!.component.getFirstPropertyValue('status')).toBe('CANCELLED');
    expect(events[0]!.isRecurring()).toBe(true);
    expect(events[0]!.isRecurrenceException()).toBe(false);
  });

  it('moves one occurrence with a RECURRENCE-ID override of the series UID, in the series zone', () => {
    const moved = OCCURRENCES[10]!; // 25 May 2027, 09:00 Berlin (07:00Z)
    const ics = buildInvite(
      seriesSpec({
        recurrence: null,
        recurrenceId: { at: new Date(moved.start), timezone: 'Europe/Berlin' },
        start: new Date('2027-05-26T12:00:00Z'),
        end: new Date('2027-05-26T12:30:00Z'),
        sequence: 3,
      }),
      { stamp: STAMP },
    );
    expect(ics).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20270525T090000\r\n');
    expect(ics).toContain('DTSTART;TZID=Europe/Berlin:20270526T140000\r\n');
    expect(ics).not.toContain('RRULE:FREQ=WEEKLY');
    expect(ics).toContain('BEGIN:VTIMEZONE');
    const { events } = eventsOf(ics);
    expect(events).toHaveLength(1);
    const event = events[0]!;
    expect(event.uid).toBe('ser_1@kairos');
    expect(event.sequence).toBe(3);
    expect(event.isRecurrenceException()).toBe(true);
    expect(event.recurrenceId.toJSDate().toISOString()).toBe(new Date(moved.start).toISOString());
    expect(event.startDate.toJSDate().toISOString()).toBe('2027-05-26T12:00:00.000Z');
    expect(event.endDate.toJSDate().toISOString()).toBe('2027-05-26T12:30:00.000Z');
  });

  it('carries an override per moved occurrence after the series event, which the parser applies', () => {
    // 30 March 2027 (summer time) moved to Wednesday 14:00 Berlin; 2 November (winter time) to 10:00
    // for an hour; 6 April cancelled.
    const gone = OCCURRENCES[3]!;
    const overrides = [
      {
        recurrenceId: new Date(OCCURRENCES[33]!.start),
        start: new Date('2027-11-02T09:00:00Z'),
        end: new Date('2027-11-02T10:00:00Z'),
      },
      {
        recurrenceId: new Date(OCCURRENCES[2]!.start),
        start: new Date('2027-03-31T12:00:00Z'),
        end: new Date('2027-03-31T12:30:00Z'),
      },
    ];
    const ics = buildInvite(
      seriesSpec({
        recurrence: { rrule: rrule(RULE), timezone: RULE.timezone, exdates: [new Date(gone.start)] },
        overrides,
      }),
      { stamp: STAMP },
    );
    // The series' event first, then the overrides in order, each in the series' zone.
    const blocks = ics.split('BEGIN:VEVENT').slice(1);
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toContain('RRULE:');
    expect(blocks[1]).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20270330T090000\r\n');
    expect(blocks[1]).toContain('DTSTART;TZID=Europe/Berlin:20270331T140000\r\n');
    expect(blocks[2]).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20271102T090000\r\n');
    expect(blocks[2]).toContain('DTEND;TZID=Europe/Berlin:20271102T110000\r\n');
    const { events } = eventsOf(ics);
    for (const e of events) {
      expect(e.uid).toBe('ser_1@kairos');
      expect(e.sequence).toBe(2);
      expect(e.component.getFirstPropertyValue('dtstamp')?.toString()).toBe(
        events[0]!.component.getFirstPropertyValue('dtstamp')?.toString(),
      );
    }
    expect(events.slice(1).every((e) => e.isRecurrenceException() && !e.isRecurring())).toBe(true);
    const iso = (o: { start: number; end: number }) => ({
      start: new Date(o.start).toISOString(),
      end: new Date(o.end).toISOString(),
    });
    const expected = OCCURRENCES.filter((o) => o !== gone).map(iso);
    expected[2] = { start: '2027-03-31T12:00:00.000Z', end: '2027-03-31T12:30:00.000Z' };
    expected[32] = { start: '2027-11-02T09:00:00.000Z', end: '2027-11-02T10:00:00.000Z' };
    expect(shown(ics)).toEqual(expected);
  });

  it('writes no override VEVENT without overrides, nor for an empty list', () => {
    const ics = buildInvite(seriesSpec(), { stamp: STAMP });
    expect(buildInvite(seriesSpec({ overrides: [] }), { stamp: STAMP })).toBe(ics);
    expect(ics).not.toContain('RECURRENCE-ID');
  });

  it('keeps the wall-clock time in a zone south of the equator and a linked zone named as asked', () => {
    // Sydney leaves summer time on 4 April 2027 and starts it on 3 October 2027.
    const rule: RecurrenceRule = {
      frequency: 'monthly',
      interval: 1,
      count: 12,
      timezone: 'Australia/Sydney',
    };
    const first = { start: Date.parse('2027-01-14T22:00:00Z'), end: Date.parse('2027-01-14T23:00:00Z') };
    const ics = buildInvite(
      seriesSpec({
        start: new Date(first.start),
        end: new Date(first.end),
        recurrence: { rrule: rrule(rule), timezone: rule.timezone, exdates: [] },
      }),
      { stamp: STAMP },
    );
    expect(expand(eventsOf(ics).events[0]!)).toEqual(isoStarts(occurrences(first, rule)));
    // Africa/Accra is a link to Africa/Abidjan: the same rules, under the name the series has.
    expect(vtimezone('Africa/Accra')).toContain('TZID:Africa/Accra\r\n');
    expect(vtimezone('Africa/Accra')).not.toContain('Abidjan');
    expect(vtimezone('Not/AZone')).toBeNull();
  });

  it('writes exactly what ical-generator writes but for the reader zone before the first component', () => {
    for (const spec of [
      seriesSpec(),
      seriesSpec({ method: 'CANCEL', timezone: null }),
      seriesSpec({
        recurrence: {
          rrule: rrule(RULE),
          timezone: RULE.timezone,
          exdates: [new Date(OCCURRENCES[5]!.start)],
        },
        description: 'A long description, with commas; semicolons and more. '.repeat(3),
      }),
      seriesSpec({
        recurrence: null,
        recurrenceId: { at: new Date(OCCURRENCES[1]!.start), timezone: 'Europe/Berlin' },
      }),
      seriesSpec({
        overrides: [
          {
            recurrenceId: new Date(OCCURRENCES[4]!.start),
            start: new Date('2027-04-14T15:00:00Z'),
            end: new Date('2027-04-14T15:45:00Z'),
          },
        ],
      }),
    ]) {
      const theirs = inviteCalendar(spec, STAMP).calendar.toString();
      const zone = /\r\nX-WR-TIMEZONE:[^\r]*(\r\n [^\r]*)*/.exec(theirs)?.[0] ?? '';
      const expected = `${theirs.replace(zone, '').replace('\r\nBEGIN:VTIMEZONE', `${zone}\r\nBEGIN:VTIMEZONE`)}\r\n`;
      expect(buildInvite(spec, { stamp: STAMP })).toBe(expected);
    }
  });

  it('refuses what it cannot write: an unknown zone, an RRULE that is not one, zones that disagree', () => {
    const bad = (over: Partial<InviteSpec>) => () => buildInvite(seriesSpec(over), { stamp: STAMP });
    expect(bad({ recurrence: { rrule: rrule(RULE), timezone: 'Mars/Olympus', exdates: [] } })).toThrow(
      /zone/,
    );
    expect(bad({ recurrence: { rrule: 'FREQ=WEEKLY\r\nX:1', timezone: 'UTC', exdates: [] } })).toThrow(
      /RRULE/,
    );
    expect(bad({ recurrenceId: { at: new Date(FIRST.start), timezone: 'Europe/Paris' } })).toThrow(
      /different zones/,
    );
    const moved = {
      recurrenceId: new Date(FIRST.start),
      start: new Date(FIRST.end),
      end: new Date(FIRST.end + 1),
    };
    expect(bad({ recurrence: null, overrides: [moved] })).toThrow(/need a recurrence/);
    expect(bad({ overrides: [{ ...moved, end: moved.start }] })).toThrow(/end after/);
    expect(bad({ overrides: [moved, moved] })).toThrow(/twice or excluded/);
    expect(
      bad({
        recurrence: { rrule: rrule(RULE), timezone: RULE.timezone, exdates: [new Date(FIRST.start)] },
        overrides: [moved],
      }),
    ).toThrow(/twice or excluded/);
  });

  it('leaves an invite without a series as it was: UTC instants, no VTIMEZONE', () => {
    const ics = buildInvite(seriesSpec({ recurrence: null }), { stamp: STAMP });
    expect(ics).toContain('DTSTART:20270316T080000Z\r\n');
    expect(ics).not.toContain('VTIMEZONE');
    expect(ics).not.toContain('TZID');
    expect(buildInvite(seriesSpec({ recurrence: undefined, recurrenceId: null }), { stamp: STAMP })).toBe(
      ics,
    );
  });
});
