/**
 * The setup the booking-link tests share (src/modules/booking-links/*.test.ts): one app per file with the
 * module composed and a Stripe key (never called: only links are made, so that links may be priced),
 * and the calls the tests are written in.
 *
 * Lives under test/ rather than beside the tests: a non-test file under src/ is built into dist/ and
 * may touch only its module's tables (docs/architecture.md, house rules).
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { BookingLinksApi } from '../../src/modules/booking-links/api.js';
import { bookingLinksModule } from '../../src/modules/booking-links/module.js';
import { MODULES } from '../../src/modules/index.js';
import { type Json, startTestApp, type TestApp } from './app.js';
import { newHost } from './fixtures.js';
import { startedLater } from './started.js';

/** The module, composed as an extra one while it is not in the MODULES list. */
export const extra = MODULES.some((m) => m.name === 'bookingLinks') ? [] : [bookingLinksModule];

/** What the booking-link tests' apps are started with (a second process on the same database too). */
export const LINKS_ENV = { STRIPE_SECRET_KEY: 'sk_test_links' };

/** The module's API in a test app (typed here whether or not MODULES lists it). */
export function linksOf(app: TestApp): BookingLinksApi {
  return (app.ctx.modules as unknown as { bookingLinks: BookingLinksApi }).bookingLinks;
}

let slugs = 0;
/** A slug no other test uses. */
export const slug = (base = 'link') => `${base}-${process.pid}-${Date.now().toString(36)}-${++slugs}`;

/**
 * One app for the calling test file (started before its tests, closed after them) and the helpers
 * bound to it; `t` stands for the app once it has started.
 */
export function linksApp() {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp({ modules: extra, env: LINKS_ENV });
  });
  afterAll(() => app?.close());
  const t = startedLater(() => app);

  function create(token: string, body: Record<string, unknown>) {
    return t.call('POST', '/v1/booking-links', { token, body: { title: 'Intro call', ...body } });
  }

  async function created(token: string, body: Record<string, unknown> = {}): Promise<Json> {
    const res = await create(token, { slug: slug(), ...body });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    return (await res.json()).booking_link;
  }

  const host = (token: string, name = 'Host') => newHost(t, { token }, { display_name: name });

  /** How many links the account has stored, deleted ones included. */
  async function rowsOf(accountId: string): Promise<number> {
    const rows = await t.ctx.db
      .selectFrom('booking_links')
      .select('id')
      .where('account_id', '=', accountId)
      .execute();
    return rows.length;
  }

  return { t, create, created, host, rowsOf };
}
