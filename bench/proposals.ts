/**
 * Proposal benchmarks (`proposals`), in process (app.inject: the routes, services and store, without
 * sockets), on an ephemeral embedded store, CONCURRENCY requests in flight:
 *
 * 1. `POST /v1/proposals`: standard proposals from one requester (an ICS calendar connected) to one of
 *    PARTICIPANTS accounts that granted it `booking:propose`, each at its own half-hour slot.
 * 2. `POST /v1/proposals/{id}/response` accept: each participant accepts its proposal, which books
 *    both parties (occupancy, two bookings, booking.created ×2, proposal.accepted ×2, a calendar
 *    meeting row, two mails) in one transaction.
 * 3. Votes in one open poll: every vote locks the same proposal row (the worst case: all voters at
 *    once), then `close` resolves it.
 *
 * Proposals/accepts/votes per second and p50/p99 latencies. Run alone with
 * `node --import tsx bench/proposals.ts`; COUNT (default 400) proposals, VOTES (default 400) votes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { benchDatabase, feedRuntime, fmt, type Row } from './lib.js';
import { HOUR } from '../src/lib/time.js';

const COUNT = Number(process.env.COUNT ?? 400);
const VOTES = Number(process.env.VOTES ?? 400);
const PARTICIPANTS = 50;
const CONCURRENCY = 20;

interface Timed {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** Runs `n` operations, CONCURRENCY at a time; each answers whether it succeeded. */
async function timed(n: number, op: (i: number) => Promise<boolean>): Promise<Timed> {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        if (!(await op(i))) failures++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { perSecond: n / seconds, p50: at(0.5), p99: at(0.99), failures };
}

export async function benchProposals(): Promise<Row[]> {
  const store = await benchDatabase('proposals');
  const { runtime, close } = await feedRuntime(store.url);
  const app = runtime.app!;
  let feed: Server | null = null;
  try {
    feed = createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/calendar' })
        .end('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n'),
    );
    await new Promise<void>((resolve) => feed?.listen(0, '127.0.0.1', resolve));
    const account = (name: string) =>
      runtime.modules.accounts.createAccount({ name, plan: 'enterprise', rateLimitPerHour: 1_000_000_000 });
    const call = async (method: 'GET' | 'POST', url: string, key: string, payload?: object) => {
      const res = await app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, payload });
      return { status: res.statusCode, body: res.json() as unknown };
    };
    const requester = await account('Requester');
    const rk = requester.api_key.key;
    const connected = await call('POST', '/v1/calendars/ics', rk, {
      url: `http://127.0.0.1:${(feed.address() as AddressInfo).port}/free.ics`,
    });
    if (connected.status !== 201)
      throw new Error(`connecting the calendar failed: ${JSON.stringify(connected.body)}`);
    const participants: { id: string; key: string }[] = [];
    for (let i = 0; i < PARTICIPANTS; i++) {
      const p = await account(`Participant ${i}`);
      const granted = await call('POST', '/v1/consents', p.api_key.key, {
        grantee_id: requester.account.id,
        scopes: ['booking:propose'],
      });
      if (granted.status !== 201) throw new Error(`consent failed: ${JSON.stringify(granted.body)}`);
      participants.push({ id: p.account.id, key: p.api_key.key });
    }
    const base = Math.ceil((Date.now() + 2 * 24 * HOUR) / HOUR) * HOUR;
    const slotOf = (i: number) => {
      const start = base + i * 30 * 60_000;
      return { start: new Date(start).toISOString(), end: new Date(start + 30 * 60_000).toISOString() };
    };

    const ids: string[] = [];
    const created = await timed(COUNT, async (i) => {
      const r = await call('POST', '/v1/proposals', rk, {
        mode: 'standard',
        participant_ids: [participants[i % PARTICIPANTS]!.id],
        slots: [slotOf(i)],
        title: `Bench ${i}`,
      });
      ids[i] = (r.body as { proposal?: { id: string } }).proposal?.id ?? '';
      return r.status === 201;
    });
    const accepted = await timed(COUNT, async (i) => {
      const r = await call('POST', `/v1/proposals/${ids[i]}/response`, participants[i % PARTICIPANTS]!.key, {
        action: 'accept',
      });
      return r.status === 200 && (r.body as { proposal: { status: string } }).proposal.status === 'accepted';
    });

    const poll = await call('POST', '/v1/proposals', rk, {
      mode: 'poll',
      slots: [slotOf(COUNT + 100), slotOf(COUNT + 102), slotOf(COUNT + 104)],
    });
    const pollBody = poll.body as {
      proposal: { id: string; slots: { id: string }[] };
      magic_link_url: string;
    };
    const token = pollBody.magic_link_url.split('/p/')[1]!;
    const votes = await timed(VOTES, async (i) => {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/proposals/${pollBody.proposal.id}/response`,
        payload: {
          action: 'accept',
          token,
          selected_slot_id: pollBody.proposal.slots[i % 3]!.id,
          voter_name: `Voter ${i}`,
          voter_email: `voter${i}@bench.test`,
        },
      });
      return res.statusCode === 200;
    });
    const t0 = performance.now();
    const closed = await call('POST', `/v1/proposals/${pollBody.proposal.id}/close`, rk, {});
    const closeMs = performance.now() - t0;
    if (closed.status !== 200) throw new Error(`close failed: ${JSON.stringify(closed.body)}`);

    const row = (name: string, t: Timed, what: string): Row[] => [
      { name: `${name}: ${what}/s (${CONCURRENCY} in flight)`, value: fmt(t.perSecond), unit: `${what}/s` },
      { name: `${name}: p50 / p99`, value: `${fmt(t.p50, 1)} / ${fmt(t.p99, 1)}`, unit: 'ms' },
      { name: `${name}: failed`, value: String(t.failures), unit: 'requests' },
    ];
    return [
      ...row(`create a standard proposal (${COUNT})`, created, 'proposals'),
      ...row(`accept: books both parties (${COUNT})`, accepted, 'accepts'),
      ...row(`votes in one open poll (${VOTES}, one row lock)`, votes, 'votes'),
      {
        name: `close the poll of ${VOTES} votes (resolve, book, ${VOTES + 1} mails)`,
        value: fmt(closeMs, 1),
        unit: 'ms',
      },
    ];
  } finally {
    await new Promise<void>((resolve) => (feed ? feed.close(() => resolve()) : resolve()));
    await close();
    await store.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const r of await benchProposals())
    console.log(`${r.name.padEnd(72)} ${r.value.padStart(12)} ${r.unit}`);
}
