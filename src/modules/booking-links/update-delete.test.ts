/**
 * PATCH and DELETE /v1/booking-links/:id: patches keep the rules, invalid ones change nothing, a
 * delete is soft.
 */
import { describe, expect, it } from 'vitest';
import { linksApp, linksOf, slug } from '../../../test/helpers/booking-links.js';

const { t, created, host } = linksApp();

describe('booking links: update and delete', () => {
  it('patches fields, keeping the rules', async () => {
    const acc = await t.account();
    const h1 = await host(acc.key);
    const h2 = await host(acc.key);
    const link = await created(acc.key);
    const path = `/v1/booking-links/${link.id}`;
    const patch = async (body: Record<string, unknown>) => {
      const res = await t.call('PATCH', path, { token: acc.key, body });
      expect(res.status, JSON.stringify(body)).toBe(200);
      return (await res.json()).booking_link;
    };
    const s = slug('renamed');
    const p1 = await patch({ slug: s, title: 'New title', description: 'd', active: false });
    expect(p1).toMatchObject({
      slug: s,
      title: 'New title',
      description: 'd',
      active: false,
      url: `${t.url}/book/${s}`,
    });
    expect(p1.updated_at >= link.updated_at).toBe(true);
    // a single duration is replaced by duration_minutes alone
    expect(await patch({ duration_minutes: 45 })).toMatchObject({ duration_minutes: 45, durations: [45] });
    // durations alone: the default stays if still offered, else the first one given
    expect(await patch({ durations: [60, 45, 15] })).toMatchObject({
      duration_minutes: 45,
      durations: [15, 45, 60],
    });
    expect(await patch({ durations: [90, 20] })).toMatchObject({ duration_minutes: 90, durations: [20, 90] });
    expect(await patch({ duration_minutes: 20 })).toMatchObject({
      duration_minutes: 20,
      durations: [20, 90],
    });
    expect(await patch({ host_ids: [h1, h2], assignment: 'collective' })).toMatchObject({
      host_ids: [h1, h2],
      assignment: 'collective',
    });
    expect(await patch({ price_amount: 1000, price_currency: 'usd' })).toMatchObject({
      price_amount: 1000,
      price_currency: 'usd',
    });
    expect(await patch({ price_amount: 2500 })).toMatchObject({ price_amount: 2500, price_currency: 'usd' });
    // making it free clears the currency
    expect(await patch({ price_amount: null })).toMatchObject({ price_amount: null, price_currency: null });
    expect(
      await patch({
        minimum_notice_minutes: 60,
        max_days_ahead: 14,
        questions: [{ id: 'a', label: 'A', type: 'email' }],
      }),
    ).toMatchObject({
      minimum_notice_minutes: 60,
      max_days_ahead: 14,
      questions: [{ id: 'a', label: 'A', type: 'email', required: false }],
    });
    expect(await patch({ minimum_notice_minutes: null, max_days_ahead: null })).toMatchObject({
      minimum_notice_minutes: null,
      max_days_ahead: null,
    });
    const final = await patch({ host_ids: [h2], assignment: 'single', active: true });
    expect(final).toMatchObject({ host_ids: [h2], assignment: 'single', active: true });
    expect((await (await t.call('GET', path, { token: acc.key })).json()).booking_link).toEqual(final);
  });

  it('refuses invalid patches with 400 naming the field, and changes nothing', async () => {
    const acc = await t.account();
    const h1 = await host(acc.key);
    const h2 = await host(acc.key);
    const other = await t.account();
    const theirs = await host(other.key);
    const link = await created(acc.key, {
      durations: [15, 30],
      host_ids: [h1, h2],
      assignment: 'round_robin',
      price_amount: 900,
      price_currency: 'gbp',
    });
    const path = `/v1/booking-links/${link.id}`;
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'body'],
      [{ id: 'link_00000000000000000000000000' }, 'id'],
      [{ slug: 'NO' }, 'slug'],
      [{ title: ' ' }, 'title'],
      [{ title: null }, 'title'],
      [{ duration_minutes: 45 }, 'duration_minutes'],
      [{ durations: [60], duration_minutes: 30 }, 'duration_minutes'],
      [{ durations: [1000] }, 'durations.0'],
      [{ host_ids: [theirs] }, 'host_ids'],
      [{ host_ids: [] }, 'host_ids'],
      [{ assignment: 'single' }, 'assignment'],
      [{ host_ids: [h1, h2], assignment: 'single' }, 'assignment'],
      [{ questions: [{ id: 'a', label: 'A', type: 'select' }] }, 'questions.0.options'],
      [{ price_currency: null }, 'price_currency'],
      [{ price_amount: null, price_currency: 'gbp' }, 'price_currency'],
      [{ price_amount: 10 }, 'price_amount'],
      [{ max_days_ahead: 0 }, 'max_days_ahead'],
      [{ active: null }, 'active'],
      [{ created_at: '2020-01-01T00:00:00Z' }, 'created_at'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('PATCH', path, { token: acc.key, body });
      const what = JSON.stringify(body);
      expect(res.status, what).toBe(400);
      expect(Object.keys((await res.json()).errors), what).toContain(field);
    }
    const read = await (await t.call('GET', path, { token: acc.key })).json();
    expect(read.booking_link).toEqual(link);
  });

  it('soft-deletes a link: 200 with its final state, then 404 everywhere', async () => {
    const acc = await t.account();
    const link = await created(acc.key);
    const path = `/v1/booking-links/${link.id}`;
    const del = await t.call('DELETE', path, { token: acc.key });
    expect(del.status).toBe(200);
    const gone = (await del.json()).booking_link;
    expect(gone).toMatchObject({ id: link.id, slug: link.slug, active: false });
    expect(new Date(gone.deleted_at).toISOString()).toBe(gone.deleted_at);
    expect(gone.updated_at).toBe(gone.deleted_at);
    expect((await t.call('GET', path, { token: acc.key })).status).toBe(404);
    expect((await t.call('PATCH', path, { token: acc.key, body: { title: 'x' } })).status).toBe(404);
    expect((await t.call('DELETE', path, { token: acc.key })).status).toBe(404);
    const list = await (await t.call('GET', '/v1/booking-links', { token: acc.key })).json();
    expect(list.booking_links).toEqual([]);
    expect(await linksOf(t).get(acc.id, link.id)).toBeNull();
    expect(await linksOf(t).bySlug(link.slug)).toBeNull();
    // the row stays
    const row = await t.ctx.db
      .selectFrom('booking_links')
      .selectAll()
      .where('id', '=', link.id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
  });
});
