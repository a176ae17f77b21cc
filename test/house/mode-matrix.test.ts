/**
 * The mode matrix (docs/api.md#test-mode): live and test mode never see each other's objects, for
 * every route the app serves that names one. One account makes the same set of resources twice, once
 * with its live key and once with its test key; then, walked from the app's router like the access
 * matrix (test/house/access-matrix.test.ts):
 * - the test key on each live resource, and the live key on each test resource, is 404 problem+json
 *   (never 200; the exceptions below say why);
 * - every list the API serves, read with one mode's key, names none of the other mode's resources.
 * Every answer is checked against the OpenAPI document by the test app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { type Json, startTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import * as fixtures from '../helpers/fixtures.js';
import { serveCalendar, vcalendar } from '../helpers/ics.js';
import { fillPath, pathParams, type ServedRoute, servedRoutes } from '../helpers/route-access.js';
import { testKeyFor } from '../helpers/test-mode.js';
import { DAY, HOUR } from '../../src/lib/time.js';

/** Path parameters that name nothing of one mode, and why the probe does not apply. */
const NOT_MODE_SCOPED: Record<string, string> = {
  'api-keys/:id': 'keys are the account’s, shared by both modes (each says its `environment`)',
  'connections/:provider': 'a provider name: the caller’s own connection of that kind',
  'invitations/:token': 'the invitee’s capability, whoever holds it',
  'network/:connected_id': 'network connections are made by signed-in users: live mode only',
};

/** Answers to the other mode's resource that are not 404, and why (the same as to another account's). */
const MODE_EXCEPTIONS: Record<string, { status: number; why: string }> = {
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

const QUERIES: Record<string, (f: Record<string, string>) => string> = {
  'GET /v1/principals/:id/availability': (f) => `from=${f.from}&to=${f.to}`,
};

type Mode = 'live' | 'test';
let t: TestApp;
let feed: { url: string; close: () => Promise<void> };
let routes: ServedRoute[];
let doc: Json;
const keys = {} as Record<Mode, string>;
const made = {} as Record<Mode, Record<string, string>>;
const named = {} as Record<string, string>;

const call = (method: string, path: string, token?: string, body?: unknown): Promise<TestResponse> =>
  t.call(method, path, {
    ...(token ? { token } : {}),
    ...(body !== undefined ? { body } : method === 'GET' || method === 'DELETE' ? {} : { body: {} }),
  });

async function ok(res: TestResponse, status = 201): Promise<Json> {
  expect(res.status, `${res.url}: ${await res.clone().text()}`).toBe(status);
  return res.json();
}

const lastSegment = (url: string): string => new URL(url).pathname.split('/').pop() ?? '';

/** One mode's resources, made through the API with that mode's key, by path parameter. */
async function makeResources(mode: Mode, key: string): Promise<Record<string, string>> {
  const host = await fixtures.newHost(
    t,
    { token: key },
    { email: `host@${mode}.example.com`, timezone: 'UTC' },
  );
  const link = (
    await ok(
      await call('POST', '/v1/booking-links', key, {
        title: 'Consultation',
        slug: `mode-${mode}`,
        host_ids: [host],
      }),
    )
  ).booking_link;
  // Each mode's booking at its own time: the public surface acts in the link's mode.
  const starts = await (
    await call(
      'GET',
      `/v1/public/links/${link.slug}/availability?from=${new Date(Date.now() + DAY).toISOString()}&to=${new Date(Date.now() + 8 * DAY).toISOString()}`,
    )
  ).json();
  const start = starts.slots[mode === 'live' ? 0 : 1].start;
  const booking = await fixtures.book(
    t,
    { slug: link.slug },
    { start_time: start, customer_email: `c@${mode}.example.com`, customer_name: 'C' },
  );
  const series = (
    await ok(
      await call('POST', '/v1/bookings', key, {
        principal_id: host,
        start_time: starts.slots[mode === 'live' ? 2 : 3].start,
        customer_email: `s@${mode}.example.com`,
        customer_name: 'S',
        recurrence: { frequency: 'weekly', count: 2 },
      }),
    )
  ).series;
  const entry = (
    await ok(
      await call('POST', `/v1/public/links/${link.slug}/waitlist`, undefined, {
        customer_email: `w@${mode}.example.com`,
        customer_name: 'W',
        preferred_from: new Date(Date.now() + DAY).toISOString(),
        preferred_to: new Date(Date.now() + 2 * DAY).toISOString(),
      }),
    )
  ).waitlist_entry;
  const webhook = await ok(
    await call('POST', '/v1/webhooks', key, {
      url: `https://hooks.example.com/${mode}`,
      events: ['booking.created'],
    }),
  );
  const test = await ok(await call('POST', `/v1/webhooks/${webhook.id}/test`, key), 202);
  const ics = await ok(await call('POST', '/v1/calendars/ics', key, { url: feed.url, principal_id: host }));
  const connectLink = await ok(await call('POST', `/v1/hosts/${host}/connect-link`, key));
  const consent = await ok(
    await call('POST', '/v1/consents', key, { grantee_id: host, scopes: ['availability:read:freebusy'] }),
  );
  const at = (h: number) => new Date(Math.ceil(Date.now() / HOUR) * HOUR + (48 + h) * HOUR).toISOString();
  const proposal = await ok(
    await call('POST', '/v1/proposals', key, {
      mode: 'poll',
      principal_id: host,
      slots: [{ start: at(mode === 'live' ? 0 : 2), end: at(mode === 'live' ? 1 : 3) }],
    }),
  );
  const ooo = await ok(
    await call('POST', `/v1/principals/${host}/out-of-office`, key, {
      start: '2054-07-01T00:00:00Z',
      end: '2054-07-15T00:00:00Z',
    }),
  );
  return {
    'hosts/:id': host,
    'out-of-office/:ooo_id': ooo.out_of_office.id,
    'principals/:id': host,
    'webhooks/:id': webhook.id,
    'deliveries/:delivery_id': test.delivery.id,
    'events/:id': test.event.id,
    'calendars/:id': ics.connection.calendars[0].id,
    'booking-links/:id': link.id,
    'waitlist/:entry_id': entry.id,
    'bookings/:id': booking.id,
    'booking-series/:id': series.id,
    'consents/:id': consent.consent.id,
    'proposals/:id': proposal.proposal.id,
    'threads/:id': proposal.proposal.thread_id,
    // Whose token it is decides the mode: these are answered in the resource's own mode by anyone.
    'bookings/:token': lastSegment(booking.manage_url),
    'connect/:token': lastSegment(connectLink.connect_link.url),
  };
}

beforeAll(async () => {
  feed = await serveCalendar(vcalendar('\r\n'));
  t = await startTestApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
  routes = servedRoutes(t.ctx.app as FastifyInstance).filter(
    (r) => r.method !== 'HEAD' && r.method !== 'OPTIONS',
  );
  doc = await (await fetch(`${t.url}/v1/openapi.json`)).json();
  const a = await t.account({ name: 'A' });
  keys.live = a.key;
  keys.test = (await testKeyFor(t, a.key)).key;
  made.live = await makeResources('live', keys.live);
  made.test = await makeResources('test', keys.test);
  Object.assign(named, {
    from: new Date(Date.now() + DAY).toISOString(),
    to: new Date(Date.now() + 3 * DAY).toISOString(),
  });
}, 90_000);

afterAll(async () => {
  await t?.close();
  await feed?.close();
});

const keyOf = (r: ServedRoute) => `${r.method} ${r.url}`;
const operation = (r: ServedRoute): Json =>
  doc.paths[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
/** Credentialed routes of the document (the public ones act in the mode of what their token or slug names). */
const credentialed = () => routes.filter((r) => operation(r) && operation(r).security === undefined);

/** Routes naming one mode's resource by a path parameter the probe applies to. */
const scopedRoutes = () =>
  credentialed().filter((r) => {
    const params = pathParams(r.url);
    return params.length > 0 && params.every((p) => !(p.key in NOT_MODE_SCOPED) && p.key in made.live);
  });

async function describeAnswer(res: TestResponse): Promise<string> {
  return `${res.status} ${(await res.clone().text()).slice(0, 160)}`;
}

describe('the mode matrix', () => {
  it('names a resource of each mode for every path parameter of a credentialed route', () => {
    const missing = credentialed().flatMap((r) =>
      pathParams(r.url)
        .filter((p) => !(p.key in NOT_MODE_SCOPED) && made.live[p.key] === undefined)
        .map((p) => `${keyOf(r)}: ${p.key}`),
    );
    expect(missing).toEqual([]);
  });

  it('each mode’s own key reads each of its resources (the resources are real)', async () => {
    const wrong: string[] = [];
    for (const mode of ['live', 'test'] as const) {
      for (const r of scopedRoutes().filter((x) => x.method === 'GET')) {
        const path = fillPath(r.url, (k) => made[mode][k] ?? '');
        const query = QUERIES[keyOf(r)];
        const res = await call('GET', query ? `${path}?${query(named)}` : path, keys[mode]);
        if (res.status !== 200) wrong.push(`${mode} ${keyOf(r)}: ${await describeAnswer(res)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each([
    ['the test key on live resources', 'test', 'live'],
    ['the live key on test resources', 'live', 'test'],
  ] as const)('%s: 404 problem+json, as another account’s', async (_name, asker, owner) => {
    const wrong: string[] = [];
    // Every route naming a hosts', links', bookings', webhooks', calendars', consents' or proposals' id.
    expect(scopedRoutes().length).toBeGreaterThanOrEqual(30);
    for (const r of scopedRoutes()) {
      const path = fillPath(r.url, (k) => made[owner][k] ?? '');
      const query = QUERIES[keyOf(r)];
      const res = await call(
        r.method,
        query ? `${path}?${query(named)}` : path,
        keys[asker],
        BODIES[keyOf(r)],
      );
      const expected = MODE_EXCEPTIONS[keyOf(r)]?.status ?? 404;
      const type = res.headers.get('content-type') ?? '';
      if (res.status !== expected || !type.startsWith('application/problem+json')) {
        wrong.push(`${keyOf(r)}: ${await describeAnswer(res)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('every list read with one mode’s key names none of the other mode’s resources', async () => {
    const wrong: string[] = [];
    const lists = credentialed().filter((r) => r.method === 'GET' && pathParams(r.url).length === 0);
    let read = 0;
    for (const [asker, other] of [
      ['live', 'test'],
      ['test', 'live'],
    ] as const) {
      for (const r of lists) {
        const res = await call('GET', r.url, keys[asker]);
        if (res.status !== 200) continue; // a read that needs a query is not a list
        read++;
        const text = await res.text();
        const leaked = Object.entries(made[other]).filter(([, id]) => text.includes(id));
        if (leaked.length > 0) wrong.push(`${asker} ${keyOf(r)} names ${leaked.map(([k]) => k).join(', ')}`);
      }
    }
    // Hosts, links, bookings, webhooks, consents, proposals, calendars … in both modes.
    expect(read).toBeGreaterThanOrEqual(14);
    expect(wrong).toEqual([]);
  });

  it('says the mode on every object it answers: livemode false in test, true in live', async () => {
    for (const mode of ['live', 'test'] as const) {
      const booking = await (
        await call('GET', `/v1/bookings/${made[mode]['bookings/:id']}`, keys[mode])
      ).json();
      expect(booking.booking?.livemode ?? booking.livemode).toBe(mode === 'live');
      const host = await (await call('GET', `/v1/hosts/${made[mode]['hosts/:id']}`, keys[mode])).json();
      expect(host.host.livemode).toBe(mode === 'live');
    }
  });
});
