/**
 * `get_available_slots` read through the availability API (service.ts `readDirect`), not through an
 * in-process request: the same slots as the REST route, a repeated question answered with the
 * result remembered for the availability service's remembered answer, a new booking shown at the
 * next call, and what the route refuses (its schema, its access rule) answered with the route's own
 * problem.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Json, TestApp } from '../../../test/helpers/app.js';
import { postToolCall, startBerlinHost } from '../../../test/helpers/mcp.js';

let t: TestApp;
let key: string;
let host: string;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ t, key, host, close } = await startBerlinHost());
});
afterAll(async () => {
  await close?.();
});

async function slotsTool(token: string, args: Record<string, unknown>): Promise<Json> {
  const res = await postToolCall(t.url, token, 'get_available_slots', args, { client: 'direct-test' });
  expect(res.status).toBe(200);
  return ((await res.json()) as Json).result;
}

const WINDOW = { from: '2026-10-22T00:00:00+02:00', to: '2026-10-24T00:00:00+02:00' };

async function restSlots(): Promise<{ slots: { start: string; end: string }[] }> {
  const q = `principal_id=${host}&duration_minutes=60&from=${encodeURIComponent(WINDOW.from)}&to=${encodeURIComponent(WINDOW.to)}&timezone=UTC`;
  return (await t.call('GET', `/v1/availability/slots?${q}`, { token: key })).json();
}

describe('get_available_slots through the availability API', () => {
  it('answers the route’s slots without an inner request, remembered until a booking changes them', async () => {
    const read = vi.spyOn(t.ctx.modules.availability, 'slots');
    try {
      const args = { principal_id: host, duration_minutes: 60, ...WINDOW, timezone: 'UTC' };
      const first = await slotsTool(key, args);
      expect(first.isError).toBeUndefined();
      const rest = await restSlots();
      const starts = (first.structuredContent.slots as { start: string }[]).map((s) => Date.parse(s.start));
      expect(starts).toEqual(rest.slots.map((s) => Date.parse(s.start)));
      expect(starts.length).toBeGreaterThan(0);
      // Asked again (the service keeps an answer from its second asking): the same result.
      const second = await slotsTool(key, args);
      const third = await slotsTool(key, args);
      expect(second).toEqual(first);
      expect(third).toEqual(first);
      // Three tool calls and the REST request, each answered by the API's answer (a tool call whose
      // read failed would be left to the route: a fifth read).
      expect(read).toHaveBeenCalledTimes(4);
      for (const r of read.mock.results) await expect(r.value).resolves.toBeDefined();

      // A booking on the first slot: the next tool call no longer offers it.
      const taken = (first.structuredContent.slots as { start: string }[])[0]!.start;
      const b = await t.call('POST', '/v1/bookings', {
        token: key,
        body: {
          principal_id: host,
          start_time: taken,
          duration_minutes: 60,
          customer_email: 'ada@example.com',
          customer_name: 'Ada',
        },
      });
      expect(b.status, await b.clone().text()).toBe(201);
      const after = await slotsTool(key, args);
      const afterStarts = (after.structuredContent.slots as { start: string }[]).map((s) => s.start);
      expect(afterStarts).not.toContain(taken);
      expect(afterStarts.map(Date.parse)).toEqual((await restSlots()).slots.map((x) => Date.parse(x.start)));
      expect(afterStarts.length).toBeLessThan(starts.length);
    } finally {
      read.mockRestore();
    }
  });

  it('answers what the route refuses with the route’s own problem', async () => {
    // The schema: a duration below the minimum (a 400 naming the field).
    // Asked twice: the second refusal comes from the remembered check, with the same problem.
    for (let i = 0; i < 2; i++) {
      const short = await slotsTool(key, { principal_id: host, duration_minutes: 3, ...WINDOW });
      expect(short.isError).toBe(true);
      const shortProblem = JSON.parse(short.content[0].text).error;
      expect(shortProblem.status).toBe(400);
      expect(JSON.stringify(shortProblem)).toContain('duration_minutes');
    }
    // The same values as text and as a number are the same question; a checked query is not
    // shared between calls (the read gets its own copy).
    const asText = await slotsTool(key, { principal_id: host, duration_minutes: '45', ...WINDOW });
    const asNumber = await slotsTool(key, { principal_id: host, duration_minutes: 45, ...WINDOW });
    expect(asText.isError).toBeUndefined();
    expect(asNumber).toEqual(asText);
    // The service's cross-field check: neither principal_id nor business_id.
    const none = await slotsTool(key, { duration_minutes: 30, ...WINDOW });
    expect(JSON.parse(none.content[0].text).error.status).toBe(400);
    // The access rule: another account's host is not readable.
    const other = await t.account();
    const refused = await slotsTool(other.key, { principal_id: host, duration_minutes: 30, ...WINDOW });
    expect(refused.isError).toBe(true);
    expect(JSON.parse(refused.content[0].text).error.status).toBe(403);
  });
});
