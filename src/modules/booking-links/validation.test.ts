/**
 * What a booking link may be created with: every invalid create refused with 400 naming the field,
 * and the hosts it may name.
 */
import { describe, expect, it } from 'vitest';
import { linksApp, slug } from '../../../test/helpers/booking-links.js';

const { t, create, created, host, rowsOf } = linksApp();

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
      email: `${slug('u')}@example.com`,
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
