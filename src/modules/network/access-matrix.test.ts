/**
 * Who may read whose availability, as a table over HTTP on the real runtime (docs/api.md#availability-access):
 * every caller kind (secret key, publishable key, user session, an unrelated account's secret key)
 * against a target principal in every relationship to the caller (itself, a managed host, a network
 * connection made by a real invitation and accept, a free/busy consent, a revoked, expired or
 * details-only consent, no relation, an id that does not exist), on every availability endpoint.
 * Allowed is 200, everything else 403 (never 404). Every target has a calendar connected (an ICS feed
 * on a local server), so a 403 is the access decision and not a missing calendar.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp, type TestResponse } from '../../../test/helpers/app.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { MINUTE } from '../../lib/time.js';

const T0 = '2026-03-02T06:00:00.000Z'; // a Monday
const clock = new FakeClock(T0);
// Tuesday and Wednesday of the next week: weekdays inside every default schedule's 60-day horizon.
const FROM = '2026-03-10T00:00:00.000Z';
const TO = '2026-03-12T00:00:00.000Z';
const ORIGIN = 'https://app.example.com';
const PASSWORD = 'correct horse battery';
const FREEBUSY = 'availability:read:freebusy';
const NOT_ACCESSIBLE = /not accessible to this caller/;

const CALLERS = ['secret', 'publishable', 'session', 'other'] as const;
type CallerKind = (typeof CALLERS)[number];
const RELATIONSHIPS = [
  'self',
  'managed_host',
  'connected',
  'freebusy_consent',
  'revoked',
  'expired',
  'details_only',
  'none',
  'unknown',
] as const;
type Relationship = (typeof RELATIONSHIPS)[number];
const ENDPOINTS = ['slots', 'next', 'mutual', 'blocks'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

/** A caller: its bearer token, extra headers, and the principal it acts as. */
interface Credential {
  token: string;
  headers: Record<string, string>;
  principal: string;
}
/** A user of an account of its own, signed in. */
interface User {
  accountId: string;
  id: string;
  email: string;
  token: string;
}
/** The targets of one grantee (account A's principal, or user U), by relationship, and its consents. */
interface Side {
  targets: Record<Relationship, string>;
  consents: { freebusy: string; revoked: string; expired: string; details: string };
}

let t: TestApp;
let sink: SmtpSink;
let feed: Server;
let feedUrl: string;
let users = 0;
const creds = {} as Record<CallerKind, Credential>;
/** Targets seen from the account principal (secret, publishable, other) and from user U (session). */
const sides = {} as Record<'account' | 'user', Side>;
/** A host of account A: the second principal of `mutual` when the target is the caller itself. */
let host: string;
/** Account A's principal after a grant, a revocation and a new grant by the same user. */
let regranted: { id: string; revokedConsent: string; activeConsent: string };

const sideOf = (caller: CallerKind): Side => (caller === 'session' ? sides.user : sides.account);

function call(caller: CallerKind, path: string): Promise<TestResponse> {
  const c = creds[caller];
  return t.call('GET', path, { token: c.token, headers: c.headers });
}

async function connectCalendar(token: string, principalId?: string): Promise<void> {
  const res = await t.call('POST', '/v1/calendars/ics', {
    token,
    body: { url: feedUrl, ...(principalId ? { principal_id: principalId } : {}) },
  });
  if (res.status !== 201) throw new Error(`connecting a calendar: ${res.status} ${await res.text()}`);
}

/** Signs in: the session token and the user's principal id. */
const signIn = (email: string) => fixtures.signIn(t, email, PASSWORD);

/** A user of account `accountId` (a new account when absent), signed in, with its calendar connected. */
async function newUser(accountId?: string): Promise<User> {
  const account = accountId ?? (await t.account()).id;
  const email = `matrix${++users}-${Date.now()}@example.com`;
  await t.ctx.modules.accounts.createUser({ accountId: account, email, password: PASSWORD });
  const { token, id } = await signIn(email);
  await connectCalendar(token);
  return { accountId: account, id, email, token };
}

async function grant(grantor: User, grantee: string, scopes: string[], expiresAt?: string): Promise<string> {
  const res = await t.call('POST', '/v1/consents', {
    token: grantor.token,
    body: { grantee_id: grantee, scopes, ...(expiresAt ? { expires_at: expiresAt } : {}) },
  });
  if (res.status !== 201) throw new Error(`grant: ${res.status} ${await res.text()}`);
  const { consent } = await res.json();
  return consent.id as string;
}

async function revoke(grantor: User, consentId: string): Promise<void> {
  const res = await t.call('DELETE', `/v1/consents/${consentId}`, { token: grantor.token });
  if (res.status !== 200) throw new Error(`revoke: ${res.status} ${await res.text()}`);
}

/** The invitation token in the latest mail to `to`. */
function invitationToken(to: string): string {
  const mail = [...sink.messages].reverse().find((m) =>
    JSON.stringify(m.to ?? '')
      .toLowerCase()
      .includes(to.toLowerCase()),
  );
  const m = /\/invitations\/([A-Za-z0-9_-]{43})/.exec(mail?.text ?? '');
  if (!m) throw new Error(`no invitation mail to ${to}`);
  return m[1]!;
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

function path(endpoint: Endpoint, me: string, x: string, consentId?: string): string {
  const consent: Record<string, string> = consentId ? { consent_id: consentId } : {};
  switch (endpoint) {
    case 'slots':
      return `/v1/availability/slots?${q({ principal_id: x, duration_minutes: '30', from: FROM, to: TO, ...consent })}`;
    case 'next':
      return `/v1/availability/next?${q({ principal_id: x, duration_minutes: '30', ...consent })}`;
    case 'mutual': {
      // The caller with the target; when the target is the caller itself (a principal may not repeat),
      // the target with account A's host.
      const ids = x === me ? `${x},${host}` : `${me},${x}`;
      return `/v1/availability/mutual?${q({ principal_ids: ids, duration_minutes: '30', from: FROM, to: TO })}`;
    }
    case 'blocks':
      return `/v1/principals/${x}/availability?${q({ from: FROM, to: TO })}`;
  }
}

// ---- the expectations ----------------------------------------------------------------------------------

const READABLE: ReadonlySet<Relationship> = new Set([
  'self',
  'managed_host',
  'connected',
  'freebusy_consent',
]);

function expected(caller: CallerKind, rel: Relationship, endpoint: Endpoint): 200 | 403 {
  switch (caller) {
    case 'other':
      return 403; // account B reaches nothing of account A's world
    case 'publishable':
      return (endpoint === 'slots' || endpoint === 'next') && (rel === 'self' || rel === 'managed_host')
        ? 200
        : 403;
    default:
      return READABLE.has(rel) ? 200 : 403;
  }
}

/** The basis `mutual` reports for the target. */
const BASIS: Partial<Record<Relationship, string>> = {
  self: 'self',
  managed_host: 'managed_host',
  connected: 'network',
  freebusy_consent: 'consent',
};

const matrix = CALLERS.flatMap((caller) =>
  RELATIONSHIPS.flatMap((rel) =>
    ENDPOINTS.map((endpoint) => {
      const status = expected(caller, rel, endpoint);
      return [`${caller} × ${rel} × ${endpoint} → ${status}`, { caller, rel, endpoint, status }] as const;
    }),
  ),
);

// ---- the world ----------------------------------------------------------------------------------------

beforeAll(async () => {
  feed = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/calendar' })
      .end(
        vcalendar(
          '\r\n',
          'BEGIN:VEVENT',
          'UID:busy@matrix.test',
          'DTSTAMP:20260101T000000Z',
          'DTSTART:20260310T100000Z',
          'DTEND:20260310T110000Z',
          'END:VEVENT',
        ),
      );
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/matrix.ics`;
  sink = await startSmtpSink();
  t = await startTestApp({ clock, env: { SMTP_URL: sink.url, KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });

  // Account A: its secret key, a publishable key, a host, a signed-in user U. Account B: unrelated.
  const a = await t.account({ name: 'A' });
  const b = await t.account({ name: 'B' });
  const pk = await t.call('POST', '/v1/api-keys', {
    token: a.key,
    body: { name: 'Widget', key_type: 'publishable', allowed_domains: ['example.com'] },
  });
  expect(pk.status).toBe(201);
  const hostRes = await t.call('POST', '/v1/hosts', { token: a.key, body: { display_name: 'Host of A' } });
  expect(hostRes.status).toBe(201);
  host = (await hostRes.json()).host.principal_id;
  const u = await newUser(a.id);
  await Promise.all([connectCalendar(a.key), connectCalendar(a.key, host), connectCalendar(b.key)]);
  creds.secret = { token: a.key, headers: {}, principal: a.id };
  creds.publishable = { token: (await pk.json()).api_key.key, headers: { origin: ORIGIN }, principal: a.id };
  creds.session = { token: u.token, headers: {}, principal: u.id };
  creds.other = { token: b.key, headers: {}, principal: b.id };
  expect(u.id).toMatch(/^[0-9a-f-]{36}$/);

  // Users of other accounts, each with a calendar: per grantee one per relationship, and one unrelated.
  const roles = ['connected', 'freebusy', 'revoked', 'expired', 'details'] as const;
  const make = async () =>
    Object.fromEntries(await Promise.all(roles.map(async (r) => [r, await newUser()] as const))) as Record<
      (typeof roles)[number],
      User
    >;
  const [forA, forU, stranger, again] = await Promise.all([make(), make(), newUser(), newUser()]);

  // Connections through real invitations: A (its secret key) invites one user, U (its session) another;
  // each accepts with its own session.
  const before = sink.messages.length;
  for (const [from, to] of [
    [a.key, forA.connected],
    [u.token, forU.connected],
  ] as const) {
    const res = await t.call('POST', '/v1/network/invitations', {
      token: from,
      body: { invitee_email: to.email, relationship_type: 'colleague' },
    });
    expect(res.status).toBe(201);
  }
  await t.ctx.jobs.drain();
  await sink.waitFor(before + 2);
  for (const to of [forA.connected, forU.connected]) {
    const res = await t.call('POST', `/v1/network/invitations/${invitationToken(to.email)}/accept`, {
      token: to.token,
    });
    expect(res.status).toBe(200);
  }

  // Consents to each grantee: free/busy; free/busy then revoked; free/busy ending in 10 minutes;
  // details only.
  const ends = new Date(clock.nowMs() + 10 * MINUTE).toISOString();
  const consentsTo = async (grantee: string, who: typeof forA): Promise<Side['consents']> => ({
    freebusy: await grant(who.freebusy, grantee, [FREEBUSY]),
    revoked: await grant(who.revoked, grantee, [FREEBUSY]),
    expired: await grant(who.expired, grantee, [FREEBUSY], ends),
    details: await grant(who.details, grantee, ['availability:read:details']),
  });
  const [toA, toU] = await Promise.all([consentsTo(a.id, forA), consentsTo(u.id, forU)]);
  const revokedConsent = await grant(again, a.id, [FREEBUSY]);
  const targets = (self: string, who: typeof forA): Record<Relationship, string> => ({
    self,
    managed_host: host,
    connected: who.connected.id,
    freebusy_consent: who.freebusy.id,
    revoked: who.revoked.id,
    expired: who.expired.id,
    details_only: who.details.id,
    none: stranger.id,
    unknown: crypto.randomUUID(),
  });
  sides.account = { targets: targets(a.id, forA), consents: toA };
  sides.user = { targets: targets(u.id, forU), consents: toU };

  // Controls: the revoked and expired targets were readable before, so only the revocation and the
  // end deny them below.
  for (const [caller, side] of [
    ['secret', sides.account],
    ['session', sides.user],
  ] as const) {
    for (const rel of ['revoked', 'expired'] as const) {
      const res = await call(caller, path('slots', creds[caller].principal, side.targets[rel]));
      expect(res.status, `${caller} × ${rel} before`).toBe(200);
    }
  }
  await revoke(forA.revoked, toA.revoked);
  await revoke(forU.revoked, toU.revoked);
  // A grant, its revocation and a new grant by the same user: a new consent.
  await revoke(again, revokedConsent);
  regranted = { id: again.id, revokedConsent, activeConsent: await grant(again, a.id, [FREEBUSY]) };
  expect(regranted.activeConsent).not.toBe(revokedConsent);

  // Past the end of the expiring consents (sessions last an hour: still signed in). No reaper runs:
  // those consents are still `active` in the store, and their end alone must deny them.
  clock.advance(11 * MINUTE);
}, 60_000);

afterAll(async () => {
  await t?.close();
  await sink?.close();
  await new Promise<void>((resolve) => (feed ? feed.close(() => resolve()) : resolve()));
});

// ---- the matrix --------------------------------------------------------------------------------------

describe('availability access matrix', () => {
  it.each(matrix)('%s', async (_name, { caller, rel, endpoint, status }) => {
    const me = creds[caller].principal;
    const side = sideOf(caller);
    const x = side.targets[rel];
    const res = await call(caller, path(endpoint, me, x));
    const body: Json = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(status);

    if (status === 403) {
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      if (caller === 'publishable' && (endpoint === 'mutual' || endpoint === 'blocks')) {
        // A route for secret keys and sessions only: refused by credential kind, whoever the target.
        expect(body.key_type).toBe('publishable');
      } else {
        expect(body.detail).toMatch(NOT_ACCESSIBLE);
      }
      return;
    }

    const consentId = rel === 'freebusy_consent' ? side.consents.freebusy : null;
    if (endpoint === 'slots' || endpoint === 'next') {
      expect(body.principal_id).toBe(x);
      if (consentId) expect(body.consent).toEqual({ id: consentId });
      else expect(body).not.toHaveProperty('consent');
      if (endpoint === 'slots') expect(body.slots.length).toBeGreaterThan(0);
      else expect(body.slot).not.toBeNull();
    } else if (endpoint === 'mutual') {
      const entries =
        x === me
          ? [
              { principal_id: me, consent_id: null, basis: 'self' },
              { principal_id: host, consent_id: null, basis: 'managed_host' },
            ]
          : [
              { principal_id: me, consent_id: null, basis: 'self' },
              { principal_id: x, consent_id: consentId, basis: BASIS[rel] },
            ];
      expect(body.consents).toEqual(entries);
      expect(body.principal_ids).toEqual(entries.map((e) => e.principal_id));
    } else {
      expect(body.principal_id).toBe(x);
      expect(body.blocks.some((b: Json) => b.status === 'busy' && b.source === 'calendar')).toBe(true);
    }
  });
});

// ---- consent_id: only that consent counts -------------------------------------------------------------

type ConsentRow = {
  name: string;
  caller: CallerKind;
  target: () => string;
  consent: () => string;
  status: 200 | 403;
};

const consentRows: ConsentRow[] = [
  {
    name: 'its own free/busy consent',
    caller: 'secret',
    target: () => sides.account.targets.freebusy_consent,
    consent: () => sides.account.consents.freebusy,
    status: 200,
  },
  {
    name: 'its own free/busy consent',
    caller: 'session',
    target: () => sides.user.targets.freebusy_consent,
    consent: () => sides.user.consents.freebusy,
    status: 200,
  },
  {
    name: 'the new consent of a grantor who revoked an earlier one',
    caller: 'secret',
    target: () => regranted.id,
    consent: () => regranted.activeConsent,
    status: 200,
  },
  {
    name: 'the revoked earlier consent of a grantor whose new consent is active',
    caller: 'secret',
    target: () => regranted.id,
    consent: () => regranted.revokedConsent,
    status: 403,
  },
  {
    name: 'a revoked consent',
    caller: 'secret',
    target: () => sides.account.targets.revoked,
    consent: () => sides.account.consents.revoked,
    status: 403,
  },
  {
    name: 'a revoked consent',
    caller: 'session',
    target: () => sides.user.targets.revoked,
    consent: () => sides.user.consents.revoked,
    status: 403,
  },
  {
    name: 'a consent past its end',
    caller: 'secret',
    target: () => sides.account.targets.expired,
    consent: () => sides.account.consents.expired,
    status: 403,
  },
  {
    name: 'a details-only consent',
    caller: 'secret',
    target: () => sides.account.targets.details_only,
    consent: () => sides.account.consents.details,
    status: 403,
  },
  {
    name: "someone else's consent (granted to user U)",
    caller: 'secret',
    target: () => sides.user.targets.freebusy_consent,
    consent: () => sides.user.consents.freebusy,
    status: 403,
  },
  {
    name: "its account's consent (granted to account A, not to the user)",
    caller: 'session',
    target: () => sides.account.targets.freebusy_consent,
    consent: () => sides.account.consents.freebusy,
    status: 403,
  },
  {
    name: "account A's consent",
    caller: 'other',
    target: () => sides.account.targets.freebusy_consent,
    consent: () => sides.account.consents.freebusy,
    status: 403,
  },
  {
    name: "account A's consent",
    caller: 'publishable',
    target: () => sides.account.targets.freebusy_consent,
    consent: () => sides.account.consents.freebusy,
    status: 403,
  },
  {
    name: 'its own consent from another grantor, on a connected principal',
    caller: 'secret',
    target: () => sides.account.targets.connected,
    consent: () => sides.account.consents.freebusy,
    status: 403,
  },
  {
    name: 'its own consent from another grantor, on a connected principal',
    caller: 'session',
    target: () => sides.user.targets.connected,
    consent: () => sides.user.consents.freebusy,
    status: 403,
  },
  {
    name: 'an unknown consent id, on a principal readable by consent',
    caller: 'secret',
    target: () => sides.account.targets.freebusy_consent,
    consent: () => 'cons_00000000000000000000000000',
    status: 403,
  },
];

describe('consent_id on slots and next: only that consent counts', () => {
  it.each(
    consentRows.flatMap((row) =>
      (['slots', 'next'] as const).map(
        (endpoint) =>
          [`${row.caller} × ${row.name} × ${endpoint} → ${row.status}`, { ...row, endpoint }] as const,
      ),
    ),
  )('%s', async (_name, { caller, target, consent, endpoint, status }) => {
    const x = target();
    const id = consent();
    const res = await call(caller, path(endpoint, creds[caller].principal, x, id));
    const body: Json = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(status);
    if (status === 200) {
      expect(body.principal_id).toBe(x);
      expect(body.consent).toEqual({ id });
    } else {
      expect(body.detail).toMatch(NOT_ACCESSIBLE);
    }
  });

  it('without consent_id, the regranted principal is read through its active consent', async () => {
    const res = await call('secret', path('slots', creds.secret.principal, regranted.id));
    expect(res.status).toBe(200);
    expect((await res.json()).consent).toEqual({ id: regranted.activeConsent });
  });
});

// ---- all at once: the access reads of concurrent requests share statements ---------------------------

describe('asked all at once', () => {
  it('every cell of the matrix and of the consent_id table answers as it does asked alone', async () => {
    // Requests arriving together share the access rule's statement (lib/batcher.ts): each must still
    // get its own answer, whoever else asked in the same statement.
    const cells = [
      ...matrix.map(([name, c]) => ({
        name,
        caller: c.caller,
        path: path(c.endpoint, creds[c.caller].principal, sideOf(c.caller).targets[c.rel]),
        status: c.status,
      })),
      ...consentRows.flatMap((row) =>
        (['slots', 'next'] as const).map((endpoint) => ({
          name: `${row.caller} × ${row.name} × ${endpoint}`,
          caller: row.caller,
          path: path(endpoint, creds[row.caller].principal, row.target(), row.consent()),
          status: row.status,
        })),
      ),
    ];
    const answers = await Promise.all(cells.map((c) => call(c.caller, c.path)));
    expect(answers.map((r, i) => `${cells[i]!.name}: ${r.status}`)).toEqual(
      cells.map((c) => `${c.name}: ${c.status}`),
    );
  });
});

// ---- GET /v1/network: who may list connections ----------------------------------------------------------

describe('GET /v1/network', () => {
  const rows: { caller: CallerKind; status: 200 | 403; connected: () => string[] }[] = [
    { caller: 'secret', status: 200, connected: () => [sides.account.targets.connected] },
    { caller: 'session', status: 200, connected: () => [sides.user.targets.connected] },
    { caller: 'other', status: 200, connected: () => [] },
    { caller: 'publishable', status: 403, connected: () => [] },
  ];
  it.each(rows.map((row) => [`${row.caller} × network → ${row.status}`, row] as const))(
    '%s',
    async (_name, { caller, status, connected }) => {
      const res = await call(caller, '/v1/network');
      const body: Json = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(status);
      if (status === 200) {
        expect(body.connections.map((c: Json) => c.principal_id)).toEqual(connected());
      } else {
        expect(body.key_type).toBe('publishable');
      }
    },
  );
});
