/**
 * The SQL of calendar write-through (meetings.ts): `calendar_meetings` and `calendar_meeting_events`,
 * and the destinations read from `calendars` and `calendar_connections` (tables.ts). The rest of the
 * module's SQL is in repo.ts; the two are split by job to keep each room small.
 */
import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import { part, type SqlPart, statement } from '../../db/parts.js';
import type { Db, Tx } from '../../db/store.js';
import type { MeetingSpec } from './api.js';
import type { ConnectionRow } from './repo.js';
import type { CalendarMeetingEventsTable } from './tables.js';

export interface MeetingRow {
  key: string;
  principal_ids: string[];
  title: string;
  description: string | null;
  location: string | null;
  attendees: { name: string | null; email: string }[];
  start_time: Date;
  end_time: Date;
  live: boolean;
  version: number;
}

export type EventRow = Pick<
  Selectable<CalendarMeetingEventsTable>,
  | 'principal_id'
  | 'connection_id'
  | 'provider'
  | 'calendar_external_id'
  | 'external_id'
  | 'etag'
  | 'status'
  | 'written_version'
  | 'attempts'
>;

/**
 * Stores (or changes) a meeting in one statement, unless none of its principals has a writable
 * calendar and it was never stored; answers the principals whose calendars will receive it, or
 * undefined when nothing was stored.
 */
export async function upsertMeeting(
  trx: Tx,
  spec: MeetingSpec,
  ids: readonly string[],
  now: Date,
): Promise<{ writable: string[] } | undefined> {
  const written = await trx.executeQuery<{ writable: string[] }>(
    statement([
      meetingUpsert(spec, ids, now),
      part`
      RETURNING (
        SELECT coalesce(array_agg(DISTINCT c.principal_id::text), '{}') FROM calendar_connections c
        WHERE c.principal_id = ANY(${ids}::uuid[]) AND c.provider <> 'ics' AND c.status = 'connected'
      ) AS writable`,
    ]),
  );
  return written.rows[0];
}

/** upsertMeeting's statement for a WriteBatch: it answers the meeting's key when it stored it. */
export function batchedMeetingUpsert(spec: MeetingSpec, ids: readonly string[], now: Date): SqlPart {
  return part`${meetingUpsert(spec, ids, now)} RETURNING m.key`;
}

/** The meeting's INSERT … ON CONFLICT, on the condition upsertMeeting states (without RETURNING). */
function meetingUpsert(spec: MeetingSpec, ids: readonly string[], now: Date): SqlPart {
  return part`
      INSERT INTO calendar_meetings AS m (key, account_id, principal_ids, title, description, location,
        attendees, start_time, end_time, live, version, created_at, updated_at)
      SELECT ${spec.key}, ${spec.accountId}, ${ids}::uuid[], ${spec.title}, ${spec.description ?? null},
        ${spec.location ?? null}, ${JSON.stringify(spec.attendees)}::jsonb, ${spec.start}, ${spec.end},
        true, 1, ${now}, ${now}
      WHERE EXISTS (
          SELECT 1 FROM calendar_connections c
          WHERE c.principal_id = ANY(${ids}::uuid[]) AND c.provider <> 'ics')
        OR EXISTS (SELECT 1 FROM calendar_meetings WHERE key = ${spec.key})
      ON CONFLICT (key) DO UPDATE SET
        principal_ids = excluded.principal_ids, title = excluded.title,
        description = excluded.description, location = excluded.location,
        attendees = excluded.attendees, start_time = excluded.start_time, end_time = excluded.end_time,
        live = true, version = m.version + 1, updated_at = excluded.updated_at`;
}

/** Marks a live meeting removed; answers the principals whose calendar holds it (or is about to). */
export async function retireMeeting(
  trx: Tx,
  key: string,
  now: Date,
): Promise<{ holders: string[] } | undefined> {
  const removed = await sql<{ holders: string[] }>`
      UPDATE calendar_meetings SET live = false, version = version + 1, updated_at = ${now}
      WHERE key = ${key} AND live
      RETURNING (
        SELECT coalesce(array_agg(e.principal_id::text), '{}') FROM calendar_meeting_events e
        WHERE e.meeting_key = ${key} AND e.status IN ('synced', 'pending')
      ) AS holders`.execute(trx);
  return removed.rows[0];
}

/** A principal's failed writes of live meetings not yet over become pending again (attempts reset). */
export async function retryFailedEvents(
  trx: Tx,
  principalId: string,
  now: Date,
): Promise<{ meeting_key: string }[]> {
  return trx
    .updateTable('calendar_meeting_events as e')
    .from('calendar_meetings as m')
    .set({ status: 'pending', attempts: 0, updated_at: now })
    .whereRef('m.key', '=', 'e.meeting_key')
    .where('e.principal_id', '=', principalId)
    .where('e.status', '=', 'failed')
    .where('m.live', '=', true)
    .where('m.end_time', '>', now)
    .returning('e.meeting_key')
    .execute();
}

/** The meetings of `keys` with their per-principal outcomes (one statement for all keys). */
export async function syncRows(db: Db, keys: readonly string[]) {
  return db
    .selectFrom('calendar_meetings as m')
    .leftJoin('calendar_meeting_events as e', 'e.meeting_key', 'm.key')
    .select([
      'm.key',
      'm.principal_ids',
      'm.version',
      'm.done_version',
      'e.principal_id',
      'e.provider',
      'e.status',
      'e.last_error',
      'e.updated_at',
    ])
    .where('m.key', 'in', [...keys])
    .execute();
}

/** Takes the meeting's writer lease for `leaseMs` when it is free; answers its versions when taken. */
export async function takeLease(db: Db, key: string, nowMs: number, leaseMs: number) {
  return db
    .updateTable('calendar_meetings')
    .set({ writer_until: new Date(nowMs + leaseMs) })
    .where('key', '=', key)
    .where((eb) => eb.or([eb('writer_until', 'is', null), eb('writer_until', '<=', new Date(nowMs))]))
    .returning(['version', 'done_version'])
    .executeTakeFirst();
}

/** Until when another writer holds the meeting's lease. */
export async function leaseOf(db: Db, key: string) {
  return db.selectFrom('calendar_meetings').select('writer_until').where('key', '=', key).executeTakeFirst();
}

export async function releaseLease(db: Db, key: string): Promise<void> {
  await db.updateTable('calendar_meetings').set({ writer_until: null }).where('key', '=', key).execute();
}

/** The meeting's version and the version its calendars were last brought to. */
export async function versionsOf(db: Db, key: string) {
  return db
    .selectFrom('calendar_meetings')
    .select(['version', 'done_version'])
    .where('key', '=', key)
    .executeTakeFirst();
}

export async function meetingOf(db: Db, key: string): Promise<MeetingRow | undefined> {
  return (await db
    .selectFrom('calendar_meetings')
    .select([
      'key',
      'principal_ids',
      'title',
      'description',
      'location',
      'attendees',
      'start_time',
      'end_time',
      'live',
      'version',
    ])
    .where('key', '=', key)
    .executeTakeFirst()) as MeetingRow | undefined;
}

export async function eventsOf(db: Db, key: string): Promise<EventRow[]> {
  return (await db
    .selectFrom('calendar_meeting_events')
    .select([
      'principal_id',
      'connection_id',
      'provider',
      'calendar_external_id',
      'external_id',
      'etag',
      'status',
      'written_version',
      'attempts',
    ])
    .where('meeting_key', '=', key)
    .execute()) as EventRow[];
}

/** Every calendar matches `version` now (unless a later pass already said so). */
export async function markDone(db: Db, key: string, version: number): Promise<void> {
  await db
    .updateTable('calendar_meetings')
    .set({ done_version: version })
    .where('key', '=', key)
    .where('done_version', '<', version)
    .execute();
}

/** Records one principal's outcome for a meeting (insert, or update with `update`). */
export async function upsertEvent(
  db: Db,
  values: Insertable<CalendarMeetingEventsTable>,
  update: Updateable<CalendarMeetingEventsTable>,
): Promise<void> {
  await db
    .insertInto('calendar_meeting_events')
    .values(values)
    .onConflict((oc) => oc.columns(['meeting_key', 'principal_id']).doUpdateSet(update))
    .execute();
}

/**
 * The principals' writable calendars with their connections, best destination first (marked
 * destination, connected, oldest connection, primary, oldest calendar).
 */
export async function destinationRows(db: Db, principals: readonly string[]) {
  return db
    .selectFrom('calendars as cal')
    .innerJoin('calendar_connections as c', 'c.id', 'cal.connection_id')
    .selectAll('c')
    .select(['cal.external_id as calendar_external_id', 'cal.is_destination', 'cal.is_primary'])
    .where('cal.principal_id', 'in', [...principals])
    .where('c.provider', '<>', 'ics')
    .orderBy('cal.is_destination', 'desc')
    .orderBy(sql`c.status = 'connected'`, 'desc')
    .orderBy('c.created_at')
    .orderBy('cal.is_primary', 'desc')
    .orderBy('cal.created_at')
    .execute();
}

export async function connectionById(db: Db, id: string): Promise<ConnectionRow | undefined> {
  return db.selectFrom('calendar_connections').selectAll().where('id', '=', id).executeTakeFirst();
}
