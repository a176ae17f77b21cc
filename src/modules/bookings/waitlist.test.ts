/**
 * What bookings send and what a cancelled booking frees, over HTTP on the real runtime, database and
 * a real SMTP server (docs/api.md#waitlist, #e-mail-and-pages): the booking mails with their
 * text/calendar invites (parsed with ical.js: METHOD, one UID, rising SEQUENCE), and the waitlist —
 * freed time held for the earliest matching entry, offered by mail, claimable once, passed on when
 * the hold runs out, then released. Jobs (mail, offers, the hold reaper) run on the injected clock.
 */
import ICAL from 'ical.js';
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import { postBooking } from '../../../test/helpers/fixtures.js';

// Monday 2 March 2026, 06:00 UTC; hosts work Mon–Fri 09:00–17:00 UTC.
const START = Date.parse('2026-03-02T06:00:00.000Z');
const clock = new FakeClock(new Date(START).toISOString());
let t: TestApp;
let sink: SmtpSink;
let slugs = 0;

beforeAll(async () => {
  sink = await startSmtpSink();
  t = await startTestApp({ clock, env: { SMTP_URL: sink.url, KAIROS_WAITLIST_HOLD_MINUTES: '15' } });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

async function linkWithHost(hostEmail: string): Promise<{ key: string; accountId: string; link: Json }> {
  const acc = await t.account();
  const h = await t.call('POST', '/v1/hosts', {
    token: acc.key,
    body: { display_name: 'Dr. Ann', timezone: 'UTC', email: hostEmail },
  });
  expect(h.status).toBe(201);
  const res = await t.call('POST', '/v1/booking-links', {
    token: acc.key,
    body: {
      title: 'Consultation',
      slug: `consult-${++slugs}-${Date.now()}`,
      host_ids: [(await h.json()).host.principal_id],
    },
  });
  expect(res.status).toBe(201);
  return { key: acc.key, accountId: acc.id, link: ((await res.json()) as Json).booking_link };
}

const book = (slug: string, email: string, start: string) =>
  postBooking(t, { slug }, { customer_email: email, customer_name: email.split('@')[0], start_time: start });

async function join(slug: string, email: string, from: string, to: string): Promise<Json> {
  const res = await t.call('POST', `/v1/public/links/${slug}/waitlist`, {
    body: {
      customer_email: email,
      customer_name: email.split('@')[0],
      preferred_from: from,
      preferred_to: to,
    },
  });
  expect(res.status).toBe(201);
  return (await res.json()).waitlist_entry;
}

async function slotStarts(slug: string, day: string): Promise<string[]> {
  const res = await t.call(
    'GET',
    `/v1/public/links/${slug}/availability?from=${day}T00:00:00Z&to=${day}T23:59:00Z`,
  );
  expect(res.status).toBe(200);
  return (await res.json()).slots.map((s: Json) => s.start.slice(11, 16));
}

/** Mails received for `to`, in arrival order (after the mail jobs have run). */
async function mailsTo(to: string): Promise<ParsedMail[]> {
  await t.ctx.jobs.drain();
  await sink.waitFor(sink.raw.length); // parsing runs behind the SMTP session
  return sink.messages.filter(
    (m) => m.to && !Array.isArray(m.to) && m.to.value.some((a) => a.address === to),
  );
}

/** The invite of a received mail: the MIME part's method= and the parsed VCALENDAR. */
function inviteOf(mail: ParsedMail): {
  partMethod: string;
  method: string;
  uid: string;
  sequence: number;
  start: string;
} {
  const raw = sink.raw[sink.messages.indexOf(mail)]!;
  const partMethod = /Content-Type: text\/calendar;[^\r\n]*method="?([A-Z]+)/i.exec(raw)?.[1] ?? '';
  const part = mail.attachments.find((a) => a.contentType === 'text/calendar');
  expect(part, 'a text/calendar part').toBeDefined();
  const calendar = new ICAL.Component(ICAL.parse(part!.content.toString('utf8')));
  const event = new ICAL.Event(calendar.getFirstSubcomponent('vevent')!);
  return {
    partMethod,
    method: String(calendar.getFirstPropertyValue('method')),
    uid: event.uid,
    sequence: event.sequence,
    start: event.startDate.toJSDate().toISOString(),
  };
}

function claimTokenOf(mail: ParsedMail): string {
  const m = /\/w\/([A-Za-z0-9_-]+)/.exec(mail.text ?? '');
  expect(m, 'a claim link in the offer mail').not.toBeNull();
  return m![1]!;
}

describe('booking mails', () => {
  it('send the customer and the host a confirmation, a reschedule and a cancellation carrying one invite UID with a rising SEQUENCE', async () => {
    const { key, link } = await linkWithHost('ann@clinic.example');
    const res = await book(link.slug, 'ada@example.com', '2026-03-03T10:00:00Z');
    expect(res.status).toBe(201);
    const booking = (await res.json()).booking;

    const [confirmation] = await mailsTo('ada@example.com');
    expect(confirmation!.subject).toContain('Consultation');
    expect(confirmation!.text).toContain(booking.manage_url);
    const first = inviteOf(confirmation!);
    expect(first).toMatchObject({
      partMethod: 'REQUEST',
      method: 'REQUEST',
      start: '2026-03-03T10:00:00.000Z',
    });
    const hostMails = await mailsTo('ann@clinic.example');
    expect(hostMails).toHaveLength(1);
    expect(hostMails[0]!.text).toContain('ada@example.com');
    expect(inviteOf(hostMails[0]!).uid).toBe(first.uid);

    const token = booking.manage_url.split('/b/')[1];
    const moved = await t.call('POST', `/v1/public/bookings/${token}/reschedule`, {
      body: { start_time: '2026-03-03T14:00:00Z' },
    });
    expect(moved.status).toBe(200);
    expect(await mailsTo('ada@example.com')).toHaveLength(2); // sent before the next change is made
    const cancelled = await t.call('DELETE', `/v1/bookings/${booking.id}?reason=ill`, { token: key });
    expect(cancelled.status).toBe(200);

    const customerMails = await mailsTo('ada@example.com');
    expect(customerMails).toHaveLength(3);
    const [, reschedule, cancellation] = customerMails.map(inviteOf);
    expect(reschedule).toMatchObject({
      method: 'REQUEST',
      uid: first.uid,
      start: '2026-03-03T14:00:00.000Z',
    });
    expect(cancellation).toMatchObject({ partMethod: 'CANCEL', method: 'CANCEL', uid: first.uid });
    expect(reschedule!.sequence).toBeGreaterThan(first.sequence);
    expect(cancellation!.sequence).toBeGreaterThan(reschedule!.sequence);
    expect(customerMails[2]!.text).toContain('ill');
    expect(await mailsTo('ann@clinic.example')).toHaveLength(3);
  });
});

describe('the waitlist', () => {
  it('holds a cancelled booking’s time for the earliest matching entry, offers it by mail, and turns one claim into a booking', async () => {
    const { key, link } = await linkWithHost('ann@wl.example');
    const taken = await book(link.slug, 'first@example.com', '2026-03-04T10:00:00Z');
    expect(taken.status).toBe(201);
    const booking = (await taken.json()).booking;
    // Only the second entry's window contains 10:00; the first is older but wants the afternoon.
    await join(link.slug, 'afternoon@example.com', '2026-03-04T13:00:00Z', '2026-03-04T17:00:00Z');
    const entry = await join(link.slug, 'bea@example.com', '2026-03-04T09:00:00Z', '2026-03-04T12:00:00Z');
    expect(entry).toMatchObject({ status: 'waiting' });
    await join(link.slug, 'cy@example.com', '2026-03-04T09:00:00Z', '2026-03-04T12:00:00Z');

    expect((await t.call('DELETE', `/v1/bookings/${booking.id}`, { token: key })).status).toBe(200);
    const [offer] = await mailsTo('bea@example.com');
    expect(offer, 'an offer mail').toBeDefined();
    expect(await mailsTo('cy@example.com')).toHaveLength(0);
    expect(await mailsTo('afternoon@example.com')).toHaveLength(0);

    // The time is held: not listed, not bookable by anyone else.
    expect(await slotStarts(link.slug, '2026-03-04')).not.toContain('10:00');
    const other = await book(link.slug, 'dan@example.com', '2026-03-04T10:00:00Z');
    expect(other.status).toBe(409);
    const owners = await t.call('GET', `/v1/booking-links/${link.id}/waitlist`, { token: key });
    const statuses = (await owners.json()).waitlist_entries.map((e: Json) => [e.customer_email, e.status]);
    expect(statuses).toEqual([
      ['afternoon@example.com', 'waiting'],
      ['bea@example.com', 'offered'],
      ['cy@example.com', 'waiting'],
    ]);

    const token = claimTokenOf(offer!);
    const claims = await Promise.all(
      [0, 1, 2].map(() => t.call('POST', `/v1/public/waitlist/${token}/claim`)),
    );
    expect(claims.map((c) => c.status).sort()).toEqual([201, 409, 409]);
    const won = (await claims.find((c) => c.status === 201)!.json()).booking;
    expect(won).toMatchObject({ status: 'confirmed', start_time: '2026-03-04T10:00:00.000Z' });
    for (const c of claims.filter((c) => c.status === 409)) {
      expect(['offer_claimed', 'offer_expired']).toContain((await c.json()).code);
    }
    const again = await t.call('POST', `/v1/public/waitlist/${token}/claim`);
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe('offer_claimed');
    const confirmation = (await mailsTo('bea@example.com')).find((m) => m !== offer);
    expect(confirmation && inviteOf(confirmation).method).toBe('REQUEST');
    expect(await slotStarts(link.slug, '2026-03-04')).not.toContain('10:00');
  });

  it('checks a claim’s answers as a public booking’s: a required question left out or a wrong type is 400 per field and keeps the offer; answered, it books with the answers', async () => {
    const { key, link } = await linkWithHost('ann@wlq.example');
    const patched = await t.call('PATCH', `/v1/booking-links/${link.id}`, {
      token: key,
      body: {
        questions: [
          { id: 'reason', label: 'Reason for the visit', type: 'text', required: true },
          { id: 'consent', label: 'I agree', type: 'checkbox', required: false },
        ],
      },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const taken = await t.call('POST', `/v1/public/links/${link.slug}/bookings`, {
      body: {
        customer_email: 'firstq@example.com',
        customer_name: 'First',
        start_time: '2026-03-06T10:00:00Z',
        answers: { reason: 'Back pain' },
      },
    });
    expect(taken.status, await taken.clone().text()).toBe(201);
    await join(link.slug, 'quinn@example.com', '2026-03-06T09:00:00Z', '2026-03-06T12:00:00Z');
    const booking = (await taken.json()).booking;
    expect((await t.call('DELETE', `/v1/bookings/${booking.id}`, { token: key })).status).toBe(200);
    const [offer] = await mailsTo('quinn@example.com');
    expect(offer, 'an offer mail').toBeDefined();
    const token = claimTokenOf(offer!);

    for (const body of [undefined, { answers: {} }, { answers: { reason: '  ' } }]) {
      const refused = await t.call('POST', `/v1/public/waitlist/${token}/claim`, body ? { body } : {});
      expect(refused.status, await refused.clone().text()).toBe(400);
      expect((await refused.json()).errors).toEqual({ 'answers.reason': 'is required' });
    }
    const wrong = await t.call('POST', `/v1/public/waitlist/${token}/claim`, {
      body: { answers: { reason: 'Knee', consent: 'yes', shoe_size: '42' } },
    });
    expect(wrong.status).toBe(400);
    expect(Object.keys((await wrong.json()).errors).sort()).toEqual(['answers.consent', 'answers.shoe_size']);

    const claimed = await t.call('POST', `/v1/public/waitlist/${token}/claim`, {
      body: { answers: { reason: 'Knee pain', consent: true } },
    });
    expect(claimed.status, await claimed.clone().text()).toBe(201);
    expect((await claimed.json()).booking).toMatchObject({
      status: 'confirmed',
      start_time: '2026-03-06T10:00:00.000Z',
      answers: { reason: 'Knee pain', consent: true },
    });
  });

  it('passes an unclaimed hold to the next entry when it runs out, then releases the time', async () => {
    const { key, link } = await linkWithHost('ann@wl2.example');
    const taken = await book(link.slug, 'first2@example.com', '2026-03-05T11:00:00Z');
    const booking = (await taken.json()).booking;
    await join(link.slug, 'eve@example.com', '2026-03-05T09:00:00Z', '2026-03-05T17:00:00Z');
    await join(link.slug, 'fay@example.com', '2026-03-05T09:00:00Z', '2026-03-05T17:00:00Z');
    expect((await t.call('DELETE', `/v1/bookings/${booking.id}`, { token: key })).status).toBe(200);
    const [eveOffer] = await mailsTo('eve@example.com');
    expect(eveOffer).toBeDefined();
    expect(await mailsTo('fay@example.com')).toHaveLength(0);

    const before = clock.nowMs();
    try {
      clock.advance(16 * 60_000); // past Eve's hold
      const [fayOffer] = await mailsTo('fay@example.com');
      expect(fayOffer, 'the hold passed to the next entry').toBeDefined();
      const late = await t.call('POST', `/v1/public/waitlist/${claimTokenOf(eveOffer!)}/claim`);
      expect(late.status).toBe(409);
      expect((await late.json()).code).toBe('offer_expired');
      expect(await slotStarts(link.slug, '2026-03-05')).not.toContain('11:00');

      clock.advance(16 * 60_000); // past Fay's hold: nobody is left, the time is free again
      await t.ctx.jobs.drain();
      expect(await slotStarts(link.slug, '2026-03-05')).toContain('11:00');
      const owners = await t.call('GET', `/v1/booking-links/${link.id}/waitlist`, { token: key });
      expect((await owners.json()).waitlist_entries.map((e: Json) => e.status)).toEqual([
        'expired',
        'expired',
      ]);
      const free = await book(link.slug, 'gus@example.com', '2026-03-05T11:00:00Z');
      expect(free.status).toBe(201);
    } finally {
      clock.set(before);
    }
  });

  it('marks a waiting entry expired once its window has ended, and leaves the entries whose window is still open', async () => {
    const { key, link } = await linkWithHost('ann@wl4.example');
    const early = await join(link.slug, 'hal@example.com', '2026-03-03T09:00:00Z', '2026-03-03T10:00:00Z');
    const late = await join(link.slug, 'ida@example.com', '2026-03-03T09:00:00Z', '2026-03-06T17:00:00Z');
    const statuses = async () => {
      await t.ctx.jobs.drain();
      const owners = await t.call('GET', `/v1/booking-links/${link.id}/waitlist`, { token: key });
      return Object.fromEntries(
        (await owners.json()).waitlist_entries.map((e: Json) => [e.id, [e.status, e.updated_at]]),
      );
    };
    const before = clock.nowMs();
    try {
      clock.set('2026-03-03T09:59:00Z'); // Hal's window still has a minute
      let now = await statuses();
      expect(now[early.id][0]).toBe('waiting');
      expect(now[late.id][0]).toBe('waiting');
      clock.set('2026-03-03T10:00:30Z'); // ended
      now = await statuses();
      expect(now[early.id]).toEqual(['expired', '2026-03-03T10:00:30.000Z']);
      expect(now[late.id][0]).toBe('waiting');
    } finally {
      clock.set(before);
    }
  });

  it('refuses bad windows per field and unknown claim tokens, writing nothing', async () => {
    const { key, link } = await linkWithHost('ann@wl3.example');
    const window = { preferred_from: '2026-03-05T12:00:00Z', preferred_to: '2026-03-05T11:00:00Z' };
    const bad = await t.call('POST', `/v1/public/links/${link.slug}/waitlist`, {
      body: { customer_email: 'ada@example.com', customer_name: 'X', ...window },
    });
    expect(bad.status).toBe(400);
    expect(Object.keys((await bad.json()).errors)).toEqual(['preferred_to']);
    const email = await t.call('POST', `/v1/public/links/${link.slug}/waitlist`, {
      body: { customer_email: 'not-an-email', customer_name: 'X', ...window },
    });
    expect(email.status).toBe(400);
    expect((await email.json()).errors).toEqual({ customer_email: 'must be a valid e-mail address' });
    const owners = await t.call('GET', `/v1/booking-links/${link.id}/waitlist`, { token: key });
    expect((await owners.json()).waitlist_entries).toEqual([]);
    const unknown = await t.call('POST', `/v1/public/waitlist/${'A'.repeat(43)}/claim`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
  });
});
