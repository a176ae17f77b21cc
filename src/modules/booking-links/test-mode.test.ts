/**
 * Booking links in test mode (docs/api.md#test-mode): a link has the mode of the key that made it, a
 * caller of the other mode sees it as another account's link (404, absent from lists), it takes hosts
 * of its own mode only, slugs stay one namespace for both modes, and the look-ups the public surface
 * uses answer the link's mode and account.
 */
import { describe, expect, it } from 'vitest';
import { linksApp, linksOf, slug } from '../../../test/helpers/booking-links.js';
import { testKeyFor } from '../../../test/helpers/test-mode.js';

const { t, create, created, host, rowsOf } = linksApp();

/** An account's live key and a test key of it. */
async function keys() {
  const acc = await t.account();
  const test = (await testKeyFor(t, acc.key)).key;
  return { acc, test };
}

describe('booking links in test mode', () => {
  it('makes a link in the key’s mode, shows `livemode`, and keeps each mode’s links from the other both ways', async () => {
    const { acc, test } = await keys();
    const live = await created(acc.key);
    const mine = await created(test);
    expect(live.livemode).toBe(true);
    expect(mine.livemode).toBe(false);
    const row = await t.ctx.db
      .selectFrom('booking_links')
      .select('livemode')
      .where('id', '=', mine.id)
      .executeTakeFirstOrThrow();
    expect(row.livemode).toBe(false);

    for (const [token, theirs, own] of [
      [acc.key, mine, live],
      [test, live, mine],
    ] as const) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { title: 'Taken over' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await t.call(method, `/v1/booking-links/${theirs.id}`, { token, body });
        expect(res.status, `${method} from the other mode`).toBe(404);
        expect((await res.json()).type).toMatch(/\/errors\/not-found$/);
      }
      const list = await (await t.call('GET', '/v1/booking-links', { token })).json();
      expect(list.booking_links).toEqual([own]);
      const read = await (await t.call('GET', `/v1/booking-links/${own.id}`, { token })).json();
      expect(read.booking_link).toEqual(own);
    }
    expect(await rowsOf(acc.id)).toBe(2);
  });

  it('lets a test key update and delete its test link', async () => {
    const { test } = await keys();
    const mine = await created(test);
    const patched = await t.call('PATCH', `/v1/booking-links/${mine.id}`, {
      token: test,
      body: { title: 'Renamed' },
    });
    expect(patched.status).toBe(200);
    expect((await patched.json()).booking_link).toMatchObject({ title: 'Renamed', livemode: false });
    const deleted = await t.call('DELETE', `/v1/booking-links/${mine.id}`, { token: test });
    expect(deleted.status).toBe(200);
    expect((await deleted.json()).booking_link).toMatchObject({ livemode: false, active: false });
    expect((await (await t.call('GET', '/v1/booking-links', { token: test })).json()).booking_links).toEqual(
      [],
    );
  });

  it('takes hosts of the link’s mode only (400 host_ids otherwise); the caller itself in both', async () => {
    const { acc, test } = await keys();
    const liveHost = await host(acc.key, 'Live');
    const testHost = await host(test, 'Test');
    for (const [token, theirs] of [
      [test, liveHost],
      [acc.key, testHost],
    ] as const) {
      const res = await create(token, { slug: slug(), host_ids: [theirs] });
      expect(res.status).toBe(400);
      expect(Object.keys((await res.json()).errors)).toEqual(['host_ids']);
      // and not by a PATCH either
      const link = await created(token);
      const patch = await t.call('PATCH', `/v1/booking-links/${link.id}`, {
        token,
        body: { host_ids: [theirs] },
      });
      expect(patch.status).toBe(400);
    }
    expect(await created(test, { host_ids: [testHost, acc.id], assignment: 'collective' })).toMatchObject({
      host_ids: [testHost, acc.id],
      livemode: false,
    });
    expect(await created(test)).toMatchObject({ host_ids: [acc.id], livemode: false });
    expect(await created(acc.key, { host_ids: [liveHost] })).toMatchObject({ livemode: true });
  });

  it('keeps one slug namespace for both modes (409 slug_taken across modes)', async () => {
    const { acc, test } = await keys();
    const s = slug('shared');
    await created(test, { slug: s });
    const taken = await create(acc.key, { slug: s });
    expect(taken.status).toBe(409);
    expect((await taken.json()).code).toBe('slug_taken');
    const live = await created(acc.key);
    const mine = await created(test);
    const renamed = await t.call('PATCH', `/v1/booking-links/${mine.id}`, {
      token: test,
      body: { slug: live.slug },
    });
    expect(renamed.status).toBe(409);
  });

  it('answers the link’s mode and account to the look-ups of the public surface, by slug and by id', async () => {
    const { acc, test } = await keys();
    const mine = await created(test);
    const live = await created(acc.key);
    const links = linksOf(t);
    expect(await links.bySlug(mine.slug)).toMatchObject({ id: mine.id, livemode: false, accountId: acc.id });
    expect(await links.bySlug(live.slug)).toMatchObject({ id: live.id, livemode: true, accountId: acc.id });
    // cached answers say the same
    expect((await links.bySlug(mine.slug))?.livemode).toBe(false);
    expect(await links.get(acc.id, mine.id)).toMatchObject({ livemode: false, accountId: acc.id });
    expect(await links.get(acc.id, mine.id, false)).toMatchObject({ id: mine.id });
    expect(await links.get(acc.id, mine.id, true)).toBeNull();
    expect(await links.get(acc.id, live.id, false)).toBeNull();
    expect(links.present((await links.get(acc.id, mine.id))!)).toMatchObject({ livemode: false });
  });

  it('refuses a priced test link without a Stripe test key (422 payments_not_configured), never using the live key', async () => {
    const { acc, test } = await keys();
    const res = await create(test, { slug: slug(), price_amount: 5000, price_currency: 'eur' });
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe('payments_not_configured');
    const free = await created(test);
    const patch = await t.call('PATCH', `/v1/booking-links/${free.id}`, {
      token: test,
      body: { price_amount: 5000, price_currency: 'eur' },
    });
    expect(patch.status).toBe(422);
    // the live key on this server prices live links
    expect(await created(acc.key, { price_amount: 5000, price_currency: 'eur' })).toMatchObject({
      price_amount: 5000,
    });
  });

  it('documents `livemode` as a required field of BookingLink', async () => {
    const doc = await (await t.call('GET', '/v1/openapi.json')).json();
    expect(doc.components.schemas.BookingLink.required).toContain('livemode');
  });
});
