/**
 * The console service's own rules (README.md, Console), over the real store: a setup link works once
 * and expires, an unknown token consumes nothing; the CSRF proof belongs to one session; the
 * per-session allowance refuses past its hourly count and starts again the next hour.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { FakeClock } from '../../platform/clock.js';
import { CONSOLE_REQUESTS_PER_HOUR, ConsoleService, SETUP_TTL_MS } from './service.js';

let t: TestApp;
let clock: FakeClock;
let service: ConsoleService;
beforeAll(async () => {
  t = await startTestApp();
  clock = new FakeClock(Date.now());
  service = new ConsoleService(t.ctx.db, clock, { accounts: t.ctx.modules.accounts }, randomBytes(32));
});
afterAll(() => t.close());

const tokenOf = (path: string | null) => new URL(path ?? '', 'http://x').searchParams.get('token') ?? '';
const body = (token: string) => ({
  token,
  account_name: 'Once',
  email: `once-${Date.now()}@example.com`,
  password: 'correct horse battery staple',
});

describe('console setup links', () => {
  it('refuses an unknown or expired token without using up a live one, and works once', async () => {
    const expired = tokenOf(await service.setupLink());
    clock.advance(SETUP_TTL_MS + 1000);
    expect(await service.setupState(expired)).toBe('expired');
    const live = tokenOf(await service.setupLink());
    await expect(service.completeSetup(body(expired))).rejects.toMatchObject({ status: 410 });
    await expect(service.completeSetup(body('x'.repeat(43)))).rejects.toMatchObject({ status: 410 });
    expect(await service.setupState(live)).toBe('valid');

    const done = await service.completeSetup({ ...body(live), name: 'Olive Owner' });
    expect(done.key).toMatch(/^svc_sk_/);
    // The owner is named as the form said: how customers and the network see them.
    const me = await (await t.call('GET', '/v1/me', { token: done.session.token })).json();
    expect(me.user).toMatchObject({ name: 'Olive Owner', display_name: 'Olive Owner' });
    expect(await service.setupState(live)).toBe('used');
    // Once an account exists: no new link, and no second setup.
    expect(await service.setupLink()).toBeNull();
    await expect(service.completeSetup(body(live))).rejects.toMatchObject({ status: 409 });
  });
});

describe('console CSRF proof', () => {
  it('is the session’s own: another session’s, a tampered or a missing proof fails', () => {
    const proof = service.csrfFor('session-a');
    expect(service.csrfValid('session-a', proof)).toBe(true);
    expect(service.csrfValid('session-b', proof)).toBe(false);
    expect(service.csrfValid('session-a', `${proof.slice(0, -1)}${proof.endsWith('A') ? 'B' : 'A'}`)).toBe(
      false,
    );
    expect(service.csrfValid('session-a', undefined)).toBe(false);
  });
});

describe('console allowance', () => {
  it('allows a session its hourly count, refuses the next, and starts again the next hour', () => {
    clock.set('2026-06-01T10:00:00.000Z');
    for (let i = 0; i < CONSOLE_REQUESTS_PER_HOUR; i++) expect(service.take('busy')).toBe(true);
    expect(service.take('busy')).toBe(false);
    expect(service.take('other')).toBe(true);
    clock.advance(3_600_000);
    expect(service.take('busy')).toBe(true);
  });
});
