/**
 * One access matrix over every route the app serves (docs/api.md#credentials), walked from the
 * app's router so that a new route is covered or fails here:
 * - without a credential, a route that needs one is 401 problem+json;
 * - a publishable key is 403 on every route outside the public surface, and answered (neither 401 nor
 *   403) on the routes it may use (PUBLISHABLE_MAY);
 * - account B's secret key, and a session of B's user, on account A's resource named by each path
 *   parameter is 404 problem+json: never 200, never a 403 that tells the resource exists;
 * - a route public by design (PUBLIC, with the reason) answers account B's key as it answers a
 *   visitor without one: a credential of another party reveals nothing more.
 * Every answer is checked against the OpenAPI document by the test app (test/helpers/openapi-check.ts).
 * Every path parameter needs a fixture of account A (`fixture`, filled in beforeAll): a route whose
 * parameter has none fails. A route that needs a credential but is not in the document is listed in
 * HIDDEN; answers other than 404 to another account are listed in CROSS_ACCOUNT_EXCEPTIONS with why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { type Json, startTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import * as fixtures from '../helpers/fixtures.js';
import { serveCalendar, vcalendar } from '../helpers/ics.js';
import { fillPath, pathParams, type ServedRoute, servedRoutes } from '../helpers/route-access.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp.js';
import { waitUntil } from '../helpers/promises.js';
import { DAY, HOUR } from '../../src/lib/time.js';
import { PUBLISHABLE_DETAIL, PUBLISHABLE_SCOPES } from '../../src/platform/auth.js';

/** Routes that take no credential or an optional one, by design: only "reveals nothing" is checked. */
const PUBLIC: Record<string, string> = {
  'GET /': 'the site’s front page',
  'GET /healthz': 'liveness probe for load balancers',
  'GET /readyz': 'readiness probe for load balancers',
  'GET /metrics': 'Prometheus scrape (the operator restricts it at the network)',
  'GET /docs': 'the API reference page',
  'GET /docs/': 'the API reference page',
  'GET /docs/scalar-1.46.4.js': 'the API reference’s script',
  'GET /v1/openapi.json': 'the API document',
  'GET /errors': 'the index of problem types',
  'GET /errors/:slug': 'a problem type’s page (each problem’s `type` links it)',
  'GET /favicon.svg': 'the site’s icon',
  'GET /favicon.ico': 'the site’s icon',
  'GET /assets/:file': 'the pages’ static scripts and styles',
  'GET /embed.js': 'the embed script customers put on their sites',
  'GET /book/:slug': 'a booking link’s public page',
  'GET /b/:token': 'an attendee’s page of their booking: the token is the credential',
  'GET /p/:token': 'a proposal’s page for a participant: the token is the credential',
  'GET /w/:token': 'a waitlist offer’s page: the token is the credential',
  'GET /invitations/:token': 'a network invitation’s page: the token is the credential',
  'POST /v1/sessions': 'sign-in: the credential is in the body',
  'GET /v1/calendars/google/callback': 'OAuth redirect back from Google: the signed state is the credential',
  'GET /v1/calendars/microsoft/callback':
    'OAuth redirect back from Microsoft: the signed state is the credential',
  'GET /v1/public/connect/:token': 'a host’s connect-link page: the token is the credential',
  'POST /v1/public/connect/:token/caldav': 'a host’s connect link: the token is the credential',
  'POST /v1/public/connect/:token/ics': 'a host’s connect link: the token is the credential',
  'POST /v1/payments/stripe/webhook': 'Stripe’s webhook: the signature is the credential',
  'GET /v1/public/links/:slug': 'the public booking surface',
  'GET /v1/public/links/:slug/availability': 'the public booking surface',
  'POST /v1/public/links/:slug/bookings': 'the public booking surface',
  'POST /v1/public/links/:slug/waitlist': 'the public booking surface',
  'POST /v1/public/waitlist/:token/claim': 'a waitlist offer: the token is the credential',
  'GET /v1/public/bookings/:token': 'an attendee’s self-service: the token is the credential',
  'POST /v1/public/bookings/:token/cancel': 'an attendee’s self-service: the token is the credential',
  'POST /v1/public/bookings/:token/reschedule': 'an attendee’s self-service: the token is the credential',
  'GET /v1/proposals/by-token': 'a participant’s view of a proposal: the token is the credential',
  'POST /v1/proposals/:id/response': 'a participant answers with the token of their link (or a credential)',
  'GET /console': 'the console’s pages (the session is an httpOnly cookie, checked by its proxy)',
  'GET /console/': 'the console’s pages',
  'GET /console/keys': 'the console’s pages',
  'GET /console/webhooks': 'the console’s pages',
  'GET /console/hosts': 'the console’s pages',
  'GET /console/links': 'the console’s pages',
  'GET /console/bookings': 'the console’s pages',
  'GET /console/polls': 'the console’s pages',
  'GET /console/network': 'the console’s pages',
  'GET /console/sign-in': 'the console’s pages',
  'GET /console/setup': 'the console’s first-run setup (a setup token in the link)',
  'POST /console/setup': 'the console’s first-run setup (a setup token in the body)',
  'GET /console/setup/state': 'the console’s first-run setup',
  'POST /console/session': 'the console’s sign-in: the credential is in the body',
  'DELETE /console/session': 'the console’s sign-out (its cookie)',
};

/**
 * Routes the walker does not call: wildcards have no path to send. Their access is the one of what they
 * answer: preflights say nothing, the console's proxy dispatches to /v1 with the session of its cookie.
 */
const NOT_CALLED: Record<string, string> = {
  '*': 'CORS preflight (OPTIONS on any path)',
  '/console/*': 'the console’s CSRF-checked proxy to /v1 (console tests): its cookie, not a bearer',
};

/** Routes outside the public surface that a publishable key may use (platform/auth.ts, `availability`). */
const PUBLISHABLE_MAY = new Set(['GET /v1/availability/slots', 'GET /v1/availability/next', 'POST /mcp']);

/** Routes that need a credential yet are not in the document, and where they are described. */
const HIDDEN: Record<string, string> = {
  'POST /mcp': 'the MCP transport (docs/mcp.md): the REST operations as tools',
};

/**
 * Path parameters that name no resource of an account: the cross-account probe does not apply.
 * `provider` is the caller's own connection of that kind; an invitation's token is the invitee's
 * capability, whoever holds it (network tests).
 */
const NOT_ACCOUNT_SCOPED: Record<string, string> = {
  'connections/:provider': 'a provider name: the caller’s own connection of that kind',
  'invitations/:token': 'the invitee’s capability, whoever holds it',
};

/**
 * Where the answer to account B's credential on account A's resource is not 404, and why. Each entry is
 * the current, documented behaviour; see the report of this matrix.
 */
const CROSS_ACCOUNT_EXCEPTIONS: Record<string, { status: number; why: string }> = {
  // Principal routes answer one 403 for a principal that does not exist and one not accessible
  // (docs/api.md#availability-access; src/modules/network/access-matrix.test.ts): the same answer
  // either way, so it reveals nothing; checked below against an id that exists nowhere.
  'GET /v1/principals/:id/schedule': { status: 403, why: 'one 403 for missing or inaccessible' },
  'PUT /v1/principals/:id/schedule': { status: 403, why: 'one 403 for missing or inaccessible' },
  'GET /v1/principals/:id/availability': { status: 403, why: 'one 403 for missing or inaccessible' },
  'POST /v1/principals/:id/out-of-office': { status: 403, why: 'one 403 for missing or inaccessible' },
  'GET /v1/principals/:id/out-of-office': { status: 403, why: 'one 403 for missing or inaccessible' },
  'DELETE /v1/principals/:id/out-of-office/:ooo_id': {
    status: 403,
    why: 'one 403 for missing or inaccessible',
  },
};

/** Bodies for writes with a path parameter: a request must pass validation to reach the 404. */
const BODIES: Record<string, unknown> = {
  'PATCH /v1/hosts/:id': { display_name: 'Renamed' },
  'PATCH /v1/webhooks/:id': { description: 'Renamed' },
  'PATCH /v1/calendars/:id': { selected: false },
  'PATCH /v1/booking-links/:id': { title: 'Renamed' },
  'PATCH /v1/bookings/:id': { notes: 'changed' },
  'POST /v1/bookings/:id/no-show': { party: 'customer' },
  'POST /v1/principals/:id/out-of-office': {
    start: '2054-07-01T00:00:00Z',
    end: '2054-07-02T00:00:00Z',
  },
};

/** Query strings a route needs to pass validation. */
const QUERIES: Record<string, (f: Record<string, string>) => string> = {
  'GET /v1/availability/slots': (f) => `principal_id=${f.host}&duration_minutes=30&from=${f.from}&to=${f.to}`,
  'GET /v1/availability/next': (f) => `principal_id=${f.host}&duration_minutes=30`,
  'GET /v1/availability/mutual': (f) =>
    `principal_ids=${f.host},${f.host2}&duration_minutes=30&from=${f.from}&to=${f.to}`,
  'GET /v1/principals/:id/availability': (f) => `from=${f.from}&to=${f.to}`,
  'GET /v1/proposals/by-token': (f) => `token=${f.proposalToken}`,
};

let t: TestApp;
let feed: { url: string; close: () => Promise<void> };
let sink: SmtpSink;
let routes: ServedRoute[];
let doc: Json;
/** Account A's fixtures by path parameter (`hosts/:id`) and the named values of QUERIES. */
const fixture: Record<string, string> = {};
const named: Record<string, string> = {};
const creds = {} as { ownKey: string; publishable: string; otherKey: string; otherSession: string };

const call = (method: string, path: string, token?: string, body?: unknown): Promise<TestResponse> =>
  t.call(method, path, {
    ...(token ? { token } : {}),
    ...(body !== undefined ? { body } : method === 'GET' || method === 'DELETE' ? {} : { body: {} }),
  });

async function ok(res: TestResponse, status = 201): Promise<Json> {
  expect(res.status, `${res.url}: ${await res.clone().text()}`).toBe(status);
  return res.json();
}

/** The last segment of a URL path: the token of a link. */
const lastSegment = (url: string): string => new URL(url).pathname.split('/').pop() ?? '';

beforeAll(async () => {
  feed = await serveCalendar(vcalendar('\r\n'));
  sink = await startSmtpSink();
  t = await startTestApp({ env: { SMTP_URL: sink.url, KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
  routes = servedRoutes(t.ctx.app as FastifyInstance).filter((r) => r.method !== 'HEAD');
  doc = await (await fetch(`${t.url}/v1/openapi.json`)).json();

  const a = await t.account({ name: 'A' });
  const b = await t.account({ name: 'B' });
  const key = a.key;
  const host = await fixtures.newHost(t, { token: key }, { email: 'host@a.example.com', timezone: 'UTC' });
  const host2 = await fixtures.newHost(t, { token: key }, { timezone: 'UTC' });
  const pk = await ok(await call('POST', '/v1/api-keys', key, { name: 'Widget', key_type: 'publishable' }));
  creds.publishable = pk.api_key.key;
  creds.ownKey = key;
  creds.otherKey = b.key;
  const password = fixtures.PASSWORD;
  await t.ctx.modules.accounts.createUser({ accountId: b.id, email: 'user@b.example.com', password });
  creds.otherSession = (await fixtures.signIn(t, 'user@b.example.com')).token;
  await t.ctx.modules.accounts.createUser({ accountId: a.id, email: 'user@a.example.com', password });
  const userA = await fixtures.signIn(t, 'user@a.example.com');

  const link = (
    await ok(
      await call('POST', '/v1/booking-links', key, {
        title: 'Consultation',
        slug: 'matrix-a',
        host_ids: [host],
      }),
    )
  ).booking_link;
  const start = await fixtures.firstSlot(t, link.slug);
  const booking = await fixtures.book(
    t,
    { slug: link.slug },
    { start_time: start, customer_email: 'c@example.com', customer_name: 'C' },
  );
  const series = (
    await ok(
      await call('POST', '/v1/bookings', key, {
        principal_id: host2,
        start_time: start,
        customer_email: 's@example.com',
        customer_name: 'S',
        recurrence: { frequency: 'weekly', count: 2 },
      }),
    )
  ).series;
  const entry = (
    await ok(
      await call('POST', `/v1/public/links/${link.slug}/waitlist`, undefined, {
        customer_email: 'w@example.com',
        customer_name: 'W',
        preferred_from: new Date(Date.now() + DAY).toISOString(),
        preferred_to: new Date(Date.now() + 2 * DAY).toISOString(),
      }),
    )
  ).waitlist_entry;
  const webhook = await ok(
    await call('POST', '/v1/webhooks', key, {
      url: 'https://hooks.example.com/a',
      events: ['booking.created'],
    }),
  );
  const test = await ok(await call('POST', `/v1/webhooks/${webhook.id}/test`, key), 202);
  const ics = await ok(await call('POST', '/v1/calendars/ics', key, { url: feed.url, principal_id: host }));
  const connectLink = await ok(await call('POST', `/v1/hosts/${host}/connect-link`, key));
  const consent = await ok(
    await call('POST', '/v1/consents', userA.token, {
      grantee_id: host,
      scopes: ['availability:read:freebusy'],
    }),
  );
  // A connection of A's user with C's, by a real invitation accepted from its mail.
  const c = await t.account({ name: 'C' });
  await t.ctx.modules.accounts.createUser({ accountId: c.id, email: 'user@c.example.com', password });
  const userC = await fixtures.signIn(t, 'user@c.example.com');
  await ok(
    await call('POST', '/v1/network/invitations', userA.token, {
      invitee_email: 'user@c.example.com',
      relationship_type: 'colleague',
    }),
  );
  await t.ctx.jobs.drain();
  const invitationIn = () =>
    sink.messages
      .filter((m) => JSON.stringify(m.to ?? '').includes('user@c.example.com'))
      .map((m) => /\/invitations\/([A-Za-z0-9_-]{43})/.exec(m.text ?? '')?.[1])
      .find((token) => token !== undefined);
  await waitUntil('the invitation mail to C', () => invitationIn() !== undefined);
  const invitation = invitationIn() ?? '';
  await ok(await call('POST', `/v1/network/invitations/${invitation}/accept`, userC.token), 200);
  const at = (h: number) => new Date(Math.ceil(Date.now() / HOUR) * HOUR + (48 + h) * HOUR).toISOString();
  const proposal = await ok(
    await call('POST', '/v1/proposals', key, {
      mode: 'poll',
      principal_id: host,
      slots: [{ start: at(0), end: at(1) }],
    }),
  );

  const ooo = await ok(
    await call('POST', `/v1/principals/${host}/out-of-office`, key, {
      start: '2054-07-01T00:00:00Z',
      end: '2054-07-15T00:00:00Z',
    }),
  );

  Object.assign(fixture, {
    'hosts/:id': host,
    'out-of-office/:ooo_id': ooo.out_of_office.id,
    'principals/:id': host,
    'api-keys/:id': pk.api_key.id,
    'webhooks/:id': webhook.id,
    'deliveries/:delivery_id': test.delivery.id,
    'events/:id': test.event.id,
    'calendars/:id': ics.connection.calendars[0].id,
    'connections/:provider': 'ics',
    'booking-links/:id': link.id,
    'waitlist/:entry_id': entry.id,
    'links/:slug': link.slug,
    'book/:slug': link.slug,
    'bookings/:id': booking.id,
    'booking-series/:id': series.id,
    'bookings/:token': lastSegment(booking.manage_url),
    'b/:token': lastSegment(booking.manage_url),
    'consents/:id': consent.consent.id,
    'network/:connected_id': userC.id,
    'invitations/:token': invitation,
    'proposals/:id': proposal.proposal.id,
    'threads/:id': proposal.proposal.thread_id,
    'p/:token': lastSegment(proposal.magic_link_url),
    'connect/:token': lastSegment(connectLink.connect_link.url),
    // Offers and claims exist only in mails; the route answers everyone alike, so any token serves.
    'waitlist/:token': 'x'.repeat(43),
    'w/:token': 'x'.repeat(43),
    'errors/:slug': 'not-found',
    'assets/:file': 'licenses.txt',
  });
  Object.assign(named, {
    host,
    host2,
    from: new Date(Date.now() + DAY).toISOString(),
    to: new Date(Date.now() + 3 * DAY).toISOString(),
    proposalToken: fixture['p/:token'],
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await feed?.close();
  await sink?.close();
});

const keyOf = (r: ServedRoute) => `${r.method} ${r.url}`;
const calledRoutes = () => routes.filter((r) => !(r.url in NOT_CALLED) && r.method !== 'OPTIONS');
/** The operation in the document (undefined: hidden). */
const operation = (r: ServedRoute): Json =>
  doc.paths[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
const isPublic = (r: ServedRoute) => keyOf(r) in PUBLIC;

function target(r: ServedRoute): string {
  const path = fillPath(r.url, (k) => {
    const v = fixture[k];
    if (v === undefined) throw new Error(`${keyOf(r)}: no fixture for ${k} (add one to the fixture map)`);
    return v;
  });
  const query = QUERIES[keyOf(r)];
  return query ? `${path}?${query(named)}` : path;
}

const send = (r: ServedRoute, token?: string) => call(r.method, target(r), token, BODIES[keyOf(r)]);

/** An id of the same form as `id` that names nothing: its last character changed. */
const elsewhere = (id: string): string => id.slice(0, -1) + (id.endsWith('0') ? '1' : '0');

/**
 * What is wrong with an answer that should be a problem of `status` with the `fields` given (and the
 * request id of its header), or null.
 */
async function notProblem(
  res: TestResponse,
  status: number,
  fields: Record<string, unknown>,
): Promise<string | null> {
  const answer = await describeAnswer(res);
  if (res.status !== status) return answer;
  if (!res.headers.get('content-type')?.startsWith('application/problem+json')) return answer;
  const body: Json = await res.clone().json();
  const off = Object.entries(fields).filter(([k, v]) => JSON.stringify(body[k]) !== JSON.stringify(v));
  if (off.length > 0) return `${off.map(([k]) => k).join(', ')} differ: ${answer}`;
  if (body.status !== status || body.request_id !== res.headers.get('x-request-id')) return answer;
  return null;
}

async function describeAnswer(res: TestResponse): Promise<string> {
  const text = await res.clone().text();
  return `${res.status} ${res.headers.get('content-type')?.split(';')[0]} ${text.slice(0, 160)}`;
}

describe('the access matrix', () => {
  it('knows every route: each is public by design with a reason, or documented and credentialed', () => {
    const unknown: string[] = [];
    for (const r of routes) {
      if (r.url in NOT_CALLED || r.method === 'OPTIONS') continue;
      if (isPublic(r)) {
        const security = operation(r)?.security as unknown[] | undefined;
        // A public route's document entry must not ask for a bearer only.
        if (operation(r) && security === undefined)
          unknown.push(`${keyOf(r)}: public here, bearer-only in the document`);
        continue;
      }
      if (!operation(r) && !(keyOf(r) in HIDDEN))
        unknown.push(`${keyOf(r)}: hidden, and in neither PUBLIC nor HIDDEN`);
      else if (operation(r) && operation(r).security !== undefined)
        unknown.push(`${keyOf(r)}: takes no or an optional credential, yet is not listed in PUBLIC`);
    }
    for (const k of Object.keys(PUBLIC)) {
      if (!routes.some((r) => keyOf(r) === k)) unknown.push(`${k}: listed in PUBLIC but not served`);
    }
    expect(unknown).toEqual([]);
  });

  it('gives every path parameter a fixture', () => {
    const missing = calledRoutes().flatMap((r) =>
      pathParams(r.url)
        .filter((p) => fixture[p.key] === undefined)
        .map((p) => `${keyOf(r)}: ${p.key}`),
    );
    expect(missing).toEqual([]);
  });

  it('account A’s own secret key reads each of its resources (the fixtures are real)', async () => {
    const wrong: string[] = [];
    for (const r of calledRoutes().filter((x) => !isPublic(x) && x.method === 'GET')) {
      if (pathParams(r.url).length === 0) continue;
      const res = await send(r, creds.ownKey);
      if (res.status !== 200) wrong.push(`${keyOf(r)}: ${await describeAnswer(res)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('without a credential: 401 problem+json on every route that needs one', async () => {
    const wrong: string[] = [];
    for (const r of calledRoutes().filter((x) => !isPublic(x))) {
      const res = await send(r);
      const problem = await notProblem(res, 401, {
        type: `${t.url}/errors/unauthorized`,
        title: 'Unauthorized',
        detail: 'Missing or invalid API key',
      });
      if (problem) wrong.push(`${keyOf(r)}: ${problem}`);
    }
    expect(wrong).toEqual([]);
  });

  it('with a publishable key: 403 outside the public surface, answered where it may go', async () => {
    const wrong: string[] = [];
    for (const r of calledRoutes().filter((x) => !isPublic(x))) {
      const res = await send(r, creds.publishable);
      if (PUBLISHABLE_MAY.has(keyOf(r))) {
        if (res.status === 401 || res.status === 403) wrong.push(`${keyOf(r)}: ${await describeAnswer(res)}`);
        continue;
      }
      const problem = await notProblem(res, 403, {
        type: `${t.url}/errors/forbidden`,
        title: 'Forbidden',
        detail: PUBLISHABLE_DETAIL,
        key_type: 'publishable',
        available_scopes: [...PUBLISHABLE_SCOPES],
      });
      if (problem) wrong.push(`${keyOf(r)}: ${problem}`);
    }
    expect(wrong).toEqual([]);
  });

  it.each([
    ['account B’s secret key', 'otherKey'],
    ['a session of account B’s user', 'otherSession'],
  ] as const)('with %s on account A’s resources: 404 problem+json', async (_name, cred) => {
    const wrong: string[] = [];
    for (const r of calledRoutes().filter((x) => !isPublic(x))) {
      const scoped = pathParams(r.url).filter((p) => !(p.key in NOT_ACCOUNT_SCOPED));
      if (scoped.length === 0) continue;
      const res = await send(r, creds[cred]);
      const exception = CROSS_ACCOUNT_EXCEPTIONS[keyOf(r)];
      const problem = exception
        ? await notProblem(res, exception.status, { type: `${t.url}/errors/forbidden` })
        : await notProblem(res, 404, { type: `${t.url}/errors/not-found` });
      if (problem) wrong.push(`${keyOf(r)}: ${problem}`);
      if (exception) {
        // Not a 404, but the very answer an id that exists nowhere gets: nothing is revealed.
        const nowhere = fillPath(r.url, (k) => elsewhere(fixture[k] ?? ''));
        const query = QUERIES[keyOf(r)];
        const path = query ? `${nowhere}?${query(named)}` : nowhere;
        const missing = await call(r.method, path, creds[cred], BODIES[keyOf(r)]);
        const [seen, unseen] = [await res.json(), await missing.json()];
        if (missing.status !== res.status || seen.detail !== unseen.detail) {
          wrong.push(
            `${keyOf(r)}: ${res.status} ${seen.detail} here, ${missing.status} ${unseen.detail} for no such id`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('on a public route, publishable and secret keys pass, and account B’s key is answered as a visitor without one', async () => {
    const wrong: string[] = [];
    for (const r of calledRoutes().filter(isPublic)) {
      // A sign-in or setup is answered by what its body says, whoever asks: nothing of A to reveal.
      if (r.method !== 'GET' && pathParams(r.url).length === 0) continue;
      const anonymous = await send(r);
      const other = await send(r, creds.otherKey);
      const publishable = await send(r, creds.publishable);
      const own = await send(r, creds.ownKey);
      if (anonymous.status !== other.status || [401, 403].includes(anonymous.status)) {
        wrong.push(`${keyOf(r)}: ${anonymous.status} without, ${other.status} with B’s key`);
      }
      if ([401, 403].includes(publishable.status)) {
        wrong.push(`${keyOf(r)}: ${await describeAnswer(publishable)} with a publishable key`);
      }
      if ([401, 403].includes(own.status)) {
        wrong.push(`${keyOf(r)}: ${await describeAnswer(own)} with A’s own secret key`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
