import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { MODULES } from '../index.js';
import type { BookingLinksApi } from './api.js';
import { bookingLinksModule } from './module.js';
import { newHost } from '../../../test/helpers/fixtures.js';

/** The module, composed as an extra one while it is not in the MODULES list. */
const extra = MODULES.some((m) => m.name === 'bookingLinks') ? [] : [bookingLinksModule];

let t: TestApp;
beforeAll(async () => {
  // A Stripe key (never called: only links are made here), so that links may be priced.
  t = await startTestApp({ modules: extra, env: { STRIPE_SECRET_KEY: 'sk_test_links' } });
});
afterAll(() => t.close());

/** The module's API in a test app (typed here whether or not MODULES lists it). */
function linksOf(app: TestApp): BookingLinksApi {
  return (app.ctx.modules as unknown as { bookingLinks: BookingLinksApi }).bookingLinks;
}

let slugs = 0;
/** A slug no other test uses. */
const slug = (base = 'link') => `${base}-${process.pid}-${Date.now().toString(36)}-${++slugs}`;

async function create(token: string, body: Record<string, unknown>) {
  return t.call('POST', '/v1/booking-links', { token, body: { title: 'Intro call', ...body } });
}

async function created(token: string, body: Record<string, unknown> = {}): Promise<Json> {
  const res = await create(token, { slug: slug(), ...body });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  return (await res.json()).booking_link;
}

const host = (token: string, name = 'Host') => newHost(t, { token }, { display_name: name });

async function rowsOf(accountId: string): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom('booking_links')
    .select('id')
    .where('account_id', '=', accountId)
    .execute();
  return rows.length;
}

describe('booking links: create and read', () => {
  it('creates a link with the defaults (201, Location, the documented shape)', async () => {
    const acc = await t.account();
    const s = slug('intro');
    const res = await create(acc.key, { slug: s });
    expect(res.status).toBe(201);
    const { booking_link: link } = await res.json();
    expect(link).toEqual({
      id: expect.stringMatching(/^link_[0-9a-z]{26}$/),
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

describe('booking links: validation', () => {
  it('refuses every invalid create with 400 naming the field, and writes nothing', async () => {
    const acc = await t.account();
    const h1 = await host(acc.key, 'One');
    const h2 = await host(acc.key, 'Two');
    const other = await t.account();
    const theirHost = await host(other.key, 'Theirs');
    const deleted = await host(acc.key, 'Gone');
    await t.call('DELETE', `/v1/hosts/${deleted}`, { token: acc.key });
    const q = (extra: Record<string, unknown>) => ({ id: 'q1', label: 'Q', type: 'text', ...extra });
    const cases: [Record<string, unknown>, string][] = [
      [{ slug: undefined }, 'slug'],
      [{ slug: 'ab' }, 'slug'],
      [{ slug: 'Has-Capitals' }, 'slug'],
      [{ slug: 'under_score' }, 'slug'],
      [{ slug: 'x'.repeat(65) }, 'slug'],
      [{ title: undefined }, 'title'],
      [{ title: '' }, 'title'],
      [{ title: '   ' }, 'title'],
      [{ title: 'x'.repeat(201) }, 'title'],
      [{ description: 'x'.repeat(5001) }, 'description'],
      [{ duration_minutes: 4 }, 'duration_minutes'],
      [{ duration_minutes: 721 }, 'duration_minutes'],
      [{ duration_minutes: 30.5 }, 'duration_minutes'],
      [{ durations: [] }, 'durations'],
      [{ durations: [15, 3] }, 'durations.1'],
      [{ durations: [5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55] }, 'durations'],
      [{ durations: [15, 30], duration_minutes: 45 }, 'duration_minutes'],
      [{ host_ids: [] }, 'host_ids'],
      [{ host_ids: ['not-a-uuid'] }, 'host_ids.0'],
      [{ host_ids: [theirHost] }, 'host_ids'],
      [{ host_ids: [other.id] }, 'host_ids'],
      [{ host_ids: [deleted] }, 'host_ids'],
      [{ host_ids: ['00000000-0000-0000-0000-000000000000'] }, 'host_ids'],
      [{ host_ids: [h1, h1], assignment: 'collective' }, 'host_ids'],
      [{ host_ids: [h1, h2, h1.toUpperCase()], assignment: 'collective' }, 'host_ids'],
      [{ host_ids: Array.from({ length: 21 }, () => h1), assignment: 'collective' }, 'host_ids'],
      [{ host_ids: [h1, h2] }, 'assignment'],
      [{ host_ids: [h1, h2], assignment: 'single' }, 'assignment'],
      [{ assignment: 'random' }, 'assignment'],
      [{ questions: Array.from({ length: 21 }, (_, i) => q({ id: `q${i}` })) }, 'questions'],
      [{ questions: [q({ id: 'Bad-Id' })] }, 'questions.0.id'],
      [{ questions: [q({ id: 'x'.repeat(41) })] }, 'questions.0.id'],
      [{ questions: [q({}), q({ label: 'Again' })] }, 'questions.1.id'],
      [{ questions: [q({ label: '' })] }, 'questions.0.label'],
      [{ questions: [q({ label: 'x'.repeat(201) })] }, 'questions.0.label'],
      [{ questions: [q({ type: 'date' })] }, 'questions.0.type'],
      [{ questions: [q({ required: 'yes' })] }, 'questions.0.required'],
      [{ questions: [q({ type: 'select' })] }, 'questions.0.options'],
      [{ questions: [q({ type: 'select', options: [] })] }, 'questions.0.options'],
      [{ questions: [q({ type: 'select', options: [''] })] }, 'questions.0.options.0'],
      [{ questions: [q({ type: 'select', options: ['x'.repeat(201)] })] }, 'questions.0.options.0'],
      [
        { questions: [q({ type: 'select', options: Array.from({ length: 51 }, (_, i) => `o${i}`) })] },
        'questions.0.options',
      ],
      [{ questions: [q({ options: ['a'] })] }, 'questions.0.options'],
      [{ questions: [q({ colour: 'red' })] }, 'questions.0.colour'],
      [{ price_amount: 49, price_currency: 'usd' }, 'price_amount'],
      [{ price_amount: 100_000_000, price_currency: 'usd' }, 'price_amount'],
      [{ price_amount: 10.5, price_currency: 'usd' }, 'price_amount'],
      [{ price_amount: 5000 }, 'price_currency'],
      [{ price_amount: 5000, price_currency: null }, 'price_currency'],
      [{ price_currency: 'usd' }, 'price_currency'],
      [{ price_amount: 5000, price_currency: 'USD' }, 'price_currency'],
      [{ price_amount: 5000, price_currency: 'us' }, 'price_currency'],
      [{ minimum_notice_minutes: -1 }, 'minimum_notice_minutes'],
      [{ minimum_notice_minutes: 525_601 }, 'minimum_notice_minutes'],
      [{ max_days_ahead: 0 }, 'max_days_ahead'],
      [{ max_days_ahead: 731 }, 'max_days_ahead'],
      [{ active: 'yes' }, 'active'],
      [{ colour: 'red' }, 'colour'],
      [{ id: 'link_00000000000000000000000000' }, 'id'],
      [{ url: 'https://example.com' }, 'url'],
    ];
    for (const [extra, field] of cases) {
      const body = { title: 'Valid', slug: slug(), ...extra };
      const res = await t.call('POST', '/v1/booking-links', { token: acc.key, body });
      const what = JSON.stringify(extra).slice(0, 200);
      expect(res.status, what).toBe(400);
      const problem = await res.json();
      expect(problem.type, what).toMatch(/\/errors\/validation-error$/);
      expect(Object.keys(problem.errors), what).toContain(field);
    }
    expect(await rowsOf(acc.id)).toBe(0);
  });

  it('accepts the caller itself and live hosts of its account, from a session too', async () => {
    const acc = await t.account();
    const h = await host(acc.key);
    expect(await created(acc.key, { host_ids: [acc.id, h], assignment: 'collective' })).toMatchObject({
      host_ids: [acc.id, h],
    });
    const user = await t.ctx.modules.accounts.createUser({
      accountId: acc.id,
      email: `u${Date.now()}-${slugs}@example.com`,
      password: 'correct horse battery',
    });
    const signIn = await t.call('POST', '/v1/sessions', {
      body: { email: user.email, password: 'correct horse battery' },
    });
    const session = (await signIn.json()).session.token;
    // a session's default host is its user
    expect(await created(session)).toMatchObject({ host_ids: [user.id] });
    expect(await created(session, { host_ids: [user.id, h], assignment: 'round_robin' })).toMatchObject({
      host_ids: [user.id, h],
    });
    // the secret key does not act for the user (a user is not a host)
    const res = await create(acc.key, { slug: slug(), host_ids: [user.id] });
    expect(res.status).toBe(400);
    expect(Object.keys((await res.json()).errors)).toEqual(['host_ids']);
  });

  it('refuses hosts of another account with 400 errors.host_ids', async () => {
    const acc = await t.account();
    const other = await t.account();
    const theirs = await host(other.key);
    const res = await create(acc.key, { slug: slug(), host_ids: [theirs] });
    expect(res.status).toBe(400);
    const problem = await res.json();
    expect(Object.keys(problem.errors)).toEqual(['host_ids']);
    expect(problem.errors.host_ids).toContain(theirs);
    expect(await rowsOf(acc.id)).toBe(0);
  });
});

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

describe('booking links: access', () => {
  it('answers 404 for another account’s link and an unknown id, 400 for a malformed id', async () => {
    const acc = await t.account();
    const other = await t.account();
    const link = await created(acc.key);
    for (const id of ['nope', 'wh_00000000000000000000000000']) {
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        const res = await t.call(method, `/v1/booking-links/${id}`, {
          token: acc.key,
          body: method === 'PATCH' ? { title: 'mine now' } : undefined,
        });
        expect(res.status, `${method} ${id}`).toBe(400);
        expect((await res.json()).errors).toEqual({ id: 'must be an id of the form link_…' });
      }
    }
    const ids = [link.id, 'link_00000000000000000000000000'];
    for (const id of ids) {
      const path = `/v1/booking-links/${id}`;
      const token = id === link.id ? other.key : acc.key;
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { title: 'mine now' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await t.call(method, path, { token, body });
        expect(res.status, `${method} ${id}`).toBe(404);
        expect((await res.json()).type).toMatch(/\/errors\/not-found$/);
      }
    }
    // 404 comes before any check of the body
    const bad = await t.call('PATCH', `/v1/booking-links/${link.id}`, {
      token: other.key,
      body: { host_ids: [acc.id], title: ' ' },
    });
    expect(bad.status).toBe(404);
    const still = await (await t.call('GET', `/v1/booking-links/${link.id}`, { token: acc.key })).json();
    expect(still.booking_link).toEqual(link);
  });

  it('answers 403 to publishable keys and 401 without a credential on every route', async () => {
    const acc = await t.account();
    const link = await created(acc.key);
    const pkRes = await t.call('POST', '/v1/api-keys', {
      token: acc.key,
      body: { name: 'widget', key_type: 'publishable' },
    });
    const pk = (await pkRes.json()).api_key.key;
    const routes: [string, string, unknown][] = [
      ['POST', '/v1/booking-links', { title: 'x', slug: slug() }],
      ['GET', '/v1/booking-links', undefined],
      ['GET', `/v1/booking-links/${link.id}`, undefined],
      ['PATCH', `/v1/booking-links/${link.id}`, { title: 'x' }],
      ['DELETE', `/v1/booking-links/${link.id}`, undefined],
    ];
    for (const [method, path, body] of routes) {
      const res = await t.call(method, path, { token: pk, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await res.json()).type).toMatch(/\/errors\/forbidden$/);
      expect((await t.call(method, path, { body })).status, `${method} ${path}`).toBe(401);
    }
    expect(await rowsOf(acc.id)).toBe(1);
  });

  it('documents every route in OpenAPI under the Booking links tag', async () => {
    const doc = await (await t.call('GET', '/v1/openapi.json')).json();
    const ops: [string, string][] = [
      ['/v1/booking-links', 'post'],
      ['/v1/booking-links', 'get'],
      ['/v1/booking-links/{id}', 'get'],
      ['/v1/booking-links/{id}', 'patch'],
      ['/v1/booking-links/{id}', 'delete'],
    ];
    for (const [path, method] of ops) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.tags).toEqual(['Booking links']);
      expect(op.summary).toBeTruthy();
      for (const code of ['400', '401', '403', '404', '429']) {
        expect(op.responses[code], `${method} ${path} ${code}`).toBeDefined();
      }
    }
    expect(doc.paths['/v1/booking-links'].post.responses['201']).toBeDefined();
    expect(doc.paths['/v1/booking-links'].post.responses['409']).toBeDefined();
    expect(doc.paths['/v1/booking-links'].post.responses['422']).toBeDefined();
    expect(doc.paths['/v1/booking-links/{id}'].patch.responses['409']).toBeDefined();
  });
});

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
      env: { STRIPE_SECRET_KEY: 'sk_test_links' },
    });
    try {
      const acc = await t.account();
      const link = await created(acc.key);
      const other = linksOf(t2);
      expect(await other.bySlug(link.slug)).toMatchObject({ title: 'Intro call' }); // cached by the second process
      await t.call('PATCH', `/v1/booking-links/${link.id}`, { token: acc.key, body: { title: 'Renamed' } });
      let seen = await other.bySlug(link.slug);
      for (let i = 0; i < 40 && seen?.title !== 'Renamed'; i++) {
        await new Promise((r) => setTimeout(r, 25));
        seen = await other.bySlug(link.slug);
      }
      expect(seen?.title).toBe('Renamed');
      // a write the code did not make (SQL by hand) is announced by the trigger too
      await t.ctx.db.updateTable('booking_links').set({ active: false }).where('id', '=', link.id).execute();
      seen = await other.bySlug(link.slug);
      for (let i = 0; i < 40 && seen?.active !== false; i++) {
        await new Promise((r) => setTimeout(r, 25));
        seen = await other.bySlug(link.slug);
      }
      expect(seen?.active).toBe(false);
    } finally {
      await t2.close();
    }
  });
});
