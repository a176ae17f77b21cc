/**
 * Hosts and calendars: add a host; each host's weekly schedule (time zone, hours per weekday,
 * exceptions on given dates, notice and horizon) edited and saved; its calendar connections with
 * their state; an ICS feed added; a connect link to send the host (to connect their own calendar).
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Failure, failure, kairos, NO_FAILURE } from '../lib/api.js';
import { CreatePanel, ListPanel, usePaged } from '../lib/list.js';
import { Copyable, Field, FormError, when } from '../lib/ui.js';

type Host = Item<Result<'listHosts'>>;
type Schedule = Result<'getSchedule'>['schedule'];
type Weekly = Schedule['weekly'][number];
interface Exception {
  date: string;
  off: boolean;
  start: string;
  end: string;
}
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DAY_NAMES: Record<string, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

function ScheduleEditor(p: { host: Host }): VNode {
  const id = `sched-${p.host.principal_id}`;
  const [schedule, setSchedule] = useState<Schedule | null>(null);
  const [weekly, setWeekly] = useState<Weekly[]>([]);
  const [exceptions, setExceptions] = useState<Exception[]>([]);
  const [fail, setFail] = useState<Failure>(NO_FAILURE);
  const [saved, setSaved] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    kairos.schedules.get(p.host.principal_id).then(
      (r) => {
        setSchedule(r.schedule);
        setWeekly(r.schedule.weekly);
        setExceptions(
          r.schedule.overrides.map((o) =>
            'unavailable' in o
              ? { date: o.date, off: true, start: '09:00', end: '17:00' }
              : {
                  date: o.date,
                  off: false,
                  start: o.intervals[0]?.start ?? '09:00',
                  end: o.intervals[0]?.end ?? '17:00',
                },
          ),
        );
      },
      (err) => setFail(failure(err)),
    );
  }, []);
  if (!schedule) return html`<p role="status">${fail.message || 'Loading the schedule…'}</p>`;
  const setRow = (i: number, change: Partial<Weekly>) =>
    setWeekly(weekly.map((w, j) => (j === i ? { ...w, ...change } : w)));
  const setException = (i: number, change: Partial<Exception>) =>
    setExceptions(exceptions.map((x, j) => (j === i ? { ...x, ...change } : x)));
  const save = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setFail(NO_FAILURE);
    setSaved('');
    try {
      const r = await kairos.schedules.replace(p.host.principal_id, {
        timezone: String(f.get('timezone') ?? schedule.timezone),
        weekly,
        overrides: exceptions.map((x) =>
          x.off
            ? { date: x.date, unavailable: true as const }
            : { date: x.date, intervals: [{ start: x.start, end: x.end }] },
        ),
        minimum_notice_minutes: Number(f.get('minimum_notice_minutes') ?? 0),
        max_days_ahead: Number(f.get('max_days_ahead') ?? 60),
      });
      setSchedule(r.schedule);
      setSaved('Schedule saved.');
    } catch (err) {
      setFail(failure(err));
    } finally {
      setBusy(false);
    }
  };
  const time = (label: string, value: string, on: (v: string) => void, rid: string) =>
    html`<span class="time"><label for=${rid}>${label}</label><input id=${rid} type="time" value=${value} onChange=${(e: Event) => on((e.currentTarget as HTMLInputElement).value)} /></span>`;
  return html`<form class="schedule" onSubmit=${save} novalidate aria-label=${`Schedule of ${p.host.display_name}`}>
    <${FormError} message=${fail.message} />
    <${Field} id=${`${id}-tz`} label="Time zone" hint="An IANA zone, e.g. Europe/Berlin." error=${fail.fields.timezone}>
      ${(a: Record<string, unknown>) => html`<input ...${a} name="timezone" defaultValue=${schedule.timezone} />`}
    <//>
    <fieldset>
      <legend>Weekly hours</legend>
      ${weekly.length === 0 ? html`<p class="hint">No hours: the host is never free. Add hours below.</p>` : null}
      ${weekly.map(
        (w, i) => html`<div class="rule" key=${i}>
          <span class="time"><label for=${`${id}-d${i}`}>Day</label>
          <select id=${`${id}-d${i}`} onChange=${(e: Event) => setRow(i, { day: (e.currentTarget as HTMLSelectElement).value as Weekly['day'] })}>
            ${DAYS.map((d) => html`<option value=${d} key=${d} selected=${w.day === d}>${DAY_NAMES[d]}</option>`)}
          </select></span>
          ${time('From', w.start, (v) => setRow(i, { start: v }), `${id}-s${i}`)}
          ${time('To', w.end === '24:00' ? '23:59' : w.end, (v) => setRow(i, { end: v }), `${id}-e${i}`)}
          <button type="button" class="secondary" onClick=${() => setWeekly(weekly.filter((_, j) => j !== i))}>Remove<span class="sr"> ${DAY_NAMES[w.day]} ${w.start}–${w.end}</span></button>
        </div>`,
      )}
      ${fail.fields.weekly ? html`<p class="error">${fail.fields.weekly}</p>` : null}
      <button type="button" class="secondary" onClick=${() => setWeekly([...weekly, { day: 'mon', start: '09:00', end: '17:00' }])}>Add hours</button>
    </fieldset>
    <fieldset>
      <legend>Exceptions</legend>
      ${exceptions.length === 0 ? html`<p class="hint">None: every date follows the weekly hours.</p>` : null}
      ${exceptions.map(
        (x, i) => html`<div class="rule" key=${i}>
          <span class="time"><label for=${`${id}-x${i}`}>Date</label><input id=${`${id}-x${i}`} type="date" value=${x.date} onChange=${(e: Event) => setException(i, { date: (e.currentTarget as HTMLInputElement).value })} /></span>
          <label class="choice"><input type="checkbox" checked=${x.off} onChange=${(e: Event) => setException(i, { off: (e.currentTarget as HTMLInputElement).checked })} /> Unavailable all day</label>
          ${x.off ? null : time('From', x.start, (v) => setException(i, { start: v }), `${id}-xs${i}`)}
          ${x.off ? null : time('To', x.end, (v) => setException(i, { end: v }), `${id}-xe${i}`)}
          <button type="button" class="secondary" onClick=${() => setExceptions(exceptions.filter((_, j) => j !== i))}>Remove<span class="sr"> the exception on ${x.date}</span></button>
        </div>`,
      )}
      ${fail.fields.overrides ? html`<p class="error">${fail.fields.overrides}</p>` : null}
      <button type="button" class="secondary" onClick=${() => setExceptions([...exceptions, { date: new Date().toISOString().slice(0, 10), off: true, start: '09:00', end: '17:00' }])}>Add an exception</button>
    </fieldset>
    <${Field} id=${`${id}-notice`} label="Minimum notice in minutes" error=${fail.fields.minimum_notice_minutes}>
      ${(a: Record<string, unknown>) => html`<input ...${a} name="minimum_notice_minutes" type="number" min="0" defaultValue=${schedule.minimum_notice_minutes} />`}
    <//>
    <${Field} id=${`${id}-ahead`} label="Bookable days ahead" error=${fail.fields.max_days_ahead}>
      ${(a: Record<string, unknown>) => html`<input ...${a} name="max_days_ahead" type="number" min="1" defaultValue=${schedule.max_days_ahead} />`}
    <//>
    <p class="status" role="status">${saved}</p>
    <div><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save schedule'}</button></div>
  </form>`;
}

function Calendars(p: { host: Host }): VNode {
  const [list, setList] = useState<Result<'listCalendars'> | null>(null);
  const [fail, setFail] = useState<Failure>(NO_FAILURE);
  const [link, setLink] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const id = `cal-${p.host.principal_id}`;
  useEffect(() => {
    kairos.calendars
      .list({ principal_id: p.host.principal_id })
      .then(setList, (err) => setFail(failure(err)));
  }, [version]);
  const addFeed = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const url = String(new FormData(form).get('url') ?? '').trim();
    setFail(NO_FAILURE);
    try {
      await kairos.calendars.addIcsFeed({ url, principal_id: p.host.principal_id });
      form.reset();
      setVersion((v) => v + 1);
    } catch (err) {
      setFail(failure(err));
    }
  };
  const connectLink = async () => {
    try {
      const r = await kairos.hosts.createConnectLink(p.host.id, {});
      setLink(r.connect_link.url);
    } catch (err) {
      setFail(failure(err));
    }
  };
  return html`<section class="calendars" aria-label=${`Calendars of ${p.host.display_name}`}>
    <h4>Calendars</h4>
    ${list === null ? html`<p role="status">Loading the calendars…</p>` : null}
    ${list?.connections.length === 0 ? html`<p class="hint">No calendar connected: the host is free whenever the schedule says so. Add an ICS feed, or send the host a connect link.</p>` : null}
    <ul class="rows">
      ${(list?.connections ?? []).map(
        (c) => html`<li key=${c.id} class="row">
          <div class="row-head"><strong>${c.provider}</strong> ${c.account}<span class=${`badge ${c.status === 'connected' ? 'active' : 'failed'}`}>${c.status}</span></div>
          <dl class="facts">
            <div><dt>Last sync</dt><dd>${when(c.last_sync)}</dd></div>
            <div><dt>Calendars</dt><dd>${c.calendars.map((k) => k.name).join(', ') || '—'}</dd></div>
            ${c.last_error ? html`<div><dt>Last error</dt><dd>${c.last_error}</dd></div>` : null}
            ${c.status_reason ? html`<div><dt>Why</dt><dd>${c.status_reason}</dd></div>` : null}
          </dl>
        </li>`,
      )}
    </ul>
    <form onSubmit=${addFeed} novalidate>
      <${FormError} message=${fail.message} />
      <${Field} id=${`${id}-ics`} label="ICS feed address" error=${fail.fields.url}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="url" type="url" />`}
      <//>
      <div><button type="submit">Add ICS feed</button></div>
    </form>
    <div><button type="button" onClick=${connectLink}>Make a connect link</button></div>
    ${link ? html`<${Copyable} id=${`${id}-link`} label="Connect link to send the host" value=${link} />` : null}
  </section>`;
}

function HostRow(p: { host: Host }): VNode {
  const h = p.host;
  const [open, setOpen] = useState<'schedule' | 'calendars' | null>(null);
  return html`<li class="row">
    <div class="row-head"><h3>${h.display_name}</h3><span class="hint">${h.email ?? ''} · ${h.timezone}</span></div>
    <div class="actions start">
      <button type="button" aria-expanded=${open === 'schedule'} onClick=${() => setOpen(open === 'schedule' ? null : 'schedule')}>Schedule<span class="sr"> of ${h.display_name}</span></button>
      <button type="button" aria-expanded=${open === 'calendars'} onClick=${() => setOpen(open === 'calendars' ? null : 'calendars')}>Calendars<span class="sr"> of ${h.display_name}</span></button>
    </div>
    ${open === 'schedule' ? html`<${ScheduleEditor} host=${h} />` : null}
    ${open === 'calendars' ? html`<${Calendars} host=${h} />` : null}
  </li>`;
}

export function Hosts(): VNode {
  const list = usePaged((cursor) =>
    kairos.hosts
      .list({ limit: 20 })
      .page(cursor)
      .then((r) => ({ items: r.hosts.filter((x) => x.status === 'active'), pagination: r.pagination })),
  );
  const [fail, setFail] = useState<Failure>(NO_FAILURE);
  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const email = String(f.get('email') ?? '').trim();
    setFail(NO_FAILURE);
    try {
      await kairos.hosts.create({
        display_name: String(f.get('display_name') ?? '').trim(),
        timezone: String(f.get('timezone') ?? '').trim(),
        ...(email ? { email } : {}),
      });
      form.reset();
      list.reload();
    } catch (err) {
      setFail(failure(err));
    }
  };
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return html`<${ListPanel}
      title="Hosts"
      create="Add a host"
      list=${list}
      loading="Loading the hosts…"
      empty=${html`<p>No host yet. Add the people (or rooms) that can be booked below.</p>`}
      row=${(h: Host) => html`<${HostRow} key=${h.id} host=${h} />`}
    />
    <${CreatePanel} title="Add a host">
      <form onSubmit=${create} novalidate>
        <${FormError} message=${fail.message} />
        <${Field} id="host-name" label="Name" error=${fail.fields.display_name}>${(a: Record<string, unknown>) => html`<input ...${a} name="display_name" required />`}<//>
        <${Field} id="host-email" label="E-mail (optional)" error=${fail.fields.email}>${(a: Record<string, unknown>) => html`<input ...${a} name="email" type="email" />`}<//>
        <${Field} id="host-zone" label="Time zone" error=${fail.fields.timezone}>${(a: Record<string, unknown>) => html`<input ...${a} name="timezone" defaultValue=${zone} />`}<//>
        <div><button type="submit">Add host</button></div>
      </form>
    <//>`;
}
