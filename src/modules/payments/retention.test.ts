import { describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { DAY } from '../../lib/time.js';

const { clock, t } = clockedApp();

describe('stripe event retention', () => {
  it('forgets handled Stripe event ids after 30 days and keeps recent ones', async () => {
    const now = clock.nowMs();
    await t.ctx.db
      .insertInto('stripe_events')
      .values([
        {
          id: 'evt_old',
          type: 'checkout.session.completed',
          stripe_account: null,
          received_at: new Date(now - 31 * DAY),
        },
        {
          id: 'evt_recent',
          type: 'checkout.session.completed',
          stripe_account: null,
          received_at: new Date(now - 29 * DAY),
        },
      ])
      .execute();

    await t.ctx.jobs.drain(); // the stripe-event-retention schedule runs

    const left = await t.ctx.db.selectFrom('stripe_events').select('id').execute();
    expect(left.map((r) => r.id)).toEqual(['evt_recent']);
  });
});
