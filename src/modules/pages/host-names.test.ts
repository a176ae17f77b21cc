/**
 * No public surface shows an owner's e-mail address (docs/api.md#e-mail-and-pages): a user who gave no
 * name, or a host named by an e-mail address, is shown by a neutral name on the booking page, in
 * `/v1/public/*` answers, in the customer's mails (subject, text, the invite's ORGANIZER CN), and a
 * user's `name` (PATCH /v1/me) is what others see.
 */
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';

const HTML = { accept: 'text/html,application/xhtml+xml' };
const OWNER = 'owner@acme-clinic.example';
const EMAIL_LIKE = /[^\s"'<>@]+@[^\s"'<>@]+\.[a-z]{2,}/i;

let t: TestApp;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  t = await startTestApp({ env: { SMTP_URL: sink.url, MAIL_FROM: 'Kairos <k@kairos.test>' } });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

const toOf = (m: ParsedMail) => (m.to && !Array.isArray(m.to) ? m.to.value[0]?.address : undefined);

/** An account whose owner gave no name, signed in. */
async function unnamedOwner(email: string) {
  const acc = await t.account({ name: 'Acme Clinic' });
  await t.ctx.modules.accounts.createUser({ accountId: acc.id, email, password: fixtures.PASSWORD });
  return { acc, session: await fixtures.signIn(t, email) };
}

describe('host names on public surfaces', () => {
  it('shows an owner without a name by the account name on the page, the public API and the mails', async () => {
    const { session } = await unnamedOwner(OWNER);
    const res = await t.call('POST', '/v1/booking-links', {
      token: session.token,
      body: { slug: 'acme-intro', title: 'Intro' },
    });
    expect(res.status, await res.clone().text()).toBe(201);

    const api = await t.call('GET', '/v1/public/links/acme-intro');
    expect(api.status).toBe(200);
    const text = await api.text();
    expect(text).not.toContain('@');
    expect(JSON.parse(text).booking_link.hosts).toEqual([{ display_name: 'Acme Clinic' }]);
    const page = await t.call('GET', '/book/acme-intro', { headers: HTML });
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain(OWNER);

    // A booking without a link: its title names the host; the customer's mail and invite neither.
    const start_time = await fixtures.firstSlot(t, 'acme-intro');
    const before = sink.messages.length;
    const booked = await t.call('POST', '/v1/bookings', {
      token: session.token,
      body: { start_time, customer_email: 'cy@example.com', customer_name: 'Cy' },
    });
    expect(booked.status, await booked.clone().text()).toBe(201);
    const { booking } = await booked.json();
    const token = String(booking.manage_url).split('/b/')[1]!;
    const publicBooking = await (await t.call('GET', `/v1/public/bookings/${token}`)).json();
    expect(JSON.stringify(publicBooking.booking.hosts)).not.toContain('@');
    expect(publicBooking.booking.title).not.toContain(OWNER);
    await t.ctx.jobs.drain();
    const mails = await sink.waitFor(before + 2);
    const toCustomer = mails.slice(before).find((m) => toOf(m) === 'cy@example.com')!;
    expect(toCustomer.subject).not.toContain('@');
    expect(toCustomer.text).not.toContain(OWNER);
    expect(String(toCustomer.html)).not.toContain(OWNER);
    const ics = toCustomer.attachments.find((a) => a.contentType === 'text/calendar')!.content.toString();
    const organizer = /ORGANIZER;CN=("[^"]*"|[^:;]*)/.exec(ics.replace(/\r\n /g, ''))?.[1] ?? '';
    expect(organizer).not.toMatch(EMAIL_LIKE);
  });

  it('shows a host named by an e-mail address as "Your host"', async () => {
    const acc = await t.account();
    const host = await fixtures.newHost(t, { token: acc.key }, { display_name: 'desk@acme-clinic.example' });
    const res = await t.call('POST', '/v1/booking-links', {
      token: acc.key,
      body: { slug: 'desk-intro', title: 'Desk', host_ids: [host] },
    });
    expect(res.status).toBe(201);
    const text = await (await t.call('GET', '/v1/public/links/desk-intro')).text();
    expect(text).not.toContain('@');
    expect(JSON.parse(text).booking_link.hosts).toEqual([{ display_name: 'Your host' }]);
  });

  it('gives a user a name: PATCH /v1/me, shown on the booking page', async () => {
    const { session } = await unnamedOwner('named@acme-clinic.example');
    const me = await (await t.call('GET', '/v1/me', { token: session.token })).json();
    expect(me.user).toMatchObject({ name: null, display_name: 'Acme Clinic' });
    const bad = await t.call('PATCH', '/v1/me', { token: session.token, body: { name: '  ' } });
    expect(bad.status).toBe(400);
    const patched = await t.call('PATCH', '/v1/me', { token: session.token, body: { name: 'Dr. Ana Ruiz' } });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect((await patched.json()).user).toMatchObject({ name: 'Dr. Ana Ruiz', display_name: 'Dr. Ana Ruiz' });
    const res = await t.call('POST', '/v1/booking-links', {
      token: session.token,
      body: { slug: 'ana-intro', title: 'Intro' },
    });
    expect(res.status).toBe(201);
    const link = await (await t.call('GET', '/v1/public/links/ana-intro')).json();
    expect(link.booking_link.hosts).toEqual([{ display_name: 'Dr. Ana Ruiz' }]);
  });
});
