import { describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { DAY, HOUR } from '../../lib/time.js';

const { clock, t } = clockedApp();

describe('api key usage retention', () => {
  it('deletes hourly usage buckets older than 30 days and keeps the rest', async () => {
    const acc = await t.account();
    const now = clock.nowMs() - (clock.nowMs() % HOUR);
    const buckets = [now - 31 * DAY, now - 30 * DAY - HOUR, now - 29 * DAY, now - 7 * DAY, now];
    await t.ctx.db
      .insertInto('api_key_usage')
      .values(
        buckets.map((b) => ({
          key_id: acc.keyId,
          bucket: new Date(b),
          requests: 1,
          rate_limited: 0,
          s2xx: 1,
          s4xx: 0,
          s5xx: 0,
          last_used_at: new Date(b),
        })),
      )
      .execute();

    await t.ctx.jobs.drain(); // the api-key-usage-retention schedule runs

    const left = await t.ctx.db
      .selectFrom('api_key_usage')
      .select('bucket')
      .where('key_id', '=', acc.keyId)
      .orderBy('bucket')
      .execute();
    expect(left.map((r) => new Date(r.bucket).getTime())).toEqual(buckets.slice(2));
    const stats = await t.call('GET', `/v1/api-keys/${acc.keyId}/stats?window=week`, { token: acc.key });
    expect(stats.status).toBe(200);
  });
});
