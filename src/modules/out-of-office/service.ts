/**
 * Out-of-office ranges (docs/api.md#out-of-office): a principal's time away, made, listed and deleted
 * by whoever may act for it, in the caller's mode. Busy everywhere through the `out_of_office` busy
 * source (busy.ts); a new range names the live bookings it overlaps (`conflicts`), which stay booked.
 */
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../db/store.js';
import { DAY, isoUtc } from '../../lib/time.js';
import type { Actor } from '../../platform/actor.js';
import { Forbidden, NotFound } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { decodeCursor, pageBy } from '../../platform/pagination.js';
import { instant, Problems } from '../../platform/validation.js';
import type { Platform } from '../module.js';
import type { PrincipalProfile } from '../principals/api.js';
import type { OutOfOfficeApi, OutOfOfficeNeeds } from './api.js';
import type { OutOfOfficeBusySource } from './busy.js';
import * as repo from './repo.js';
import { type CreateBody, type ListQuery, OOO_LIMITS } from './schemas.js';

/** The API's view of a range (the `out_of_office` object). */
export function presentRange(r: repo.OutOfOfficeRow) {
  return {
    id: r.id,
    principal_id: r.principal_id,
    start: r.start_time.toISOString(),
    end: r.end_time.toISOString(),
    note: r.note,
    livemode: r.livemode,
    created_at: r.created_at.toISOString(),
  };
}

export class OutOfOfficeService implements OutOfOfficeApi {
  private readonly db: Db;

  constructor(
    platform: Pick<Platform, 'db'>,
    private readonly needs: OutOfOfficeNeeds,
    private readonly busy: Pick<OutOfOfficeBusySource, 'changed'>,
  ) {
    this.db = platform.db;
  }

  /** POST /v1/principals/{id}/out-of-office: the range and the live bookings it overlaps. */
  async create(actor: Actor, principalId: string, body: Static<typeof CreateBody>) {
    const p = new Problems();
    const start = instant(body.start, 'start', p);
    const end = instant(body.end, 'end', p);
    if (start !== undefined && end !== undefined) {
      if (end <= start) p.add('end', 'must be after start');
      else if (end - start > OOO_LIMITS.maxDays * DAY)
        p.add('end', `must be at most ${OOO_LIMITS.maxDays} days after start`);
    }
    p.throwIfAny();
    const principal = await this.actingFor(actor, principalId);
    const row: repo.OutOfOfficeRow = {
      id: prefixedId('ooo', actor.clock.nowMs()),
      account_id: principal.accountId,
      livemode: actor.livemode,
      principal_id: principal.id,
      start_time: new Date(start!),
      end_time: new Date(end!),
      note: body.note ?? null,
      created_at: actor.clock.now(),
    };
    await repo.insertRange(this.db, row);
    // This process forgets the principal's ranges before it answers (the trigger tells the others).
    this.busy.changed(principal.id);
    const bookings = await this.needs.bookings.liveBookingsIn(principal.id, actor.livemode, {
      start: start!,
      end: end!,
    });
    return {
      out_of_office: presentRange(row),
      conflicts: bookings.map((b) => ({
        booking_id: b.id,
        start_time: isoUtc(b.start),
        end_time: isoUtc(b.end),
      })),
    };
  }

  /** GET /v1/principals/{id}/out-of-office: the caller's mode's ranges by start. */
  async list(actor: Actor, principalId: string, q: Static<typeof ListQuery>) {
    const p = new Problems();
    const from = instant(q.from, 'from', p);
    const to = instant(q.to, 'to', p);
    if (from !== undefined && to !== undefined && to <= from) p.add('to', 'must be after from');
    p.throwIfAny();
    const after = decodeCursor(q.cursor, { prefix: 'ooo' });
    const principal = await this.actingFor(actor, principalId);
    const rows = await repo.listRanges(this.db, {
      principalId: principal.id,
      livemode: actor.livemode,
      from: from === undefined ? undefined : new Date(from),
      to: to === undefined ? undefined : new Date(to),
      after,
      limit: q.limit,
    });
    const { items, pagination } = pageBy(rows, q.limit, (r) => r.start_time);
    return {
      out_of_office: items.map(presentRange),
      pagination,
    };
  }

  /** DELETE /v1/principals/{id}/out-of-office/{ooo_id}: another mode's (or principal's) range is 404. */
  async remove(actor: Actor, principalId: string, id: string): Promise<void> {
    const principal = await this.actingFor(actor, principalId);
    const gone = await repo.deleteRange(this.db, principal.id, actor.livemode, id);
    if (gone === undefined) throw new NotFound('No out-of-office range with this id');
    this.busy.changed(principal.id);
  }

  /** The principal if `actor` may act for it; one 403 for missing and inaccessible (as schedules). */
  private async actingFor(actor: Actor, principalId: string): Promise<PrincipalProfile> {
    const p = await this.needs.principals.access.actingFor(actor, principalId);
    if (!p) throw new Forbidden('The principal does not exist or is not accessible to this caller');
    return p;
  }
}
