/**
 * Calendar write-through (docs/design.md#calendar-write-through): the meetings Kairos keeps
 * in its principals' own calendars — a booking today, an accepted proposal later. A meeting of test
 * mode (`MeetingSpec.livemode: false`) is never written anywhere (docs/api.md#test-mode).
 *
 * A caller states what should be in the calendars with `writeMeeting(trx, …)` / `removeMeeting(trx, …)`
 * inside its own transaction: one `calendar_meetings` row (its `version` rises with every change) and
 * one `calendar.write` job. Nothing is written when none of the principals has a writable calendar
 * (and the meeting was never written), so a booking of a host without a calendar costs one statement,
 * or none of its own when it joins the booking's write batch (`writeMeeting`'s `batch`).
 *
 * The job makes the calendars match, after commit, one writer per meeting across processes (a lease
 * on the meeting row), never inside the booking's transaction: a provider failure never blocks or rolls
 * back a booking. Per principal it writes into the destination calendar (the one marked `destination`,
 * else the primary calendar of the oldest writable connection): Google insert/patch/delete, Graph
 * create/update/delete, CalDAV PUT/DELETE. Writes are idempotent (Google's client-set event id, Graph's
 * transactionId, a CalDAV resource named after the meeting), so a retry after a lost answer never makes a
 * second event. Outcomes per principal in `calendar_meeting_events`: `synced`, `pending` (a transient
 * failure: retried with backoff, honouring Retry-After) or `failed` (connection lost, refused, or out of
 * attempts), with the last error; bookings show them as `calendar_sync`.
 */
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import { enqueue, enqueueMany, type Job, type WriteBatch } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import type { JobContribution } from '../module.js';
import { ConnectionLost, type ProviderGateway } from './gateway.js';
import { type EventSpec, eventRef, type WrittenEvent } from './providers/events.js';
import { OAuthError, ProviderError } from './providers/index.js';
import type { CalendarSync, MeetingSpec } from './api.js';
import * as repo from './meeting-repo.js';
import type { EventRow, MeetingRow } from './meeting-repo.js';
import type { ConnectionRow } from './repo.js';
import type { CalendarMeetingEventsTable } from './tables.js';

export const WRITE_QUEUE = 'calendar.write';
/** Attempts of a transiently failing write before it is `failed` (backoff 2 s … 1 h: about 5 h in all). */
export const MAX_WRITE_ATTEMPTS = 10;
/** How long one writer holds a meeting: longer than a pass (a few provider calls of at most 15 s each). */
const WRITER_LEASE_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 3_600_000;

interface WritePayload {
  key: string;
}

/** A principal's destination: the calendar and its connection. */
interface Destination {
  calendarExternalId: string;
  conn: ConnectionRow;
}

type Outcome =
  | { kind: 'synced'; written: WrittenEvent | null }
  | { kind: 'removed' }
  | { kind: 'failed'; error: string }
  | { kind: 'retry'; error: string; atMs: number };

export interface MeetingWriterDeps {
  db: Db;
  clock: Clock;
  gateway: Pick<ProviderGateway, 'writeEvent' | 'deleteEvent'>;
  timeZoneOf(principalId: string): Promise<string>;
  log: { error(obj: object, msg: string): void };
  /**
   * The principals of `ids` with a connected writable calendar, as this process knows them now, or
   * undefined when it does not know all of them (busy-cache.ts).
   */
  writableKnown?(ids: readonly string[]): Set<string> | undefined;
}

export class MeetingWriter {
  constructor(private readonly deps: MeetingWriterDeps) {}

  /**
   * States (inside the caller's transaction) that the meeting should be in its principals' calendars
   * as given; a later call with the same key moves or retitles it. Writes nothing when no principal has
   * a writable calendar and the meeting was never written. Answers the principals whose calendar will
   * receive it (connected, writable), e.g. so that their mail carries no second invite. With `batch`
   * the statement joins it when this process knows every principal's connections: one round trip
   * fewer, and that answer as this process knows it (a connection made or lost in another process in
   * the last milliseconds may be missed by the answer, never by the write).
   */
  async writeMeeting(trx: Tx, spec: MeetingSpec, batch?: WriteBatch): Promise<Set<string>> {
    // Test mode (docs/api.md#test-mode): nothing leaves the server. No row, no job: moving it writes
    // nothing either, and removing it finds nothing to remove.
    if (spec.livemode === false) return new Set();
    const now = this.deps.clock.now();
    const ids = [...spec.principalIds];
    const known = batch ? this.deps.writableKnown?.(ids) : undefined;
    if (batch && known) {
      // The principals' connections are in this process's memory (busy-cache.ts keeps them, dropped by
      // NOTIFY): the store still decides in the batch's statement whether the meeting is stored and
      // its job added; only the answer (whose mail carries no invite) comes from memory.
      batch.addThen(repo.batchedMeetingUpsert(spec, ids, now), [
        { queue: WRITE_QUEUE, payload: { key: spec.key } satisfies WritePayload, runAt: now },
      ]);
      return known;
    }
    const row = await repo.upsertMeeting(trx, spec, ids, now);
    if (!row) return new Set();
    await this.enqueueWrite(trx, spec.key, now);
    return new Set(row.writable);
  }

  /**
   * States (inside the caller's transaction) that the meeting should leave every calendar. Answers
   * the principals whose calendar holds it (or is about to). A test-mode meeting was never stored:
   * nothing to do, no statement beyond the look-up.
   */
  async removeMeeting(trx: Tx, key: string): Promise<Set<string>> {
    const now = this.deps.clock.now();
    const row = await repo.retireMeeting(trx, key, now);
    if (!row) return new Set();
    await this.enqueueWrite(trx, key, now);
    return new Set(row.holders);
  }

  /**
   * A principal's calendar was connected again: its failed writes of meetings not yet over are
   * tried afresh (attempts reset), inside the caller's transaction.
   */
  async retryFailed(trx: Tx, principalId: string): Promise<void> {
    const now = this.deps.clock.now();
    const rows = await repo.retryFailedEvents(trx, principalId, now);
    await enqueueMany(
      trx,
      WRITE_QUEUE,
      rows.map((r) => ({ payload: { key: r.meeting_key } satisfies WritePayload, runAt: now })),
    );
  }

  /** How the meetings' writes went, per principal (one statement for all keys). */
  async syncOf(keys: readonly string[]): Promise<Map<string, CalendarSync[]>> {
    const out = new Map<string, CalendarSync[]>();
    if (keys.length === 0) return out;
    const meetings = await repo.syncRows(this.deps.db, keys);
    const byKey = new Map<string, typeof meetings>();
    for (const r of meetings) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
    for (const [key, rows] of byKey) {
      const first = rows[0]!;
      const seen = new Map(rows.filter((r) => r.principal_id !== null).map((r) => [r.principal_id!, r]));
      const list: CalendarSync[] = [];
      for (const principal of first.principal_ids) {
        const e = seen.get(principal);
        if (e?.status) {
          list.push({
            principal_id: principal,
            provider: e.provider,
            status: e.status,
            error: e.last_error,
            updated_at: e.updated_at ? new Date(e.updated_at).toISOString() : null,
          });
        } else if (first.done_version < first.version) {
          // The write job has not looked at this principal yet.
          list.push({
            principal_id: principal,
            provider: null,
            status: 'pending',
            error: null,
            updated_at: null,
          });
        }
      }
      out.set(key, list);
    }
    return out;
  }

  queues(): JobContribution[] {
    return [
      {
        queue: WRITE_QUEUE,
        handler: (job: Job<WritePayload>) => this.run(job.payload.key),
        options: { concurrency: 4 },
      },
    ];
  }

  private async enqueueWrite(trx: Tx, key: string, now: Date): Promise<void> {
    await enqueue(trx, WRITE_QUEUE, { key } satisfies WritePayload, now);
  }

  /**
   * Makes every principal's calendar match the meeting. One writer per meeting across processes: a
   * lease on the meeting row (`writer_until`, taken by a conditional UPDATE), so no database
   * connection is held while providers answer. The holder repeats its pass while the meeting changed
   * under it (a change's own job, finding the lease taken, leaves the work to the holder and comes
   * back when the lease would end, in case the holder died). Answers a retry time when a write failed
   * transiently.
   */
  async run(key: string): Promise<{ retryAt: Date } | undefined> {
    for (let round = 0; round < 5; round++) {
      const nowMs = this.deps.clock.nowMs();
      const taken = await repo.takeLease(this.deps.db, key, nowMs, WRITER_LEASE_MS);
      if (!taken) {
        const held = await repo.leaseOf(this.deps.db, key);
        return held?.writer_until ? { retryAt: new Date(held.writer_until) } : undefined;
      }
      let outcome: { retryAt: Date } | undefined;
      try {
        outcome = await this.pass(key);
      } finally {
        await repo.releaseLease(this.deps.db, key);
      }
      if (outcome) return outcome;
      // Changed while this pass ran (its own job found the lease taken): pass again.
      const after = await repo.versionsOf(this.deps.db, key);
      if (!after || after.done_version >= after.version) return undefined;
    }
    return { retryAt: new Date(this.deps.clock.nowMs() + 1000) };
  }

  private async pass(key: string): Promise<{ retryAt: Date } | undefined> {
    const { db } = this.deps;
    const meeting = await repo.meetingOf(db, key);
    if (!meeting) return;
    const events = await repo.eventsOf(db, key);
    const existing = new Map(events.map((e) => [e.principal_id, e]));
    const wanted = meeting.live ? meeting.principal_ids : [];
    const destinations = await this.destinations(wanted);
    const principals = new Set([...wanted, ...existing.keys()]);

    let retryAtMs: number | null = null;
    for (const principal of principals) {
      const row = existing.get(principal);
      const dest = wanted.includes(principal) ? destinations.get(principal) : undefined;
      const outcome = await this.reconcile(meeting, principal, row, dest);
      if (outcome === null) continue;
      if (outcome.kind === 'retry') retryAtMs = Math.min(retryAtMs ?? outcome.atMs, outcome.atMs);
      await this.record(meeting, principal, row, dest, outcome);
    }
    if (retryAtMs !== null) return { retryAt: new Date(retryAtMs) };
    await repo.markDone(db, key, meeting.version);
  }

  /** Brings one principal's calendar in line with the meeting; null when there is nothing to do. */
  private async reconcile(
    meeting: MeetingRow,
    principal: string,
    row: EventRow | undefined,
    dest: Destination | undefined,
  ): Promise<Outcome | null> {
    const sameCalendar =
      row !== undefined &&
      dest !== undefined &&
      row.connection_id === dest.conn.id &&
      row.calendar_external_id === dest.calendarExternalId;
    if (dest && sameCalendar && row.status === 'synced' && row.written_version === meeting.version)
      return null;
    if (!dest && (!row || row.status === 'removed')) return null;
    try {
      // Off this calendar: the meeting was cancelled, the principal left it, or the destination moved.
      if (row && row.status !== 'removed' && !sameCalendar) {
        const removed = await this.removeFrom(row);
        if (!dest) return removed;
      }
      if (!dest) return null;
      const spec = await this.eventSpec(meeting, principal);
      const known = sameCalendar ? { id: row.external_id, etag: row.etag } : { id: null, etag: null };
      const written = await this.deps.gateway.writeEvent(dest.conn, dest.calendarExternalId, spec, known);
      return { kind: 'synced', written };
    } catch (err) {
      return this.failure(err, row && sameCalendar ? row.attempts : 0);
    }
  }

  /** Deletes the principal's event from the calendar it was written to. */
  private async removeFrom(row: EventRow): Promise<Outcome> {
    if (row.connection_id === null) {
      return { kind: 'failed', error: 'the calendar connection was removed; the event could not be deleted' };
    }
    const conn = await this.connection(row.connection_id);
    if (!conn) return { kind: 'failed', error: 'the calendar connection was removed' };
    await this.deps.gateway.deleteEvent(conn, row.calendar_external_id, {
      id: row.external_id,
      etag: row.etag,
    });
    return { kind: 'removed' };
  }

  private failure(err: unknown, attemptsBefore: number): Outcome {
    const attempts = attemptsBefore + 1;
    if (err instanceof ConnectionLost) return { kind: 'failed', error: `connection_lost: ${err.reason}` };
    if (err instanceof ProviderError && err.code === 'bad_request') {
      return { kind: 'failed', error: `${err.reason ?? `http_${err.status}`}: ${err.message}`.slice(0, 500) };
    }
    const transient =
      err instanceof ProviderError || err instanceof OAuthError
        ? err.message
        : `unexpected: ${err instanceof Error ? err.message : String(err)}`;
    if (!(err instanceof ProviderError || err instanceof OAuthError)) {
      this.deps.log.error({ err }, 'calendar write failed unexpectedly');
    }
    if (attempts >= MAX_WRITE_ATTEMPTS) {
      return { kind: 'failed', error: `gave up after ${attempts} attempts: ${transient}`.slice(0, 500) };
    }
    const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** attempts);
    const after = err instanceof ProviderError && err.retryAfterMs !== undefined ? err.retryAfterMs : 0;
    return {
      kind: 'retry',
      error: transient.slice(0, 500),
      atMs: this.deps.clock.nowMs() + Math.max(backoff, after),
    };
  }

  private async record(
    meeting: MeetingRow,
    principal: string,
    row: EventRow | undefined,
    dest: Destination | undefined,
    outcome: Outcome,
  ): Promise<void> {
    const now = this.deps.clock.now();
    // Where the event is (or is meant to be): the destination, or where it was written before.
    const where = dest
      ? {
          connection_id: dest.conn.id,
          provider: dest.conn.provider,
          calendar_external_id: dest.calendarExternalId,
        }
      : row
        ? {
            connection_id: row.connection_id,
            provider: row.provider,
            calendar_external_id: row.calendar_external_id,
          }
        : null;
    if (!where) return;
    // Another calendar than the row's: what was written there is not this calendar's event.
    const moved =
      row !== undefined &&
      dest !== undefined &&
      (row.connection_id !== dest.conn.id || row.calendar_external_id !== dest.calendarExternalId);
    const ref =
      moved || !row ? { external_id: null, etag: null } : { external_id: row.external_id, etag: row.etag };
    const failures = (row?.attempts ?? 0) + 1;
    const fields: Updateable<CalendarMeetingEventsTable> =
      outcome.kind === 'synced'
        ? {
            external_id: outcome.written?.id ?? null,
            etag: outcome.written?.etag ?? null,
            status: 'synced',
            written_version: meeting.version,
            attempts: 0,
            last_error: null,
          }
        : outcome.kind === 'removed'
          ? { status: 'removed', written_version: meeting.version, attempts: 0, last_error: null }
          : {
              ...ref,
              status: outcome.kind === 'failed' ? 'failed' : 'pending',
              attempts: failures,
              last_error: outcome.error,
            };
    const values: Insertable<CalendarMeetingEventsTable> = {
      meeting_key: meeting.key,
      principal_id: principal,
      ...where,
      ...ref,
      status: 'pending',
      written_version: 0,
      attempts: 0,
      last_error: null,
      ...fields,
      updated_at: now,
    } as Insertable<CalendarMeetingEventsTable>;
    await repo.upsertEvent(this.deps.db, values, { ...where, ...fields, updated_at: now });
  }

  private async eventSpec(meeting: MeetingRow, principal: string): Promise<EventSpec> {
    return {
      ref: eventRef(meeting.key, principal),
      meetingKey: meeting.key,
      title: meeting.title,
      description: meeting.description,
      location: meeting.location,
      start: new Date(meeting.start_time).getTime(),
      end: new Date(meeting.end_time).getTime(),
      timeZone: await this.deps.timeZoneOf(principal),
      attendees: meeting.attendees,
      sequence: meeting.version - 1,
    };
  }

  /**
   * Each principal's destination: the calendar marked as destination, else the primary calendar of
   * the oldest connected connection that can be written (ICS feeds cannot), else of the oldest
   * disconnected one (so that the write fails visibly, with the reason, instead of being skipped).
   */
  private async destinations(principals: readonly string[]): Promise<Map<string, Destination>> {
    const out = new Map<string, Destination>();
    if (principals.length === 0) return out;
    const rows = await repo.destinationRows(this.deps.db, principals);
    for (const r of rows) {
      if (out.has(r.principal_id)) continue;
      if (!r.is_destination && !r.is_primary) continue;
      const { calendar_external_id, is_destination: _d, is_primary: _p, ...conn } = r;
      out.set(r.principal_id, { calendarExternalId: calendar_external_id, conn: conn as ConnectionRow });
    }
    return out;
  }

  private connection(id: string): Promise<ConnectionRow | undefined> {
    return repo.connectionById(this.deps.db, id);
  }
}
