/**
 * Creating POSTs honour Idempotency-Key (docs/api.md#idempotency): a consent, an invitation, a batch
 * of invitations and a proposal sent twice under one key are made once, and the second answer is the
 * first one replayed — so a client that retries after a lost answer never invites or proposes twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/helpers/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { serveCalendar, vcalendar } from '../../../test/helpers/ics.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';

let t: TestApp;
let sink: SmtpSink;
let feed: Awaited<ReturnType<typeof serveCalendar>> | undefined;
beforeAll(async () => {
  sink = await startSmtpSink();
  feed = await serveCalendar(vcalendar('\r\n', []));
  t = await startTestApp({
    workers: true,
    env: { SMTP_URL: sink.url, KAIROS_ALLOW_PRIVATE_NETWORK: 'true' },
  });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
  await feed?.close();
});

const user = () => signedInUser(t, { prefix: 'idem' });

async function twice(token: string, path: string, body: unknown, key: string) {
  const send = () => t.call('POST', path, { token, body, headers: { 'idempotency-key': key } });
  const first = await send();
  const second = await send();
  return { first, second, firstBody: await first.json(), secondBody: await second.json() };
}

describe('creating POSTs of consents, invitations and proposals under one Idempotency-Key', () => {
  it('grant a consent once and replay the answer', async () => {
    const [a, b] = [await user(), await user()];
    const r = await twice(a.token, '/v1/consents', { grantee_id: b.id, scopes: ['booking:propose'] }, 'c-1');
    expect(r.first.status).toBe(201);
    expect(r.second.status).toBe(201);
    expect(r.second.headers.get('idempotent-replayed')).toBe('true');
    expect(r.secondBody).toEqual(r.firstBody);
  });

  it('send one invitation mail, and one batch, not two', async () => {
    const a = await user();
    const address = `invitee-${Date.now()}@example.com`;
    const before = sink.messages.length;
    const one = await twice(
      a.token,
      '/v1/network/invitations',
      { invitee_email: address, relationship_type: 'colleague' },
      'i-1',
    );
    expect(one.first.status).toBe(201);
    expect(one.second.headers.get('idempotent-replayed')).toBe('true');
    expect(one.secondBody).toEqual(one.firstBody);
    const bulkAddress = `bulk-${Date.now()}@example.com`;
    const batch = await twice(
      a.token,
      '/v1/network/invitations/bulk',
      { contacts: [{ email: bulkAddress }], relationship_type: 'partner' },
      'i-2',
    );
    expect(batch.second.headers.get('idempotent-replayed')).toBe('true');
    expect(batch.secondBody).toEqual(batch.firstBody);
    // A mail is written with its invitation, so the outbox holding one sent mail per address (and the
    // runner drained, the sink holding exactly those) means no second one was ever going to go out.
    await t.ctx.jobs.drain();
    const outbox = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['to_address', 'status'])
      .where('to_address', 'in', [address, bulkAddress])
      .orderBy('to_address')
      .execute();
    expect(outbox).toEqual([
      { to_address: bulkAddress, status: 'sent' },
      { to_address: address, status: 'sent' },
    ]);
    await sink.waitFor(before + 2);
    expect(sink.messages.length - before).toBe(2);
  });

  it('create one proposal', async () => {
    const a = await user();
    // Proposing needs a connected calendar (an empty ICS feed will do).
    const ics = await t.call('POST', '/v1/calendars/ics', { token: a.token, body: { url: feed!.url } });
    expect(ics.status, await ics.clone().text()).toBe(201);
    const start = new Date(Date.now() + 3 * 86_400_000);
    start.setUTCHours(10, 0, 0, 0);
    const slot = { start: start.toISOString(), end: new Date(start.getTime() + 1_800_000).toISOString() };
    const r = await twice(a.token, '/v1/proposals', { mode: 'poll', title: 'Retro', slots: [slot] }, 'p-1');
    expect(r.first.status, JSON.stringify(r.firstBody)).toBe(201);
    expect(r.second.headers.get('idempotent-replayed')).toBe('true');
    expect(r.secondBody).toEqual(r.firstBody);
    const list = await t.call('GET', '/v1/proposals', { token: a.token });
    expect((await list.json()).proposals).toHaveLength(1);
  });
});
