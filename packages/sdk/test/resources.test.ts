/**
 * Every resource of the SDK against the real server on the embedded store (test/helpers/app.ts): each
 * method's path, input and answer as the OpenAPI document says, and every operation of the document
 * reachable from a resource.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { serveCalendar, vcalendar } from '../../../test/helpers/ics.js';
import { weekdaySlots } from '../../../test/helpers/slots.js';
import { startReceiver, type Receiver } from '../../../test/helpers/receiver.js';
import {
  AuthenticationError,
  Kairos,
  KairosError,
  NotFoundError,
  PermissionError,
  RESOURCES,
  UnprocessableError,
  verifyWebhook,
} from '../src/index.js';
import { operations } from '../src/operations.js';

let t: TestApp;
let receiver: Receiver;
let calendar: { url: string; close: () => Promise<void> };
let kairos: Kairos;
let accountId: string;

const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };
const slots = weekdaySlots();
const day = 86_400_000;

beforeAll(async () => {
  t = await startTestApp({ workers: true, env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
  receiver = await startReceiver();
  calendar = await serveCalendar(vcalendar('\r\n'));
  const acc = await t.account();
  accountId = acc.id;
  kairos = new Kairos({ apiKey: acc.key, baseUrl: t.url });
});
afterAll(async () => {
  await receiver?.close();
  await calendar?.close();
  await t?.close();
});

describe('the resources', () => {
  it('reach every operation of the document a client calls, each by its operationId', () => {
    const used = new Set<string>();
    const walk = (o: object) => {
      for (const v of Object.values(o)) typeof v === 'string' ? used.add(v) : walk(v);
    };
    walk(RESOURCES);
    expect([...used].sort()).toEqual(Object.keys(operations).sort());
    // …and the table is the document's (npm run check:sdk regenerates it and fails on a difference).
    const source = readFileSync(join(import.meta.dirname, '../src/operations.ts'), 'utf8');
    expect(source).toContain("createBooking: ['POST', '/v1/bookings', 'bi']");
  });

  it('me, sessions, calendars, availability, principals, hosts and schedules', async () => {
    const me = await kairos.me();
    expect(me).toMatchObject({ principal_id: accountId, credential: 'secret' });
    await expect(
      kairos.sessions.create({ email: 'nobody@example.com', password: 'wrong password' }),
    ).rejects.toBeInstanceOf(AuthenticationError);

    const added = await kairos.calendars.addIcsFeed({ url: calendar.url });
    const calendarId = added.connection.calendars[0]!.id;
    expect((await kairos.calendars.list()).calendars.map((c) => c.id)).toContain(calendarId);
    expect((await kairos.calendars.get(calendarId)).calendar.id).toBe(calendarId);
    const deselected = await kairos.calendars.update(calendarId, { selected: false });
    expect(deselected.calendar.selected).toBe(false);
    await kairos.calendars.update(calendarId, { selected: true });
    // Google is not configured on this server: a problem, not a redirect followed to a page.
    await expect(
      kairos.calendars.connectGoogle({ redirect_uri: 'https://app.example/done' }),
    ).rejects.toBeInstanceOf(KairosError);
    expect(() => new Kairos({ apiKey: 'k' })).toThrow(/baseUrl/);

    const from = new Date(Date.now() + day).toISOString();
    const to = new Date(Date.now() + 8 * day).toISOString();
    const free = await kairos.availability.slots({ principal_id: accountId, from, to });
    expect(free.slots?.length).toBeGreaterThan(0);
    const next = await kairos.availability.next({ principal_id: accountId });
    expect(next.slot).not.toBeNull();
    const blocks = await kairos.principals.availability(accountId, { from, to });
    expect(blocks.blocks.length).toBeGreaterThan(0);

    const { host } = await kairos.hosts.create({ display_name: 'Dr. Maya Chen', timezone: 'Europe/London' });
    expect((await kairos.hosts.get(host.id)).host.display_name).toBe('Dr. Maya Chen');
    expect((await kairos.hosts.update(host.id, { display_name: 'Maya Chen' })).host.display_name).toBe(
      'Maya Chen',
    );
    expect((await kairos.hosts.list()).hosts.map((h) => h.id)).toContain(host.id);
    const { schedule } = await kairos.schedules.get(host.id);
    const replaced = await kairos.schedules.replace(host.id, { ...schedule, buffer_after_minutes: 10 });
    expect(replaced.schedule.buffer_after_minutes).toBe(10);
    // A host without a calendar: the 404 the document lists, thrown as NotFoundError.
    const err = await kairos.availability.slots({ principal_id: host.id, from, to }).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.code).toBe('calendar_not_connected');
  });

  it('bookings: create, get, list, reschedule, cancel', async () => {
    const { booking } = await kairos.bookings.create({ ...customer, start_time: slots.next().value! });
    expect(booking.status).toBe('confirmed');
    expect((await kairos.bookings.get(booking.id)).booking.id).toBe(booking.id);
    const page = await kairos.bookings.list({ principal_id: accountId });
    expect(page.bookings.map((b) => b.id)).toContain(booking.id);
    const later = slots.next().value!;
    const moved = await kairos.bookings.reschedule(booking.id, { start_time: later });
    expect(moved.booking.start_time).toBe(later);
    const cancelled = await kairos.bookings.cancel(booking.id, { reason: 'ill' });
    expect(cancelled.booking.status).toBe('cancelled');
  });

  it('booking links, the public surface without a credential, and the waitlist', async () => {
    const { booking_link: link } = await kairos.bookingLinks.create({
      slug: 'sdk-intro',
      title: 'Intro call',
    });
    expect((await kairos.bookingLinks.get(link.id)).booking_link.slug).toBe('sdk-intro');
    expect((await kairos.bookingLinks.update(link.id, { title: 'Intro' })).booking_link.title).toBe('Intro');
    expect((await kairos.bookingLinks.list()).booking_links.map((l) => l.id)).toContain(link.id);

    const anonymous = new Kairos({ baseUrl: t.url });
    expect((await anonymous.public.link('sdk-intro')).booking_link.title).toBe('Intro');
    const from = new Date(Date.now() + 3 * day).toISOString();
    const open = await anonymous.public.availability('sdk-intro', {
      from,
      to: new Date(Date.now() + 10 * day).toISOString(),
    });
    const start = open.slots![0]!.start;
    const { booking } = await anonymous.public.book('sdk-intro', {
      ...customer,
      start_time: start,
      answers: {},
    });
    const token = booking.manage_url!.split('/b/')[1]!;
    expect((await anonymous.public.booking(token)).booking.start_time).toBe(booking.start_time);
    const second = open.slots!.find((s) => Date.parse(s.start) >= Date.parse(start) + 3_600_000)!.start;
    expect((await anonymous.public.reschedule(token, { start_time: second })).booking.start_time).toBe(
      second,
    );
    expect((await anonymous.public.cancel(token, {})).booking.status).toBe('cancelled');

    const { waitlist_entry: entry } = await anonymous.public.joinWaitlist('sdk-intro', {
      ...customer,
      preferred_from: from,
      preferred_to: new Date(Date.now() + 5 * day).toISOString(),
    });
    expect(entry.status).toBe('waiting');
    expect((await kairos.bookingLinks.waitlist.list(link.id)).waitlist_entries?.map((e) => e.id)).toContain(
      entry.id,
    );
    await kairos.bookingLinks.waitlist.remove(link.id, entry.id);
    await expect(anonymous.public.claim('no-such-offer-token', {})).rejects.toBeInstanceOf(NotFoundError);
    await kairos.bookingLinks.delete(link.id);
  });

  it('webhooks and events: a test delivery verified, deliveries, rotation, removal', async () => {
    const hook = await kairos.webhooks.create({ url: receiver.url, events: ['booking.created'] });
    expect((await kairos.webhooks.get(hook.id)).webhook.id).toBe(hook.id);
    expect((await kairos.webhooks.list()).webhooks.map((w) => w.id)).toContain(hook.id);
    await kairos.webhooks.update(hook.id, { description: 'SDK' });
    const { event } = await kairos.webhooks.test(hook.id);
    const [got] = await receiver.waitFor(1, 20_000);
    const verified = await verifyWebhook(got!.body, got!.headers, hook.secret);
    expect(verified.type).toBe('webhook.test');
    expect(verified.id).toBe(event.id);
    expect((await kairos.events.get(event.id)).event.id).toBe(event.id);
    const deliveries = await kairos.webhooks.deliveries(hook.id);
    expect(deliveries.deliveries.length).toBe(1);
    const notFailed = await kairos.webhooks
      .retryDelivery(hook.id, deliveries.deliveries[0]!.id)
      .catch((e) => e);
    expect(notFailed.status).toBe(409);
    const rotated = await kairos.webhooks.rotateSecret(hook.id);
    expect(rotated.webhook.secret).toMatch(/^whsec_/);
    await kairos.webhooks.delete(hook.id);
  });

  it('api keys, consents, network, proposals and payments', async () => {
    const { api_key: key } = await kairos.apiKeys.create({ name: 'reporting' });
    expect((await kairos.apiKeys.get(key.id)).api_key.name).toBe('reporting');
    expect((await kairos.apiKeys.list()).api_keys.map((k) => k.id)).toContain(key.id);
    expect(await kairos.apiKeys.stats(key.id)).toBeDefined();
    await kairos.apiKeys.revoke(key.id);

    const other = await t.account({ name: 'Partner' });
    const { consent } = await kairos.consents.grant({
      grantee_id: other.id,
      scopes: ['availability:read:freebusy'],
    });
    expect((await kairos.consents.get(consent.id)).consent.id).toBe(consent.id);
    expect((await kairos.consents.list()).consents.map((c) => c.id)).toContain(consent.id);
    expect((await kairos.consents.revoke(consent.id)).consent.status).toBe('revoked');

    const invited = await kairos.network.invitations.create({
      invitee_email: 'bea@example.com',
      relationship_type: 'colleague',
    });
    expect(invited.invitation.invitee_email).toBe('bea@example.com');
    expect((await kairos.network.list()).connections).toEqual([]);
    await expect(kairos.network.invitations.accept('no-such-token', {})).rejects.toMatchObject({
      status: 403,
    });

    // An open poll, ≥ 25 hours ahead (the account has a connected calendar from the test above).
    const start = Date.parse(slots.next().value!) + 2 * day;
    const { proposal, magic_link_url } = await kairos.proposals.create({
      mode: 'poll',
      title: 'Planning',
      slots: [{ start: new Date(start).toISOString(), end: new Date(start + 1_800_000).toISOString() }],
    });
    const token = magic_link_url!.split('/p/')[1]!;
    expect((await kairos.proposals.get(proposal.id)).proposal.id).toBe(proposal.id);
    expect((await kairos.proposals.list()).proposals.map((p) => p.id)).toContain(proposal.id);
    expect((await kairos.proposals.thread(proposal.thread_id)).thread.id).toBe(proposal.thread_id);
    const byToken = await new Kairos({ baseUrl: t.url }).proposals.byToken({ token });
    expect(byToken.proposal.id).toBe(proposal.id);
    await new Kairos({ baseUrl: t.url }).proposals.respond(proposal.id, {
      action: 'accept',
      token,
      selected_slot_id: proposal.slots[0]!.id,
      voter_name: 'Bea',
      voter_email: 'bea@example.com',
    });
    expect((await kairos.proposals.close(proposal.id, {})).proposal.status).not.toBe('open');
    const second = await kairos.proposals.create({
      mode: 'poll',
      slots: [
        { start: new Date(start + day).toISOString(), end: new Date(start + day + 1_800_000).toISOString() },
      ],
    });
    expect((await kairos.proposals.cancel(second.proposal.id, {})).proposal.status).toBe('cancelled');

    // No STRIPE_SECRET_KEY: the documented 422 payments_not_configured.
    const unpaid = await kairos.payments.stripeAccount().catch((e) => e);
    expect(unpaid).toBeInstanceOf(UnprocessableError);
    expect(unpaid.code).toBe('payments_not_configured');
  });

  it('test mode: a test key made with the SDK is used as any key, and testClock reads and moves its clock', async () => {
    const made = await kairos.apiKeys.create({ name: 'sdk test mode', environment: 'test' });
    expect(made.api_key.environment).toBe('test');
    expect(made.api_key.key).toMatch(/^svc_sk_test_/);
    expect((await kairos.apiKeys.get(made.api_key.id)).api_key.environment).toBe('test');
    expect((await kairos.me()).environment).toBe('live');

    const test = new Kairos({ apiKey: made.api_key.key, baseUrl: t.url });
    expect(await test.me()).toMatchObject({ principal_id: accountId, environment: 'test' });
    const before = (await test.testClock.get()).test_clock;
    const moved = (await test.testClock.advance({ seconds: 86_400 })).test_clock;
    expect(moved.offset_seconds).toBe(before.offset_seconds + 86_400);
    expect(Date.parse(moved.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(86_400_000);
    const to = new Date(Date.parse(moved.now) + 7 * day).toISOString();
    const there = (await test.testClock.advance({ to })).test_clock;
    expect(Math.abs(Date.parse(there.now) - Date.parse(to))).toBeLessThan(5_000);
    expect((await test.testClock.get()).test_clock.offset_seconds).toBe(there.offset_seconds);

    // Only a test key reads or moves the clock: a live key is refused with the documented code.
    const refused = await kairos.testClock.get().catch((e) => e);
    expect(refused).toBeInstanceOf(PermissionError);
    expect(refused.code).toBe('test_mode_only');
  });
});
