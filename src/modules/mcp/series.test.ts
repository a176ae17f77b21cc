/**
 * Recurring series and seated links through the official MCP client (docs/mcp.md#tools): a weekly
 * series booked with `create_booking` and read back with `get_booking_series`, a series that cannot
 * be booked answered with every failing occurrence in `conflicts` (in the zone asked for) and the
 * next step, `cancel_booking` with a `scope`, and `seats_remaining` of a seated link's slots through
 * `get_link_slots`, then `slot_full` from `book_on_link` once the seats are gone.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

// Monday 2 March 2026, 06:00 UTC; accounts and hosts work Mon–Fri 09:00–17:00 UTC.
const { t, host, link } = bookingsApp();
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'kairos-series-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

interface Result {
  isError?: boolean;
  structuredContent?: Json;
  content: { type: string; text?: string }[];
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  return (await client.callTool({ name, arguments: args })) as Result;
}

async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Json> {
  const r = await call(client, name, args);
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
  return r.structuredContent as Json;
}

/** The `{error, next}` of an `isError` result. */
async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<Json> {
  const r = await call(client, name, args);
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBe(true);
  return JSON.parse(r.content[0]?.text ?? 'null');
}

describe('recurring series through the MCP tools', () => {
  it('lists get_booking_series, and says what create_booking, book_on_link, cancel_booking and get_link_slots do with series and seats', async () => {
    const acc = await t.account();
    const m = await connect(acc.key);
    const { tools } = await m.listTools();
    const byName = new Map(tools.map((x) => [x.name, x]));
    const series = byName.get('get_booking_series');
    expect(series?.annotations?.readOnlyHint).toBe(true);
    expect(series?.inputSchema.required).toEqual(['id']);
    expect(Object.keys(series?.outputSchema?.properties ?? {})).toEqual(['series', 'timezone']);
    expect(byName.get('create_booking')?.description).toMatch(/recurrence.*all or nothing.*conflicts/s);
    expect(byName.get('book_on_link')?.description).toMatch(/recurrence.*slot_full|slot_full.*recurrence/s);
    expect(byName.get('cancel_booking')?.description).toMatch(/scope.*following/s);
    expect(byName.get('get_link_slots')?.description).toContain('seats_remaining');
    // `interval` has a default (1): the agent need not send it.
    const recurrence = (byName.get('create_booking')?.inputSchema.properties as Json | undefined)?.recurrence;
    expect(recurrence?.required).toEqual(['frequency', 'count']);
  });

  it('books a weekly series with create_booking and reads it back with get_booking_series', async () => {
    const acc = await t.account();
    const m = await connect(acc.key);
    const made = await ok(m, 'create_booking', {
      ...customer,
      start_time: '2026-03-03T11:00:00+01:00',
      recurrence: { frequency: 'weekly', count: 4 },
      timezone: 'Europe/Paris',
      idempotency_key: 'series-1',
    });
    expect(made.timezone).toBe('Europe/Paris');
    expect(made.booking.series_id).toBe(made.series.id);
    expect(made.series.id).toMatch(/^ser_/);
    expect(made.series.occurrences.map((o: Json) => o.start_time)).toEqual([
      '2026-03-03T11:00:00+01:00',
      '2026-03-10T11:00:00+01:00',
      '2026-03-17T11:00:00+01:00',
      '2026-03-24T11:00:00+01:00',
    ]);

    const read = await ok(m, 'get_booking_series', { id: made.series.id, timezone: 'UTC' });
    expect(read.timezone).toBe('UTC');
    expect(read.series.id).toBe(made.series.id);
    expect(read.series.recurrence).toMatchObject({ frequency: 'weekly', interval: 1, count: 4 });
    expect(read.series.occurrences.map((o: Json) => [o.start_time, o.status])).toEqual([
      ['2026-03-03T10:00:00Z', 'confirmed'],
      ['2026-03-10T10:00:00Z', 'confirmed'],
      ['2026-03-17T10:00:00Z', 'confirmed'],
      ['2026-03-24T10:00:00Z', 'confirmed'],
    ]);

    // The third and the following ones cancelled with `scope`.
    const third = read.series.occurrences[2].booking_id;
    const cancelled = await ok(m, 'cancel_booking', { id: third, scope: 'following' });
    expect(cancelled.booking.status).toBe('cancelled');
    const after = await ok(m, 'get_booking_series', { id: made.series.id });
    expect(after.series.occurrences.map((o: Json) => o.status)).toEqual([
      'confirmed',
      'confirmed',
      'cancelled',
      'cancelled',
    ]);
    // An unknown series: the route's 404, as a tool error.
    const missing = await refused(m, 'get_booking_series', { id: 'ser_00000000000000000000000000' });
    expect(missing.error.status).toBe(404);
  });

  it('answers a series that cannot be booked with every failing occurrence in conflicts, and books none', async () => {
    const acc = await t.account();
    const m = await connect(acc.key);
    await ok(m, 'create_booking', { ...customer, start_time: '2026-03-18T10:15:00Z' });
    const problem = await refused(m, 'create_booking', {
      ...customer,
      start_time: '2026-03-04T10:00:00Z',
      recurrence: { frequency: 'weekly', count: 3 },
      timezone: 'Europe/Berlin',
    });
    expect(problem.error).toMatchObject({ status: 409, code: 'slot_unavailable' });
    expect(problem.error.conflicts).toEqual([
      { start_time: '2026-03-18T11:00:00+01:00', end_time: '2026-03-18T11:30:00+01:00', reason: 'taken' },
    ]);
    expect(problem.next).toContain('conflicts');
    expect(problem.next).toContain('Nothing was booked');
    const listed = await ok(m, 'list_bookings', {});
    expect(listed.bookings).toHaveLength(1);
  });
});

describe('seated links through the MCP tools', () => {
  it('shows seats_remaining through get_link_slots and answers slot_full once the seats are gone', async () => {
    const acc = await t.account();
    const h = await host(acc.key);
    const l = await link(acc.key, {
      host_ids: [h],
      slug: `mcp-class-${acc.id.slice(-12)}`,
      durations: [60],
      seats: { capacity: 2, show_remaining: true },
    });
    const m = await connect(acc.key);
    const window = { slug: l.slug, from: '2026-03-03T10:00:00Z', to: '2026-03-03T12:00:00Z' };
    const before = await ok(m, 'get_link_slots', window);
    expect(before.slots[0]).toMatchObject({ start: '2026-03-03T10:00:00Z', seats_remaining: 2 });

    const seat = (n: number) => ({
      slug: l.slug,
      start_time: '2026-03-03T10:00:00Z',
      customer_email: `seat${n}@example.com`,
      customer_name: `Seat ${n}`,
    });
    const first = await ok(m, 'book_on_link', seat(1));
    expect(first.booking.status).toBe('confirmed');
    const after = await ok(m, 'get_link_slots', window);
    expect(after.slots[0]).toMatchObject({ start: '2026-03-03T10:00:00Z', seats_remaining: 1 });

    await ok(m, 'book_on_link', seat(2));
    const full = await refused(m, 'book_on_link', seat(3));
    expect(full.error).toMatchObject({ status: 409, code: 'slot_full' });
    expect(full.next).toMatch(/seat/);
    const gone = await ok(m, 'get_link_slots', window);
    expect(gone.slots.map((s: Json) => s.start)).not.toContain('2026-03-03T10:00:00Z');
  });
});
