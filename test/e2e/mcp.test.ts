/**
 * The MCP server (docs/mcp.md) driven by the official MCP client over real HTTP against a listening
 * app: the listing in both protocol generations, a whole scenario checked against the REST API's view
 * of the same data, what publishable and revoked keys get, bad input, answers inside each tool's
 * `outputSchema`, and one rate-limit count per tool call.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Ajv2020 as AjvType, ValidateFunction } from 'ajv/dist/2020.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/platform/clock.js';
import { addKairosFormats } from '../../src/platform/validation.js';
import { type Json, startTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/fixtures.js';
import { serveCalendar, vcalendar } from '../helpers/ics.js';
import { REQUIRED_TOOLS } from '../helpers/mcp.js';

const T0 = '2026-03-02T06:00:00.000Z'; // a Monday
const clock = new FakeClock(T0);
let t: TestApp;
let feed: Awaited<ReturnType<typeof serveCalendar>> | undefined;
const clients: Client[] = [];
// ajv is CommonJS; under NodeNext its default export arrives as the module namespace.
type AjvCtor = new (opts: object) => AjvType;
const Ajv2020: AjvCtor =
  (Ajv2020Module as unknown as { default?: AjvCtor }).default ?? (Ajv2020Module as unknown as AjvCtor);
const ajv = addKairosFormats(new Ajv2020({ strict: false, allErrors: true }));
/** Each tool's listed outputSchema, compiled: every successful answer in these tests is checked. */
const outputs = new Map<string, ValidateFunction>();

beforeAll(async () => {
  feed = await serveCalendar(vcalendar('\r\n', []));
  t = await startTestApp({ clock, env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
  await feed?.close();
});
beforeEach(() => clock.set(T0));

interface User {
  id: string;
  accountId: string;
  key: string;
  keyId: string;
  token: string;
}

/** An account with a signed-in user whose (empty) ICS calendar is connected. */
async function user(): Promise<User> {
  const u = await signedInUser(t, { prefix: 'mcp' });
  const c = await t.call('POST', '/v1/calendars/ics', { token: u.token, body: { url: feed?.url } });
  expect(c.status, await c.clone().text()).toBe(201);
  return { id: u.id, accountId: u.accountId, key: u.key, keyId: u.keyId, token: u.token };
}

/** The official client over Streamable HTTP; `modern` speaks the current revision (no handshake). */
async function connect(token: string, modern = false): Promise<Client> {
  const client = new Client(
    { name: 'kairos-test', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  for (const tool of (await client.listTools()).tools) {
    if (!outputs.has(tool.name) && tool.outputSchema) outputs.set(tool.name, ajv.compile(tool.outputSchema));
  }
  return client;
}

interface Result {
  isError?: boolean;
  structuredContent?: Json;
  content: { type: string; text?: string }[];
}
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Result> {
  return (await client.callTool({ name, arguments: args })) as Result;
}
async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const r = await call(client, name, args);
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
  const validate = outputs.get(name);
  expect(validate, name).toBeDefined();
  expect(validate?.(r.structuredContent), `${name}: ${JSON.stringify(validate?.errors)}`).toBe(true);
  expect(JSON.parse(r.content[0]?.text ?? 'null')).toEqual(r.structuredContent);
  return r.structuredContent;
}
function errorOf(r: Result): Json {
  expect(r.isError).toBe(true);
  return JSON.parse(r.content[0]?.text ?? '{}');
}
const OFFSET = /(Z|[+-]\d{2}:\d{2})$/;
const same = (a: string, b: string) => expect(Date.parse(a)).toBe(Date.parse(b));

describe('MCP over Streamable HTTP', () => {
  it('lists every tool with input and output schemas and annotations to a 2025-11-25 client (initialize handshake)', async () => {
    const u = await user();
    const client = await connect(u.token);
    expect(client.getServerVersion()?.name).toBe('kairos');
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    for (const name of REQUIRED_TOOLS) expect(names).toContain(name);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(30);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe('boolean');
      expect(typeof tool.annotations?.destructiveHint, tool.name).toBe('boolean');
      expect(typeof tool.annotations?.idempotentHint, tool.name).toBe('boolean');
    }
    // Only standard formats: an agent's validator knows them (the zone rule is checked by the API).
    expect(JSON.stringify(tools)).not.toContain('iana-time-zone');
    const slots = tools.find((x) => x.name === 'get_available_slots');
    // Derived from the route: its query parameters, with the route's rules.
    expect(Object.keys(slots?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['principal_id', 'from', 'to', 'duration_minutes', 'timezone']),
    );
    expect(tools.find((x) => x.name === 'create_booking')?.inputSchema.properties).toHaveProperty(
      'idempotency_key',
    );
    expect(tools.find((x) => x.name === 'cancel_booking')?.annotations?.destructiveHint).toBe(true);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['find_time_and_propose', 'book_next_free_slot']);
    const prompt = await client.getPrompt({
      name: 'find_time_and_propose',
      arguments: { participant_ids: 'a,b' },
    });
    expect(JSON.stringify(prompt.messages)).toContain('find_mutual_availability');
  });

  it('serves a client of the current revision (2026-07-28, no handshake) the same tools', async () => {
    const u = await user();
    const legacy = (await (await connect(u.token)).listTools()).tools.map((x) => x.name);
    const client = await connect(u.token, true);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(legacy);
    const now = await ok(client, 'current_time', { timezone: 'Europe/Paris' });
    expect(now).toMatchObject({
      timezone: 'Europe/Paris',
      utc_offset: '+01:00',
      local_date: '2026-03-02',
      weekday: 'Monday',
    });
    same(now.now, T0);
    expect(now.now).toMatch(/\+01:00$/);
  });

  it('runs the whole scenario — consent refused then granted, mutual availability, a proposal accepted, a booking rescheduled and cancelled — as the REST API sees it', async () => {
    const a = await user();
    const b = await user();
    const ma = await connect(a.token);
    const mb = await connect(b.token, true);
    const from = '2026-03-03T00:00:00Z';
    const to = '2026-03-05T00:00:00Z';

    // No consent yet: check_consent says so, and mutual availability is refused with the way out.
    expect(await ok(ma, 'check_consent', { grantor_id: b.id })).toMatchObject({
      granted: false,
      consent: null,
    });
    const refused = errorOf(
      await call(ma, 'find_mutual_availability', { principal_ids: `${a.id},${b.id}`, from, to }),
    );
    expect(refused.error.status).toBe(403);
    expect(refused.next).toMatch(/check_consent/);
    expect(refused.next).toMatch(/grant_consent/);

    // b grants a consent (its own credentials) with an idempotency key; a retry answers the same.
    const grant = {
      grantee_id: a.id,
      scopes: ['availability:read:freebusy', 'booking:propose'],
      idempotency_key: 'grant-1',
    };
    const granted = await ok(mb, 'grant_consent', grant);
    expect((await ok(mb, 'grant_consent', grant)).consent.id).toBe(granted.consent.id);
    const check = await ok(ma, 'check_consent', { grantor_id: b.id, scope: 'booking:propose' });
    expect(check).toMatchObject({ granted: true, consent: { id: granted.consent.id } });

    // Mutual availability: the REST answer's slots, each with its offset, in a named zone.
    const mutual = await ok(ma, 'find_mutual_availability', {
      principal_ids: `${a.id},${b.id}`,
      from,
      to,
      duration_minutes: 60,
      timezone: 'America/New_York',
    });
    const rest = await (
      await t.call(
        'GET',
        `/v1/availability/mutual?principal_ids=${a.id},${b.id}&from=${from}&to=${to}&duration_minutes=60&timezone=America/New_York`,
        { token: a.token },
      )
    ).json();
    expect(mutual.timezone).toBe('America/New_York');
    expect(mutual.slots.length).toBe(rest.slots.length);
    expect(mutual.slots.length).toBeGreaterThan(1);
    mutual.slots.forEach((s: Json, i: number) => {
      expect(s.start).toMatch(/-05:00$/);
      same(s.start, rest.slots[i].start);
      same(s.end, rest.slots[i].end);
    });

    // a proposes the first two slots; b accepts the first: both are booked.
    const slots = mutual.slots.slice(0, 2).map((s: Json) => ({ start: s.start, end: s.end }));
    const created = await ok(ma, 'create_proposal', {
      participant_ids: [b.id],
      slots,
      title: 'Kick-off',
      idempotency_key: 'prop-1',
    });
    const proposalId = created.proposal.id;
    const restProposal = (
      await (await t.call('GET', `/v1/proposals/${proposalId}`, { token: a.token })).json()
    ).proposal;
    expect(restProposal.status).toBe('proposed');
    same(created.proposal.slots[0].start, restProposal.slots[0].start);
    const accepted = await ok(mb, 'respond_to_proposal', {
      id: proposalId,
      action: 'accept',
      selected_slot_id: restProposal.slots[0].id,
    });
    expect(accepted.proposal.status).toBe('accepted');
    const listed = await ok(mb, 'list_proposals', { role: 'participant' });
    expect(listed.proposals.map((p: Json) => p.id)).toContain(proposalId);

    const bookings = await ok(ma, 'list_bookings', { principal_id: a.id });
    expect(bookings.bookings).toHaveLength(1);
    const booking = bookings.bookings[0];
    expect(booking.start_time).toMatch(OFFSET);
    same(booking.start_time, slots[0].start);

    // Reschedule to the second slot, then cancel: the REST API sees each change.
    const moved = await ok(ma, 'reschedule_booking', {
      id: booking.id,
      start_time: slots[1].start,
      end_time: slots[1].end,
    });
    same(moved.booking.start_time, slots[1].start);
    const afterMove = (await (await t.call('GET', `/v1/bookings/${booking.id}`, { token: a.token })).json())
      .booking;
    same(afterMove.start_time, slots[1].start);
    const got = await ok(ma, 'get_booking', { id: booking.id });
    expect(got.timezone).toBeTruthy();
    same(got.booking.start_time, afterMove.start_time);

    const cancelled = await ok(ma, 'cancel_booking', { id: booking.id, reason: 'Plans changed' });
    expect(cancelled.booking.status).toBe('cancelled');
    const afterCancel = (await (await t.call('GET', `/v1/bookings/${booking.id}`, { token: a.token })).json())
      .booking;
    expect(afterCancel.status).toBe('cancelled');
  });

  it('books once when a creating call is retried with the same idempotency key, and a taken time says to ask for slots again', async () => {
    const a = await user();
    const m = await connect(a.key);
    const args = {
      principal_id: a.accountId,
      start_time: '2026-03-03T10:00:00+01:00',
      duration_minutes: 30,
      customer_email: 'ada@example.com',
      customer_name: 'Ada',
    };
    const first = await ok(m, 'create_booking', { ...args, idempotency_key: 'book-1' });
    const again = await ok(m, 'create_booking', { ...args, idempotency_key: 'book-1' });
    expect(again.booking.id).toBe(first.booking.id);
    const rest = await (
      await t.call('GET', `/v1/bookings?principal_id=${a.accountId}`, { token: a.key })
    ).json();
    expect(rest.bookings).toHaveLength(1);
    const taken = errorOf(await call(m, 'create_booking', { ...args, idempotency_key: 'book-2' }));
    expect(taken.error.status).toBe(409);
    expect(taken.next).toMatch(/just taken: ask for slots again/);
  });

  it('shows a publishable key only the public-surface tools', async () => {
    const a = await user();
    const res = await t.call('POST', '/v1/api-keys', {
      token: a.key,
      body: { name: 'embed', key_type: 'publishable' },
    });
    expect(res.status).toBe(201);
    const pk = (await res.json()).api_key.key;
    const { tools } = await (await connect(pk)).listTools();
    const names = tools.map((x) => x.name).sort();
    expect(names).toEqual(
      [
        'book_on_link',
        'current_time',
        'get_available_slots',
        'get_link_slots',
        'get_next_available',
        'join_waitlist',
      ].sort(),
    );
    const hidden = errorOf(await call(await connect(pk), 'list_bookings'));
    expect(hidden.error.code).toBe('unknown_tool');
  });

  it('lets a read-only secret key read through its tools, and refuses its writing tools with the missing scope', async () => {
    const a = await user();
    const res = await t.call('POST', '/v1/api-keys', {
      token: a.key,
      body: { name: 'reader', scopes: ['read'] },
    });
    expect(res.status).toBe(201);
    const reader = await connect((await res.json()).api_key.key);
    await ok(reader, 'list_hosts');
    const refused = errorOf(
      await call(reader, 'create_booking_link', {
        title: 'Intro',
        slug: `ro-${Date.now()}`,
        duration_minutes: 30,
      }),
    );
    expect(JSON.stringify(refused)).toMatch(/write scope/);
  });

  it('refuses a revoked key on the next call, and a missing one with 401 and WWW-Authenticate', async () => {
    const a = await user();
    const res = await t.call('POST', '/v1/api-keys', { token: a.key, body: { name: 'agent' } });
    const key = (await res.json()).api_key;
    const m = await connect(key.key);
    await ok(m, 'list_hosts');
    expect((await t.call('DELETE', `/v1/api-keys/${key.id}`, { token: a.key })).status).toBe(200);
    await expect(m.callTool({ name: 'list_hosts', arguments: {} })).rejects.toThrow(/401|nauthori/);
    const raw = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(raw.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(((await raw.json()) as Json).request_id).toMatch(/^req_/);
  });

  it('answers bad input with isError naming the field, never a protocol error or a 500', async () => {
    const a = await user();
    const m = await connect(a.token, true);
    const noOffset = errorOf(
      await call(m, 'get_available_slots', {
        principal_id: a.id,
        from: '2026-03-03T09:00:00',
        to: '2026-03-04T00:00:00Z',
      }),
    );
    expect(Object.keys(noOffset.error.errors)).toEqual(['from']);
    expect(noOffset.error.errors.from).toMatch(/no UTC offset/);
    const badType = errorOf(
      await call(m, 'get_available_slots', {
        principal_id: a.id,
        from: T0,
        to: '2026-03-04T00:00:00Z',
        duration_minutes: 'long',
      }),
    );
    expect(badType.error.status).toBe(400);
    expect(Object.keys(badType.error.errors)).toContain('duration_minutes');
    const unknown = errorOf(await call(m, 'get_booking', { id: 'booking_x', colour: 'red' }));
    expect(Object.keys(unknown.error.errors)).toEqual(['colour']);
    const missing = errorOf(await call(m, 'get_booking', {}));
    expect(missing.error.errors).toHaveProperty('id');
    const zone = errorOf(await call(m, 'current_time', { timezone: 'Mars/Olympus' }));
    expect(zone.error.errors).toHaveProperty('timezone');
    const notFound = errorOf(await call(m, 'get_booking', { id: 'booking_00000000000000000000000000' }));
    expect(notFound.error.status).toBe(404);
  });

  it('says "no connected calendar" as an error, never an empty list', async () => {
    const acc = await t.account();
    const m = await connect(acc.key);
    const r = errorOf(
      await call(m, 'get_available_slots', {
        principal_id: acc.id,
        from: '2026-03-03T00:00:00Z',
        to: '2026-03-04T00:00:00Z',
      }),
    );
    expect(r.error.code).toBe('calendar_not_connected');
    expect(r.next).toMatch(/no connected calendar/);
  });

  it('points a host without a calendar to its booking link’s slots (get_link_slots), which offers them', async () => {
    const acc = await t.account();
    const h = await t.ctx.modules.principals.createHost(acc.id, {
      display_name: 'Calendarless host',
      timezone: 'Europe/Berlin',
    });
    const slug = `no-cal-${Date.now()}`;
    const made = await t.call('POST', '/v1/booking-links', {
      token: acc.key,
      body: { slug, title: 'Intro', host_ids: [h.principal_id], duration_minutes: 30 },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const m = await connect(acc.key);
    const window = { from: '2026-03-03T00:00:00Z', to: '2026-03-04T00:00:00Z' };
    const r = errorOf(await call(m, 'get_available_slots', { principal_id: h.principal_id, ...window }));
    expect(r.error.code).toBe('calendar_not_connected');
    expect(r.next).toContain('get_link_slots');
    expect(r.next).toContain(slug);
    // What the hint says is true: the link offers slots.
    const slots = await ok(m, 'get_link_slots', { slug, ...window });
    expect((slots.slots as unknown[]).length).toBeGreaterThan(0);
  });

  it('counts a tool call once against the key’s hourly limit', async () => {
    const acc = await t.account({ rateLimit: 1000 });
    const m = await connect(acc.key);
    const remaining = async () =>
      Number((await t.call('GET', '/v1/me', { token: acc.key })).headers.get('x-ratelimit-remaining'));
    const before = await remaining();
    await ok(m, 'list_hosts'); // one /mcp request, one inner REST request
    await ok(m, 'current_time');
    const after = await remaining();
    expect(before - after).toBe(3); // two tool calls and the second /v1/me
  });
});
