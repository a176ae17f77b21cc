/**
 * The booking-links module's API to other modules (get, bySlug, present) and its cache, dropped in
 * every process when a link changes.
 */
import { describe, expect, it, vi } from 'vitest';
import { startTestApp } from '../../../test/helpers/app.js';
import { extra, LINKS_ENV, linksApp, linksOf, slug } from '../../../test/helpers/booking-links.js';
import { waitUntil } from '../../../test/helpers/promises.js';

const { t, created } = linksApp();

describe('booking links: the API of other modules', () => {
  it('get and bySlug answer live links; bySlug sees a PATCH as soon as it answers', async () => {
    const acc = await t.account();
    const api = linksOf(t);
    const link = await created(acc.key, { durations: [15, 30] });
    const got = await api.get(acc.id, link.id);
    expect(got).toMatchObject({
      id: link.id,
      accountId: acc.id,
      slug: link.slug,
      defaultDuration: 15,
      durations: [15, 30],
      hostIds: [acc.id],
      assignment: 'single',
      active: true,
    });
    expect(api.present(got!)).toEqual(link);
    expect(await api.get((await t.account()).id, link.id)).toBeNull();
    expect(await api.get(acc.id, 'garbage')).toBeNull();

    // The creation's own NOTIFY may reach this process after a first read and drop its entry, as it
    // should; a read after that one is answered from the cache, with the shared object.
    const cached = await vi.waitFor(async () => {
      const first = await api.bySlug(link.slug);
      expect(await api.bySlug(link.slug)).toBe(first);
      return first;
    });
    expect(cached).toMatchObject({ id: link.id, active: true });
    expect(Object.isFrozen(cached)).toBe(true);
    const unknown = slug('later');
    expect(await api.bySlug(unknown)).toBeNull(); // absence is cached too
    expect(await api.bySlug('NOT A SLUG')).toBeNull();

    await t.call('PATCH', `/v1/booking-links/${link.id}`, { token: acc.key, body: { slug: unknown } });
    expect(await api.bySlug(link.slug)).toBeNull();
    expect(await api.bySlug(unknown)).toMatchObject({ id: link.id, slug: unknown, active: true });
    await t.call('PATCH', `/v1/booking-links/${link.id}`, { token: acc.key, body: { active: false } });
    expect(await api.bySlug(unknown)).toMatchObject({ id: link.id, active: false });
    await t.call('DELETE', `/v1/booking-links/${link.id}`, { token: acc.key });
    expect(await api.bySlug(unknown)).toBeNull();
  });

  it('drops cached links in every process when one changes (NOTIFY)', async () => {
    const t2 = await startTestApp({
      database: t.database,
      masterKey: t.masterKey,
      modules: extra,
      env: LINKS_ENV,
    });
    try {
      const acc = await t.account();
      const link = await created(acc.key);
      const other = linksOf(t2);
      expect(await other.bySlug(link.slug)).toMatchObject({ title: 'Intro call' }); // cached by the second process
      await t.call('PATCH', `/v1/booking-links/${link.id}`, { token: acc.key, body: { title: 'Renamed' } });
      // The NOTIFY reaches the second process on its own connection: observable only by asking it.
      let seen = await other.bySlug(link.slug);
      await waitUntil('the second process to drop the renamed link', async () => {
        seen = await other.bySlug(link.slug);
        return seen?.title === 'Renamed';
      });
      expect(seen?.title).toBe('Renamed');
      // a write the code did not make (SQL by hand) is announced by the trigger too
      await t.ctx.db.updateTable('booking_links').set({ active: false }).where('id', '=', link.id).execute();
      await waitUntil('the second process to drop the link changed by hand', async () => {
        seen = await other.bySlug(link.slug);
        return seen?.active === false;
      });
      expect(seen?.active).toBe(false);
    } finally {
      await t2.close();
    }
  });
});
