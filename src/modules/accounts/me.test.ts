import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Kysely, sql } from 'kysely';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import * as m0023 from '../../db/migrations/0023_user_names.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /v1/me', () => {
  it('returns the account and credential behind a secret key', async () => {
    const acc = await t.account({ name: 'Acme' });
    const res = await t.call('GET', '/v1/me', { token: acc.key });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ principal_id: acc.id, credential: 'secret', key_id: acc.keyId, user: null });
    expect(body.account).toMatchObject({ id: acc.id, name: 'Acme', plan: 'enterprise' });
  });

  it('signs a user in, answers for the session, and rejects the token after sign-out', async () => {
    const acc = await t.account();
    await t.ctx.modules.accounts.createUser({
      accountId: acc.id,
      email: 'ana@example.com',
      password: 'correct horse battery',
    });
    const bad = await t.call('POST', '/v1/sessions', {
      body: { email: 'ana@example.com', password: 'wrong password!' },
    });
    expect(bad.status).toBe(401);
    const res = await t.call('POST', '/v1/sessions', {
      body: { email: 'ANA@example.com', password: 'correct horse battery' },
    });
    expect(res.status).toBe(201);
    const { session } = await res.json();
    expect(session.user.email).toBe('ana@example.com');
    const me = await t.call('GET', '/v1/me', { token: session.token });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      credential: 'session',
      principal_id: session.user.id,
      account: { id: acc.id },
    });
    expect((await t.call('DELETE', '/v1/sessions/current', { token: session.token })).status).toBe(204);
    const after = await t.call('GET', '/v1/me', { token: session.token });
    expect(after.status).toBe(401);
    expect((await after.json()).detail).toBe('This session was signed out or revoked; sign in again');
  });
});

describe('migration 0023_user_names', () => {
  it('gives a user shown by its e-mail its account name, and leaves named users alone', async () => {
    const acc = await t.account({ name: 'Legacy Ltd' });
    const legacy = await t.ctx.modules.accounts.createUser({
      accountId: acc.id,
      email: 'old@legacy.example',
      password: 'correct horse battery',
    });
    const named = await t.ctx.modules.accounts.createUser({
      accountId: acc.id,
      email: 'named@legacy.example',
      password: 'correct horse battery',
      name: 'Nora Named',
    });
    // As users without a name were written before it: the principal named by the e-mail.
    await sql`UPDATE principals SET display_name = email WHERE id = ${legacy.id}`.execute(t.ctx.db);
    // Migrations are written against an untyped database (they run before the tables' types hold).
    const untyped = t.ctx.db as unknown as Kysely<unknown>;
    await m0023.down(untyped);
    await m0023.up(untyped);
    await sql`UPDATE users SET name = 'Nora Named' WHERE id = ${named.id}`.execute(t.ctx.db);
    const contacts = await t.ctx.modules.principals.contacts([legacy.id, named.id]);
    expect(contacts.get(legacy.id)?.name).toBe('Legacy Ltd');
    expect(contacts.get(named.id)?.name).toBe('Nora Named');
  });
});
