/**
 * The month view and the times of a day: which days of a month have free time, the free times of the
 * chosen day in the visitor's zone. Used by the booking page and by rescheduling on `/b/`. Keyboard:
 * every free day and time is a button in reading order; days without time are disabled (skipped by
 * Tab). A polite live region says what changed after each load and each choice of day. A seated
 * link's times say how many seats are left when the link shows it (`seats_remaining`).
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type Answer, api, linkPath, type Slot, type SlotsAnswer } from './api.js';
import {
  addMonths,
  dayKey,
  dayLabel,
  monthLabel,
  monthWeeks,
  monthWindow,
  timeLabel,
  weekdays,
} from './time.js';

export interface EmptyRange {
  month: string;
  from: number;
  to: number;
}

export interface PickerProps {
  slug: string;
  duration: number;
  zone: string;
  /** Raise to ask again (after a 409, or after a booking changed). */
  refresh: number;
  /** The start of the slot picked before, shown as pressed. */
  picked?: string | undefined;
  onPick(slot: Slot): void;
  /** A month (from now on) without free time, or null once one has some. */
  onEmpty?(range: EmptyRange | null): void;
  /** Shown above the grid (e.g. "someone was faster"), read out with the next update. */
  notice?: string | undefined;
}

const WEEKDAYS = weekdays();
const MONTHS_AHEAD = 12;
let marked = false;

/** Requests started before the first render (`preloadSlots`), by `month|duration`. */
const early = new Map<string, Promise<Answer<SlotsAnswer>>>();

/**
 * The free times of a month. The window covers the month in every zone (monthWindow), so the answer
 * does not depend on the visitor's zone: no `timezone` is sent, and answers are shared between zones.
 */
function slotsUrl(slug: string, month: string, duration: number): string | null {
  const window = monthWindow(month, Date.now());
  if (!window) return null;
  const q = new URLSearchParams({
    from: new Date(window.from).toISOString(),
    to: new Date(window.to).toISOString(),
    duration_minutes: String(duration),
  });
  return linkPath(slug, `/availability?${q}`);
}

/**
 * Asks for this month's free times at once, while the page is still being drawn: the request the
 * server already told the browser to preload (`<link rel="preload" id="slots-preload">`, same URL),
 * when it is for the visitor's month and this duration.
 */
export function preloadSlots(slug: string, duration: number, zone: string): void {
  const month = dayKey(Date.now(), zone).slice(0, 7);
  const preload = document.getElementById('slots-preload') as HTMLLinkElement | null;
  const url =
    preload && preload.dataset.month === month && Number(preload.dataset.duration) === duration
      ? preload.href
      : slotsUrl(slug, month, duration);
  if (url) early.set(`${month}|${duration}`, api<SlotsAnswer>('GET', url));
}

export function SlotPicker(p: PickerProps): VNode {
  const thisMonth = dayKey(Date.now(), p.zone).slice(0, 7);
  const [month, setMonth] = useState(thisMonth);
  const [days, setDays] = useState<Map<string, Slot[]> | null>(null);
  const [day, setDay] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('Loading free times…');
  const firstLoad = useRef(true);

  useEffect(() => {
    let live = true;
    const window = monthWindow(month, Date.now());
    const url = slotsUrl(p.slug, month, p.duration);
    if (!window || !url) {
      setDays(new Map());
      return;
    }
    setDays(null);
    setError('');
    setStatus(`Loading free times for ${monthLabel(month)}…`);
    const key = `${month}|${p.duration}`;
    const pending = early.get(key);
    early.delete(key);
    (pending ?? api<SlotsAnswer>('GET', url)).then((a) => {
      if (!live) return;
      if (!a.ok) {
        setDays(new Map());
        setError(a.problem.detail ?? 'Free times could not be loaded.');
        setStatus('Free times could not be loaded.');
        return;
      }
      const byDay = new Map<string, Slot[]>();
      for (const s of a.data.slots) {
        const key = dayKey(Date.parse(s.start), p.zone);
        if (!key.startsWith(month)) continue;
        const list = byDay.get(key);
        if (list) list.push(s);
        else byDay.set(key, [s]);
      }
      // The first visit of a month without free time moves on to the next month once.
      if (firstLoad.current && byDay.size === 0 && month === thisMonth) {
        firstLoad.current = false;
        setMonth(addMonths(month, 1));
        return;
      }
      firstLoad.current = false;
      const first = byDay.keys().next().value ?? null;
      const chosen = day && byDay.has(day) ? day : first;
      setDays(byDay);
      setDay(chosen);
      p.onEmpty?.(byDay.size === 0 ? { month, ...window } : null);
      const count = byDay.size;
      setStatus(
        count === 0
          ? `No free time in ${monthLabel(month)}.`
          : `${monthLabel(month)}: ${count} ${count === 1 ? 'day' : 'days'} with free time.` +
              (chosen ? ` ${timesOn(chosen, byDay.get(chosen)?.length ?? 0)}` : ''),
      );
    });
    return () => {
      live = false;
    };
    // `day` is read, not a reason to ask again.
  }, [month, p.slug, p.duration, p.zone, p.refresh]);

  // The budget's measure (bench/pages.ts): the first time free times are in the document.
  useLayoutEffect(() => {
    if (!marked && days && days.size > 0) {
      marked = true;
      performance.mark('kairos:slots-visible');
    }
  }, [days]);

  const choose = (d: string) => {
    setDay(d);
    setStatus(timesOn(d, days?.get(d)?.length ?? 0));
  };
  const slots = (day && days?.get(day)) || [];
  const last = addMonths(thisMonth, MONTHS_AHEAD);

  return html`<div class="picker">
    ${p.notice && html`<p class="notice" role="alert">${p.notice}</p>`}
    <div class="month" aria-busy=${days === null}>
      <div class="month-nav">
        <button type="button" class="nav" aria-label="Previous month" disabled=${month <= thisMonth}
          onClick=${() => setMonth(addMonths(month, -1))}>‹</button>
        <h2 id="month-h">${monthLabel(month)}</h2>
        <button type="button" class="nav" aria-label="Next month" disabled=${month >= last}
          onClick=${() => setMonth(addMonths(month, 1))}>›</button>
      </div>
      <table class="grid" aria-labelledby="month-h">
        <thead><tr>${WEEKDAYS.map((w) => html`<th scope="col" abbr=${w.long}>${w.short}</th>`)}</tr></thead>
        <tbody>
          ${monthWeeks(month).map(
            (week) =>
              html`<tr>${week.map((d) => {
                if (!d) return html`<td></td>`;
                const n = days?.get(d)?.length ?? 0;
                return html`<td><button type="button" class="day" disabled=${n === 0}
                aria-pressed=${n > 0 ? d === day : undefined}
                aria-label=${`${dayLabel(d)}${n ? `, ${n} free ${n === 1 ? 'time' : 'times'}` : ', no free time'}`}
                onClick=${() => choose(d)}>${Number(d.slice(8))}</button></td>`;
              })}</tr>`,
          )}
        </tbody>
      </table>
    </div>
    <div class="times">
      <h2 id="times-h">${day ? dayLabel(day) : days === null ? 'Loading…' : 'No day with free time'}</h2>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${
        slots.length > 0 &&
        html`<ul class="slots" aria-labelledby="times-h">
        ${slots.map(
          (s) => html`<li><button type="button" class="slot" aria-pressed=${s.start === p.picked}
            onClick=${() => p.onPick(s)}>${timeLabel(s.start, p.zone)}${
              s.seats_remaining !== undefined &&
              html`<span class="sr-only">, </span><span class="seats">${seatsLeft(s.seats_remaining)}</span>`
            }</button></li>`,
        )}
      </ul>`
      }
    </div>
    <p class="sr-only" role="status" aria-live="polite">${status}</p>
  </div>`;
}

/** "1 seat left", "3 seats left": a seated link's slot that shows what remains. */
export function seatsLeft(n: number): string {
  return `${n} ${n === 1 ? 'seat' : 'seats'} left`;
}

function timesOn(day: string, n: number): string {
  return `${dayLabel(day)}: ${n} free ${n === 1 ? 'time' : 'times'}.`;
}
