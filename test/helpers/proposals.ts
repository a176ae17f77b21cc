/**
 * The setup the proposal tests share (src/modules/proposals/*.test.ts): one app per file on a FakeClock
 * at T0 (set back before every test), mails to a real SMTP sink, an empty ICS feed a requester's
 * calendar connects to, and the users, consents and calls the tests are written in.
 *
 * Lives under test/ rather than beside the tests: a non-test file under src/ is built into dist/ and
 * may touch only its module's tables (docs/architecture.md, house rules).
 */
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { HOUR } from '../../src/lib/time.js';
import type { Json } from './app.js';
import { clockedApp } from './clocked-app.js';
import * as fixtures from './fixtures.js';
import { serveCalendar, vcalendar } from './ics.js';
import { type SmtpSink, startSmtpSink } from './smtp.js';

/** The instant every proposal test starts at; slots are given in hours from it. */
export const T0 = '2026-03-02T06:00:00.000Z';

export interface User {
  accountId: string;
  key: string;
  id: string;
  token: string;
  email: string;
  name: string;
}

/** `at(h)`: the instant `h` hours after T0. */
export const at = (hoursFromT0: number) => new Date(Date.parse(T0) + hoursFromT0 * HOUR).toISOString();

/** A slot starting `h` hours after T0, `minutes` long. */
export const slot = (h: number, minutes = 30) => ({
  start: at(h),
  end: new Date(Date.parse(at(h)) + minutes * 60_000).toISOString(),
});

/** The token of a magic link (`…/p/<token>`). */
export const tokenOf = (url: string) => url.split('/p/')[1]!;

/**
 * One app for the calling test file (its hooks registered here), and the helpers bound to it. `t`,
 * `sink` and `feedUrl` stand for what the file's beforeAll started.
 */
export function proposalsApp() {
  const env: Record<string, string> = { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' };
  let sink: SmtpSink | undefined;
  let feed: Awaited<ReturnType<typeof serveCalendar>> | undefined;
  // The sink's address is known only once it listens: this hook runs before clockedApp's starts the app.
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
    feed = await serveCalendar(vcalendar('\r\n', []));
  });
  afterAll(async () => {
    await sink?.close();
    await feed?.close();
  });
  const { clock, t } = clockedApp({ at: T0, env });
  beforeEach(() => clock.set(T0));

  const theSink = (): SmtpSink => {
    if (!sink) throw new Error('the SMTP sink starts in beforeAll');
    return sink;
  };

  /** A new account with a signed-in user; `calendar` connects an (empty) ICS feed for it. */
  async function user(opts: { calendar?: boolean } = {}): Promise<User> {
    const { accountId, key, id, token, email } = await fixtures.signedInUser(t, { prefix: 'prop' });
    const u = { accountId, key, id, token, email, name: '' };
    if (opts.calendar) {
      const c = await t.call('POST', '/v1/calendars/ics', { token: u.token, body: { url: feed?.url } });
      expect(c.status, await c.clone().text()).toBe(201);
    }
    return u;
  }

  /** `grantor` lets `grantee` propose meetings to it. */
  async function allow(grantor: User, grantee: User): Promise<string> {
    const res = await t.call('POST', '/v1/consents', {
      token: grantor.token,
      body: { grantee_id: grantee.id, scopes: ['booking:propose'] },
    });
    expect(res.status).toBe(201);
    return (await res.json()).consent.id;
  }

  /** A requester (its calendar connected) and `participants` users who each let it propose to them. */
  async function requesterAnd(participants: number): Promise<User[]> {
    const requester = await user({ calendar: true });
    const others: User[] = [];
    for (let i = 0; i < participants; i++) others.push(await user());
    for (const other of others) await allow(other, requester);
    return [requester, ...others];
  }

  /** A fresh session (sessions last an hour: tests that move the clock sign in again). */
  async function signIn(u: User): Promise<void> {
    u.token = (await fixtures.signIn(t, u.email)).token;
  }

  function propose(requester: User, body: Json) {
    return t.call('POST', '/v1/proposals', { token: requester.token, body });
  }

  async function proposed(requester: User, body: Json): Promise<Json> {
    const res = await propose(requester, body);
    expect(res.status, await res.clone().text()).toBe(201);
    return res.json();
  }

  function respond(id: string, body: Json, token?: string) {
    return t.call('POST', `/v1/proposals/${id}/response`, { ...(token ? { token } : {}), body });
  }

  /** The events of every account about one proposal, oldest first. */
  async function eventsAbout(proposalId: string): Promise<{ type: string; account_id: string }[]> {
    const rows = await t.ctx.db
      .selectFrom('events')
      .select(['type', 'account_id', 'data'])
      .where('type', 'like', 'proposal.%')
      .orderBy('created_at')
      .execute();
    return rows
      .filter((r) => {
        const d = r.data as Json;
        return d.proposal_id === proposalId || d.proposal?.id === proposalId;
      })
      .map((r) => ({ type: r.type, account_id: r.account_id }));
  }

  /**
   * Every mail sent so far, parsed: the job runner drained (so every mail due is handed to the sink)
   * and the sink done parsing what it accepted.
   */
  async function sent(): Promise<ParsedMail[]> {
    await t.ctx.jobs.drain();
    const s = theSink();
    return s.waitFor(s.raw.length);
  }

  /** The magic link mailed to `to` most recently (whose text contains `about`). */
  async function mailedToken(to: string, about = ''): Promise<string> {
    const m = [...(await sent())]
      .reverse()
      .find(
        (x) =>
          JSON.stringify(x.to ?? '').includes(to) &&
          /\/p\//.test(x.text ?? '') &&
          (x.text ?? '').includes(about),
      );
    const token = m ? /\/p\/([A-Za-z0-9_-]{43})/.exec(m.text ?? '')?.[1] : undefined;
    if (!token) throw new Error(`no proposal link mailed to ${to}`);
    return token;
  }

  /** The mails sent to `to` whose subject matches. */
  async function mailsTo(to: string, subject: RegExp): Promise<ParsedMail[]> {
    return (await sent()).filter(
      (x) => JSON.stringify(x.to ?? '').includes(to) && subject.test(x.subject ?? ''),
    );
  }

  async function bookingsOf(u: User): Promise<Json[]> {
    const res = await t.call('GET', `/v1/bookings?from=${at(0)}&to=${at(24 * 40)}`, { token: u.key });
    expect(res.status).toBe(200);
    return (await res.json()).bookings;
  }

  return {
    clock,
    t,
    /** The SMTP sink (once started). */
    get sink(): SmtpSink {
      return theSink();
    },
    /** The empty ICS feed's address (once served). */
    get feedUrl(): string {
      if (!feed) throw new Error('the feed starts in beforeAll');
      return feed.url;
    },
    user,
    allow,
    requesterAnd,
    signIn,
    propose,
    proposed,
    respond,
    eventsAbout,
    mailedToken,
    mailsTo,
    bookingsOf,
  };
}
