import { describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { HOUR } from '../../lib/time.js';

const { clock, t } = clockedApp();

const signIn = async (email: string): Promise<string> => (await fixtures.signIn(t, email)).token;

async function sessionTimes(): Promise<string[]> {
  const rows = await t.ctx.db.selectFrom('sessions').select('created_at').orderBy('created_at').execute();
  return rows.map((r) => new Date(r.created_at).toISOString());
}

describe('session retention', () => {
  it('deletes sessions a day after they expired or were signed out, and keeps live and recently ended ones', async () => {
    const acc = await t.account();
    await t.ctx.modules.accounts.createUser({
      accountId: acc.id,
      email: 'sam@example.com',
      password: 'correct horse battery',
    });
    const t0 = clock.nowMs();
    await signIn('sam@example.com'); // expires after an hour
    const signedOut = await signIn('sam@example.com');
    expect((await t.call('DELETE', '/v1/sessions/current', { token: signedOut })).status).toBe(204);

    clock.set(t0 + 24 * HOUR);
    await signIn('sam@example.com'); // expired an hour ago when the purge runs
    clock.set(t0 + 26 * HOUR);
    const live = await signIn('sam@example.com');

    await t.ctx.jobs.drain(); // the session-retention schedule runs
    expect(await sessionTimes()).toEqual([
      new Date(t0 + 24 * HOUR).toISOString(),
      new Date(t0 + 26 * HOUR).toISOString(),
    ]);
    expect((await t.call('GET', '/v1/me', { token: live })).status).toBe(200);
  });
});
