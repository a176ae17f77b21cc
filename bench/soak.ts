/**
 * Soak: a real `kairos serve` process under steady mixed load for a long time, to show that nothing
 * grows without bound (docs/operations.md, Retention).
 *
 *   npm run soak -- [--minutes N | --seconds N] [--rate R] [--database-url postgres://…] [--hosts N]
 *
 * - The server runs in its own process (bin/kairos.js serve, from source), on an embedded PostgreSQL in
 *   a temporary directory (fsync off, as the other benches) unless `--database-url` names a database.
 * - Load (from this process): availability reads of booking links, bookings, reschedules and
 *   cancellations by a secret key, and so webhook deliveries (to a local receiver) and mails (logged).
 *   The rate is `--rate` requests/s, else half the capacity measured first (a closed loop of 16
 *   concurrent clients for a few seconds, which also warms the server up).
 * - Every minute (every 10 s for runs under 5 minutes): the server's RSS, p50/p99 of that interval,
 *   the answers, and the row count of every table.
 * - Retention is shortened for the run (a quarter of its length, 1 to 60 minutes) through the
 *   `KAIROS_*_RETENTION_DAYS` variables, so that purges happen and row counts can level off.
 * - At the end: RSS and p99 of the first interval after the warm-up and of the last, their ratio
 *   against the target (at most 15 % higher), and whether the purged tables stayed flat once their
 *   retention had passed. It exits 0 when a target is missed (it reports it), 1 when the server
 *   answered any 5xx, died, or a request failed without an answer.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type Receiver, startReceiver } from '../test/helpers/receiver.js';
import { benchDatabase, REPO, rssMiB, spawnListening } from './lib.js';
import { DAY, MINUTE } from '../src/lib/time.js';

const SLOT_MS = 30 * MINUTE;

/** Tables a purge or a cleanup keeps level under steady load (the rest are business records). */
const PURGED = new Set([
  'events',
  'webhook_deliveries',
  'webhook_attempts',
  'mail_outbox',
  'jobs',
  'api_key_usage',
  'rate_limit_windows',
  'idempotency_keys',
  'sessions',
  'stripe_events',
]);

interface Options {
  durationMs: number;
  rate: number | null;
  databaseUrl: string | null;
  hosts: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      seconds: { type: 'string' },
      rate: { type: 'string' },
      'database-url': { type: 'string' },
      hosts: { type: 'string' },
    },
  });
  const seconds = values.seconds !== undefined ? Number(values.seconds) : Number(values.minutes ?? 20) * 60;
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error('--minutes / --seconds must be a positive number');
  const rate = values.rate !== undefined ? Number(values.rate) : null;
  if (rate !== null && !(rate > 0))
    throw new Error('--rate must be a positive number of requests per second');
  return {
    durationMs: seconds * 1000,
    rate,
    databaseUrl: values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? null,
    hosts: Number(values.hosts ?? 30),
  };
}

// ---------------------------------------------------------------------------------------------------
// The load

interface Target {
  base: string;
  key: string;
  hosts: string[];
  slugs: string[];
}

/** What one request was and how it went. */
interface Outcome {
  status: number; // 0: no answer
  ms: number;
}

/** Live bookings this run made (ids), from which reschedules and cancellations pick. */
const live: string[] = [];
let seq = 0;

function pick<T>(list: readonly T[]): T {
  return list[Math.floor(Math.random() * list.length)]!;
}

/** A random 30-minute slot 2 to 360 days ahead (hosts work around the clock, every day). */
function randomSlot(): { start_time: string; end_time: string } {
  const day0 = Math.floor(Date.now() / DAY) * DAY;
  const start = day0 + (2 + Math.floor(Math.random() * 358)) * DAY + Math.floor(Math.random() * 48) * SLOT_MS;
  return { start_time: new Date(start).toISOString(), end_time: new Date(start + SLOT_MS).toISOString() };
}

async function call(
  t: Target,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${t.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${t.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: kept as null
  }
  return { status: res.status, json };
}

/**
 * One request of the mix: 45 % availability reads of a link, 30 % bookings, 12.5 % reschedules and
 * 12.5 % cancellations of bookings made earlier (a booking when there is none to change).
 */
async function oneRequest(t: Target): Promise<Outcome> {
  const started = performance.now();
  let status = 0;
  try {
    const r = Math.random();
    if (r < 0.45) {
      const from = new Date(
        Math.floor(Date.now() / DAY) * DAY + 2 * DAY + Math.floor(Math.random() * 300) * DAY,
      );
      const to = new Date(from.getTime() + 7 * DAY);
      const q = `from=${from.toISOString()}&to=${to.toISOString()}&timezone=UTC`;
      status = (await call(t, 'GET', `/v1/public/links/${pick(t.slugs)}/availability?${q}`)).status;
    } else if (r < 0.75 || live.length < 20) {
      const n = seq++;
      const res = await call(t, 'POST', '/v1/bookings', {
        principal_id: pick(t.hosts),
        ...randomSlot(),
        customer_email: `soak-${n}@example.com`,
        customer_name: `Soak ${n}`,
      });
      status = res.status;
      if (status === 201) live.push((res.json as { booking: { id: string } }).booking.id);
    } else if (r < 0.875) {
      status = (await call(t, 'PATCH', `/v1/bookings/${pick(live)}`, randomSlot())).status;
    } else {
      const i = Math.floor(Math.random() * live.length);
      const id = live[i]!;
      live[i] = live[live.length - 1]!;
      live.pop();
      status = (await call(t, 'DELETE', `/v1/bookings/${id}`)).status;
    }
  } catch {
    status = 0;
  }
  return { status, ms: performance.now() - started };
}

/** Requests per second a closed loop of `clients` reaches over `ms` (also the warm-up). */
async function measureCapacity(
  t: Target,
  clients: number,
  ms: number,
): Promise<{ rps: number; outcomes: Outcome[] }> {
  const until = performance.now() + ms;
  const outcomes: Outcome[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) outcomes.push(await oneRequest(t));
    }),
  );
  return { rps: outcomes.length / ((performance.now() - started) / 1000), outcomes };
}

// ---------------------------------------------------------------------------------------------------
// Observation

interface Interval {
  atS: number;
  rssMiB: number;
  p50: number;
  p99: number;
  rps: number;
  byStatus: Map<number, number>;
  rows: Map<string, number>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function rowCounts(pool: pg.Pool): Promise<Map<string, number>> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely_%' ORDER BY 1`,
  );
  const select = tables.map((t, i) => `(SELECT count(*) FROM "${t.name}") AS c${i}`).join(', ');
  const { rows } = await pool.query<Record<string, string>>(`SELECT ${select}`);
  return new Map(tables.map((t, i) => [t.name, Number(rows[0]![`c${i}`])]));
}

function statusLine(byStatus: Map<number, number>): string {
  return [...byStatus]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s === 0 ? 'failed' : s}:${n}`)
    .join(' ');
}

const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(0)} ms` : 'n/a');

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = options();
  const short = opts.durationMs < 5 * MINUTE;
  const intervalMs = short ? 10_000 : MINUTE;
  const retentionMs = Math.min(
    60 * MINUTE,
    Math.max(MINUTE, Math.round(opts.durationMs / 4 / MINUTE) * MINUTE),
  );
  const purgeEveryMs = Math.max(1000, Math.min(60_000, Math.floor(retentionMs / 4)));
  const retentionDays = String(retentionMs / DAY);
  const retentionEnv = {
    KAIROS_EVENT_RETENTION_DAYS: retentionDays,
    KAIROS_DELIVERY_RETENTION_DAYS: retentionDays,
    KAIROS_MAIL_RETENTION_DAYS: retentionDays,
    KAIROS_USAGE_RETENTION_DAYS: retentionDays,
    KAIROS_EXPIRED_RETENTION_DAYS: retentionDays,
  };

  const own = opts.databaseUrl ? null : await benchDatabase('soak');
  const databaseUrl = opts.databaseUrl ?? own!.url;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
    KAIROS_FROM_SOURCE: 'true',
    KAIROS_ALLOW_PRIVATE_NETWORK: 'true', // the webhook receiver is on loopback, over http
    LOG_LEVEL: 'info',
    ...retentionEnv,
  };
  let server: ChildProcess | null = null;
  let receiver: Receiver | null = null;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  let exitedEarly: number | null = null;
  try {
    const created = JSON.parse(
      execFileSync(
        process.execPath,
        [
          join(REPO, 'bin/kairos.js'),
          'accounts',
          'create',
          '--name',
          'Soak',
          '--plan',
          'enterprise',
          '--rate-limit',
          '1000000000',
          '--json',
        ],
        { env: { ...process.env, ...env }, encoding: 'utf8' },
      ),
    ) as { api_key: { key: string } };
    const spawned = await spawnListening([join(REPO, 'bin/kairos.js'), 'serve'], { ...env, PORT: '0' });
    server = spawned.child;
    server.once('exit', (code) => {
      exitedEarly = code ?? -1;
    });
    receiver = await startReceiver(() => ({ status: 200 }));
    const t: Target = { base: spawned.url, key: created.api_key.key, hosts: [], slugs: [] };

    // Hosts that work around the clock, a link each, and a subscription to every booking event.
    const everyDay = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
      day,
      start: '00:00',
      end: '24:00',
    }));
    for (let i = 0; i < opts.hosts; i++) {
      const host = await call(t, 'POST', '/v1/hosts', { display_name: `Soak host ${i}`, timezone: 'UTC' });
      if (host.status !== 201)
        throw new Error(`creating a host: ${host.status} ${JSON.stringify(host.json)}`);
      const id = (host.json as { host: { principal_id: string } }).host.principal_id;
      const schedule = await call(t, 'PUT', `/v1/principals/${id}/schedule`, {
        timezone: 'UTC',
        weekly: everyDay,
        overrides: [],
        minimum_notice_minutes: 0,
        max_days_ahead: 365,
      });
      if (schedule.status !== 200)
        throw new Error(`schedule: ${schedule.status} ${JSON.stringify(schedule.json)}`);
      const slug = `soak-${i}-${randomBytes(3).toString('hex')}`;
      const link = await call(t, 'POST', '/v1/booking-links', {
        slug,
        title: `Soak ${i}`,
        duration_minutes: 30,
        host_ids: [id],
        assignment: 'single',
      });
      if (link.status !== 201) throw new Error(`link: ${link.status} ${JSON.stringify(link.json)}`);
      t.hosts.push(id);
      t.slugs.push(slug);
    }
    const hook = await call(t, 'POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['booking.created', 'booking.updated', 'booking.cancelled'],
    });
    if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.json)}`);

    // Capacity (and warm-up), then the rate.
    const measureMs = Math.min(10_000, Math.max(3000, opts.durationMs / 10));
    let rate = opts.rate;
    const measured = await measureCapacity(t, 16, measureMs);
    let fiveXx = measured.outcomes.filter((o) => o.status >= 500).length;
    let failed = measured.outcomes.filter((o) => o.status === 0).length;
    if (rate === null) rate = Math.max(1, Math.round(measured.rps / 2));
    console.log(
      `soak: ${(opts.durationMs / MINUTE).toFixed(2)} min at ${rate} req/s (${opts.rate === null ? 'half of' : '--rate; capacity'} ${measured.rps.toFixed(0)} req/s measured over ${(measureMs / 1000).toFixed(0)} s with 16 clients), ${opts.hosts} hosts, report every ${intervalMs / 1000} s`,
    );
    console.log(
      `soak: retention shortened for this run to ${retentionMs / MINUTE} min (purges every ${purgeEveryMs / 1000} s): ${Object.entries(
        retentionEnv,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    );

    // Open loop at `rate`: requests are started on schedule whatever the answers take (at most 512 in flight).
    const startedAt = performance.now();
    const endAt = startedAt + opts.durationMs;
    let intervalStart = startedAt;
    let current: Outcome[] = [];
    let inFlight = 0;
    let skipped = 0;
    let sent = 0;
    const intervals: Interval[] = [];
    const pending = new Set<Promise<void>>();
    const child = server;
    const rcv = receiver;
    const report = async (now: number): Promise<void> => {
      const outcomes = current;
      current = [];
      const lat = outcomes.map((o) => o.ms).sort((a, b) => a - b);
      const byStatus = new Map<number, number>();
      for (const o of outcomes) byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
      const iv: Interval = {
        atS: Math.round((now - startedAt) / 1000),
        rssMiB: rssMiB(child.pid!),
        p50: percentile(lat, 50),
        p99: percentile(lat, 99),
        rps: outcomes.length / ((now - intervalStart) / 1000),
        byStatus,
        rows: await rowCounts(pool),
      };
      intervals.push(iv);
      rcv.received.splice(0); // what the receiver got is not kept: this process must not grow either
      console.log(
        `[${String(iv.atS).padStart(5)} s] rss ${iv.rssMiB} MiB · p50 ${ms(iv.p50)} p99 ${ms(iv.p99)} · ${iv.rps.toFixed(0)} req/s (${statusLine(byStatus)}${skipped ? ` skipped:${skipped}` : ''}) · rows ${[...iv.rows].map(([k, v]) => `${k}=${v}`).join(' ')}`,
      );
      intervalStart = now;
    };
    let nextReport = startedAt + intervalMs;
    while (performance.now() < endAt && exitedEarly === null) {
      const now = performance.now();
      const due = Math.floor(((now - startedAt) / 1000) * rate) - sent;
      for (let i = 0; i < due; i++) {
        sent++;
        if (inFlight >= 512) {
          skipped++;
          continue;
        }
        inFlight++;
        const p = oneRequest(t).then((o) => {
          inFlight--;
          current.push(o);
          pending.delete(p);
        });
        pending.add(p);
      }
      if (now >= nextReport) {
        await report(now);
        nextReport += intervalMs;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(pending);
    // The last stretch is reported too when it is at least half an interval long.
    if (exitedEarly === null && performance.now() - intervalStart >= intervalMs / 2)
      await report(performance.now());
    for (const iv of intervals) {
      for (const [s, n] of iv.byStatus) {
        if (s >= 500) fiveXx += n;
        if (s === 0) failed += n;
      }
    }
    for (const o of current) {
      if (o.status >= 500) fiveXx++;
      if (o.status === 0) failed++;
    }

    // Summary.
    // The first interval of the steady load is its warm-up: the comparison starts at the second.
    const first = intervals.length >= 3 ? intervals[1] : intervals[0];
    const last = intervals[intervals.length - 1];
    console.log('soak summary');
    let ok = true;
    if (first && last && first !== last) {
      const rssRatio = last.rssMiB / first.rssMiB;
      const p99Ratio = last.p99 / first.p99;
      console.log(
        `  RSS  ${first.rssMiB} MiB at ${first.atS} s → ${last.rssMiB} MiB at ${last.atS} s: ×${rssRatio.toFixed(2)} (target ≤ ×1.15: ${rssRatio <= 1.15 ? 'met' : 'MISSED'})`,
      );
      console.log(
        `  p99  ${ms(first.p99)} at ${first.atS} s → ${ms(last.p99)} at ${last.atS} s: ×${p99Ratio.toFixed(2)} (target ≤ ×1.15: ${p99Ratio <= 1.15 ? 'met' : 'MISSED'}); p50 ${ms(first.p50)} → ${ms(last.p50)}`,
      );
      ok = rssRatio <= 1.15 && p99Ratio <= 1.15;
    } else {
      console.log(
        '  RSS and p99: too few intervals to compare (the run is shorter than two report intervals)',
      );
    }
    // Row counts of the purged tables: from the first report after retention and two purge runs had
    // passed, to the last. Level within 15 % (and 50 rows) counts as flat.
    const steadyAtS = (retentionMs + 2 * purgeEveryMs) / 1000;
    const steady = intervals.find((iv) => iv.atS >= steadyAtS);
    if (steady && last && steady !== last) {
      const verdicts: string[] = [];
      let flat = true;
      for (const [table, end] of last.rows) {
        if (!PURGED.has(table)) continue;
        const from = steady.rows.get(table) ?? 0;
        const level = end <= from * 1.15 + 50;
        flat &&= level;
        if (from > 0 || end > 0) verdicts.push(`${table} ${from}→${end}${level ? '' : ' GROWING'}`);
      }
      console.log(
        `  rows after retention (${steady.atS} s → ${last.atS} s): ${flat ? 'flat' : 'NOT flat'}: ${verdicts.join(', ')}`,
      );
      const kept = [...last.rows]
        .filter(([table, n]) => !PURGED.has(table) && n !== (steady.rows.get(table) ?? 0))
        .map(([table, n]) => `${table} ${steady.rows.get(table) ?? 0}→${n}`);
      console.log(`  business records, kept (grow with bookings): ${kept.join(', ') || 'none changed'}`);
      ok &&= flat;
    } else {
      console.log(
        `  rows after retention: not observable (the run must last past retention + two purges, ${steadyAtS.toFixed(0)} s, and one more report)`,
      );
    }
    const totals = new Map<number, number>();
    for (const iv of intervals) for (const [s, n] of iv.byStatus) totals.set(s, (totals.get(s) ?? 0) + n);
    console.log(
      `  answers: ${statusLine(totals)}${skipped ? ` · skipped (512 in flight): ${skipped}` : ''} · 5xx ${fiveXx} · no answer ${failed}`,
    );
    if (exitedEarly !== null) console.log(`  the server exited during the run (code ${exitedEarly})`);
    console.log(`  result: ${ok ? 'targets met' : 'a target was missed (see above)'}`);
    return fiveXx > 0 || failed > 0 || exitedEarly !== null ? 1 : 0;
  } finally {
    await pool.end().catch(() => {});
    await receiver?.close().catch(() => {});
    if (server && server.exitCode === null) {
      const child = server;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
    await own?.stop().catch(() => {});
  }
}

process.exit(await main());
