import { describe, expect, it } from 'vitest';
import type { Json, TestApp } from '../helpers/app.js';
import { useEmptyCalendar } from '../helpers/ics.js';
import { type ServerProcess, callServer, useTwoServers } from '../helpers/process.js';
import { newHost, serverAt } from '../helpers/fixtures.js';

/**
 * Consents across two `kairos serve` processes on one database: a revocation made through one
 * process holds for the very next read through the other (access is decided from the database on
 * every request, no cache to wait for).
 */
const feed = useEmptyCalendar();
let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers((s) => ({ t, a, b } = s), { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' });

describe('consents across two server processes', () => {
  it('a consent revoked through process A is refused by process B on the very next read, 20 times in a row', async () => {
    const reader = await t.account();
    const owner = await t.account();
    const from = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const to = new Date(Date.now() + 9 * 86_400_000).toISOString();
    for (let round = 0; round < 20; round++) {
      const host = await newHost(serverAt(a.url), { token: owner.key }, { display_name: `Host ${round}` });
      const conn = await callServer(a.url, 'POST', '/v1/calendars/ics', owner.key, {
        url: feed.url,
        principal_id: host,
      });
      expect(conn.status).toBe(201);
      const granted = await callServer(a.url, 'POST', '/v1/consents', owner.key, {
        grantee_id: reader.id,
        scopes: ['availability:read:freebusy'],
        principal_id: host,
      });
      expect(granted.status).toBe(201);
      const consentId = ((await granted.json()) as Json).consent.id as string;
      const slots = `/v1/availability/slots?principal_id=${host}&duration_minutes=30&from=${from}&to=${to}`;
      const before = await callServer(b.url, 'GET', slots, reader.key);
      expect(before.status).toBe(200);
      expect(((await before.json()) as Json).consent).toEqual({ id: consentId });

      const revoked = await callServer(a.url, 'DELETE', `/v1/consents/${consentId}`, owner.key);
      expect(revoked.status).toBe(200);
      const after = await callServer(b.url, 'GET', slots, reader.key);
      expect(after.status).toBe(403);
      expect(after.headers.get('content-type')).toContain('application/problem+json');
    }
  });
});
