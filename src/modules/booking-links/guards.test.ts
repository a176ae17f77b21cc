/**
 * Who gets an answer from the booking-link routes (another account's link, unknown and malformed
 * ids, publishable keys, no credential) and the routes' OpenAPI documentation.
 */
import { describe, expect, it } from 'vitest';
import { linksApp, slug } from '../../../test/helpers/booking-links.js';

const { t, created, rowsOf } = linksApp();

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
