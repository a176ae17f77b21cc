/**
 * The fixtures most test files need — a host, a booking, a signed-in user — written once. Each takes
 * the app it talks to: a TestApp, or `serverAt(url)` for a spawned `kairos serve` process.
 */
import { expect } from 'vitest';
import { type Json, serverAt, type TestApp, type TestResponse } from './app.js';

export { serverAt };

/** Anything with the TestApp's `call`: the in-process app or a server process (`serverAt`). */
export type Caller = Pick<TestApp, 'call'>;

/** The password `signIn` uses unless told otherwise (the one the test files give their users). */
export const PASSWORD = 'correct horse battery';

/**
 * A new host; returns its principal id. With `token`: POST /v1/hosts (expects 201) with
 * `{ display_name: 'Host', ...body }`. With `accountId`: straight through the principals module's
 * API (no HTTP), for tests that set up data behind the routes.
 */
export async function newHost(
  app: Caller,
  by: { token: string },
  body?: Record<string, unknown>,
): Promise<string>;
export async function newHost(
  app: Pick<TestApp, 'ctx'>,
  by: { accountId: string },
  body?: Partial<HostInput>,
): Promise<string>;
export async function newHost(
  app: Caller | Pick<TestApp, 'ctx'>,
  by: { token: string } | { accountId: string },
  body: Record<string, unknown> = {},
): Promise<string> {
  if ('accountId' in by) {
    const input = { display_name: 'Host', ...body } as HostInput;
    const host = await (app as Pick<TestApp, 'ctx'>).ctx.modules.principals.createHost(by.accountId, input);
    return host.principal_id;
  }
  const res = await (app as Caller).call('POST', '/v1/hosts', {
    token: by.token,
    body: { display_name: 'Host', ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).host.principal_id;
}

/** What the principals module's `createHost` takes. */
type HostInput = Parameters<TestApp['ctx']['modules']['principals']['createHost']>[1];

/** Who a booking is made for: a host by an account's key, or a booking link's public page. */
export type BookingTarget = { token: string; principal_id: string } | { slug: string };

/**
 * POST /v1/bookings (`{ token, principal_id }`) or POST /v1/public/links/:slug/bookings (`{ slug }`)
 * with `body` (start_time, customer_…, notes…); the raw answer, for tests that assert on refusals.
 */
export function postBooking(
  app: Caller,
  target: BookingTarget,
  body: Record<string, unknown>,
): Promise<TestResponse> {
  if ('slug' in target) return app.call('POST', `/v1/public/links/${target.slug}/bookings`, { body });
  return app.call('POST', '/v1/bookings', {
    token: target.token,
    body: { principal_id: target.principal_id, ...body },
  });
}

/** As `postBooking`, expecting 201; returns the booking. */
export async function book(app: Caller, target: BookingTarget, body: Record<string, unknown>): Promise<Json> {
  const res = await postBooking(app, target, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).booking;
}

/** The start of the first open slot of a booking link's public page in the next 30 days. */
export async function firstSlot(app: Caller, slug: string): Promise<string> {
  const from = new Date().toISOString();
  const to = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const slots = await (
    await app.call('GET', `/v1/public/links/${slug}/availability?from=${from}&to=${to}`)
  ).json();
  return slots.slots[0].start;
}

/** POST /v1/sessions (expects 201); the session token and the user's id. */
export async function signIn(
  app: Caller,
  email: string,
  password: string = PASSWORD,
): Promise<{ token: string; id: string }> {
  const res = await app.call('POST', '/v1/sessions', { body: { email, password } });
  expect(res.status, await res.clone().text()).toBe(201);
  const { session } = await res.json();
  return { token: session.token, id: session.user.id };
}

let signedInUsers = 0;

/** A signed-in user: its account's id and secret key, the user's principal id, session token and e-mail. */
export interface SignedInUser {
  accountId: string;
  key: string;
  keyId: string;
  id: string;
  token: string;
  email: string;
}

/**
 * A user of a new account (or of `accountId`), signed in with PASSWORD. `email` defaults to a fresh
 * address under `prefix`.
 */
export async function signedInUser(
  t: TestApp,
  opts: { email?: string; prefix?: string } = {},
): Promise<SignedInUser> {
  const acc = await t.account();
  const email = opts.email ?? `${opts.prefix ?? 'user'}${++signedInUsers}-${Date.now()}@example.com`;
  await t.ctx.modules.accounts.createUser({ accountId: acc.id, email, password: PASSWORD });
  const { token, id } = await signIn(t, email);
  return { accountId: acc.id, key: acc.key, keyId: acc.keyId, id, token, email };
}
