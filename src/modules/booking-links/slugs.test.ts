/**
 * Booking-link slugs: unique among live links in every account, under concurrent creates, freed by a
 * delete, and on a PATCH.
 */
import { describe, expect, it } from 'vitest';
import { linksApp, linksOf, slug } from '../../../test/helpers/booking-links.js';

const { t, create, created, rowsOf } = linksApp();

describe('booking links: slugs', () => {
  it('answers 409 slug_taken for a slug another live link holds, in any account', async () => {
    const acc = await t.account();
    const other = await t.account();
    const s = slug('taken');
    await created(acc.key, { slug: s });
    for (const token of [acc.key, other.key]) {
      const res = await create(token, { slug: s });
      expect(res.status).toBe(409);
      const problem = await res.json();
      expect(problem).toMatchObject({ status: 409, code: 'slug_taken' });
      expect(problem.type).toMatch(/\/errors\/conflict$/);
    }
    expect(await rowsOf(other.id)).toBe(0);
  });

  it('lets exactly one of 10 concurrent creates of one slug win', async () => {
    const acc = await t.account();
    const s = slug('race');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create(acc.key, { slug: s, title: `racer ${i}` })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(9).fill(409)]);
    for (const r of answers.filter((x) => x.status === 409)) expect((await r.json()).code).toBe('slug_taken');
    expect(await rowsOf(acc.id)).toBe(1);
  });

  it('frees the slug of a deleted link', async () => {
    const acc = await t.account();
    const s = slug('reuse');
    const first = await created(acc.key, { slug: s });
    const del = await t.call('DELETE', `/v1/booking-links/${first.id}`, { token: acc.key });
    expect(del.status).toBe(200);
    const other = await t.account();
    const second = await created(other.key, { slug: s });
    expect(second.id).not.toBe(first.id);
    expect(await linksOf(t).bySlug(s)).toMatchObject({ id: second.id, accountId: other.id });
  });

  it('answers 409 slug_taken when a PATCH renames onto a live slug', async () => {
    const acc = await t.account();
    const a = await created(acc.key);
    const b = await created(acc.key);
    const res = await t.call('PATCH', `/v1/booking-links/${b.id}`, {
      token: acc.key,
      body: { slug: a.slug },
    });
    expect(res.status).toBe(409);
    expect((await res.json()).code).toBe('slug_taken');
    const read = await (await t.call('GET', `/v1/booking-links/${b.id}`, { token: acc.key })).json();
    expect(read.booking_link.slug).toBe(b.slug);
  });
});
