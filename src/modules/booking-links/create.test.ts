/**
 * Creating and reading booking links (POST and GET /v1/booking-links, GET /v1/booking-links/:id):
 * the documented shape, every field stored, idempotent replays, the list with its cursor.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { linksApp, slug } from '../../../test/helpers/booking-links.js';

const { t, create, created, host, rowsOf } = linksApp();

describe('booking links: create and read', () => {
  it('creates a link with the defaults (201, Location, the documented shape)', async () => {
    const acc = await t.account();
    const s = slug('intro');
    const res = await create(acc.key, { slug: s });
    expect(res.status).toBe(201);
    const { booking_link: link } = await res.json();
    expect(link).toEqual({
      id: expect.stringMatching(/^link_[0-9a-z]{26}$/),
      livemode: true,
      slug: s,
      title: 'Intro call',
      description: '',
      duration_minutes: 30,
      durations: [30],
      host_ids: [acc.id],
      assignment: 'single',
      questions: [],
      price_amount: null,
      price_currency: null,
      minimum_notice_minutes: null,
      max_days_ahead: null,
      active: true,
      recurrence: null,
      seats: null,
      url: `${t.url}/book/${s}`,
      created_at: expect.any(String),
      updated_at: link.created_at,
      deleted_at: null,
    });
    expect(new Date(link.created_at).toISOString()).toBe(link.created_at);
    expect(res.headers.get('location')).toBe(`/v1/booking-links/${link.id}`);
    const read = await t.call('GET', `/v1/booking-links/${link.id}`, { token: acc.key });
    expect(read.status).toBe(200);
    expect((await read.json()).booking_link).toEqual(link);
  });

  it('stores every field as given, durations distinct and sorted', async () => {
    const acc = await t.account();
    const h1 = await host(acc.key, 'Ann');
    const h2 = await host(acc.key, 'Ben');
    const link = await created(acc.key, {
      title: '  Consultation  ',
      description: 'Talk to us',
      durations: [60, 15, 30, 15],
      duration_minutes: 30,
      host_ids: [h2, h1.toUpperCase()],
      assignment: 'round_robin',
      questions: [
        { id: 'company', label: 'Company', type: 'text' },
        { id: 'size', label: 'Team size', type: 'select', required: true, options: ['1-10', '11+'] },
      ],
      price_amount: 5000,
      price_currency: 'eur',
      minimum_notice_minutes: 120,
      max_days_ahead: 30,
      active: false,
    });
    expect(link).toMatchObject({
      title: 'Consultation',
      description: 'Talk to us',
      durations: [15, 30, 60],
      duration_minutes: 30,
      host_ids: [h2, h1],
      assignment: 'round_robin',
      questions: [
        { id: 'company', label: 'Company', type: 'text', required: false },
        { id: 'size', label: 'Team size', type: 'select', required: true, options: ['1-10', '11+'] },
      ],
      price_amount: 5000,
      price_currency: 'eur',
      minimum_notice_minutes: 120,
      max_days_ahead: 30,
      active: false,
    });
    expect(link.questions[0]).not.toHaveProperty('options');
    // only durations: the first one given is the default
    expect(await created(acc.key, { durations: [45, 20] })).toMatchObject({
      duration_minutes: 45,
      durations: [20, 45],
    });
    // only duration_minutes: the one duration offered
    expect(await created(acc.key, { duration_minutes: 90 })).toMatchObject({
      duration_minutes: 90,
      durations: [90],
    });
  });

  it('replays a create with the same Idempotency-Key instead of creating a second link', async () => {
    const acc = await t.account();
    const body = { title: 'Once', slug: slug() };
    const send = () =>
      t.call('POST', '/v1/booking-links', { token: acc.key, body, headers: { 'idempotency-key': 'link-1' } });
    const first = await send();
    const second = await send();
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(await first.text());
    expect(await rowsOf(acc.id)).toBe(1);
  });

  it('lists live links newest first with a cursor; other accounts see none', async () => {
    const acc = await t.account();
    const ids: string[] = [];
    for (const title of ['a', 'b', 'c']) ids.push((await created(acc.key, { title })).id);
    const p1 = await (await t.call('GET', '/v1/booking-links?limit=2', { token: acc.key })).json();
    expect(p1.booking_links.map((l: Json) => l.title)).toEqual(['c', 'b']);
    expect(p1.pagination.has_more).toBe(true);
    const p2 = await (
      await t.call('GET', `/v1/booking-links?limit=2&cursor=${p1.pagination.next_cursor}`, {
        token: acc.key,
      })
    ).json();
    expect(p2.booking_links.map((l: Json) => l.title)).toEqual(['a']);
    expect(p2.pagination).toEqual({ next_cursor: null, has_more: false });

    const forged = await t.call('GET', '/v1/booking-links?cursor=bm9wZQ', { token: acc.key });
    expect(forged.status).toBe(400);
    expect(Object.keys((await forged.json()).errors)).toEqual(['cursor']);

    const other = await t.account();
    const theirs = await (await t.call('GET', '/v1/booking-links', { token: other.key })).json();
    expect(theirs.booking_links).toEqual([]);
    const all = await (await t.call('GET', '/v1/booking-links', { token: acc.key })).json();
    expect(all.booking_links.map((l: Json) => l.id)).toEqual([...ids].reverse());
  });
});
