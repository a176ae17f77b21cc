/** Hosts and working-hours schedules (docs/api.md#hosts-and-schedules), and principal look-ups for other modules. */
import type { Static } from '@sinclair/typebox';
import { InvalidatedCache } from '../../db/invalidated-cache.js';
import type { Notifier } from '../../db/notify.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import { DEFAULT_SCHEDULE, type Schedule, validateSchedule } from '../../lib/schedule.js';
import type { Clock } from '../../platform/clock.js';
import { Forbidden, NotFound, ValidationFailed } from '../../platform/errors.js';
import { isUuid, uuidv7 } from '../../platform/ids.js';
import { decodeCursor, page } from '../../platform/pagination.js';
import type { Extensions, Platform } from '../module.js';
import { PrincipalAccess } from './access.js';
import { visibleIn } from './access.js';
import type {
  ActorLike,
  HostOwner,
  ModeFilter,
  NewPrincipal,
  PrincipalContact,
  PrincipalProfile,
  PrincipalsApi,
} from './api.js';
import * as repo from './repo.js';
import { isEmailAddress, isTimeZone } from '../../platform/validation.js';
import type { CreateHostBody, UpdateHostBody } from './schemas.js';
import type { ListQuery } from '../../platform/schemas.js';

type Contact = PrincipalContact;

export class PrincipalService implements PrincipalsApi {
  private readonly cache: InvalidatedCache<PrincipalProfile>;
  /** Who may read or act for whom (principals/access.ts). */
  readonly access: PrincipalAccess;

  private readonly db: Db;
  private readonly clock: Clock;

  constructor(
    platform: Pick<Platform, 'db' | 'clock'>,
    private readonly extensions: Pick<Extensions, 'all'>,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.cache = new InvalidatedCache(this.clock, { channel: repo.PRINCIPALS_CHANNEL });
    this.access = new PrincipalAccess(this, extensions);
  }

  /** Starts caching profiles, invalidated through NOTIFY (see src/db/invalidated-cache.ts). */
  listen(notifier: Notifier): Promise<void> {
    return this.cache.listen(notifier);
  }

  /**
   * Which of `ids` have a connected calendar (one call per contributor for the whole list); the
   * calendars module contributes the answer through the `calendarStatus` extension point.
   */
  async calendarConnected(ids: readonly string[]): Promise<ReadonlySet<string>> {
    const statuses = this.extensions.all('calendarStatus');
    if (ids.length === 0 || statuses.length === 0) return new Set();
    if (statuses.length === 1) return statuses[0]!.connected(ids);
    const all = new Set<string>();
    for (const s of statuses) for (const id of await s.connected(ids)) all.add(id);
    return all;
  }

  // ---- hosts ---------------------------------------------------------------------------------------

  /** A host of the account, of the mode of `as` and made at its clock's time (default: live, now). */
  async createHost(
    accountId: string,
    input: Static<typeof CreateHostBody>,
    as: Pick<HostOwner, 'livemode' | 'clock'> = { livemode: true, clock: this.clock },
  ) {
    const errors: Record<string, string> = {};
    const displayName = input.display_name.trim();
    if (!displayName) errors.display_name = 'must not be empty';
    const email = normalizeEmail(input.email, errors);
    if (input.timezone !== undefined && !isTimeZone(input.timezone)) {
      errors.timezone = 'must be a valid IANA time zone';
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const timezone = input.timezone ?? (await this.timezoneOf(accountId)) ?? 'UTC';
    const now = as.clock.now();
    const row = await repo.insertHost(this.db, {
      id: uuidv7(now.getTime()),
      account_id: accountId,
      livemode: as.livemode,
      display_name: displayName,
      email,
      timezone,
      created_at: now,
      updated_at: now,
    });
    return presentHost(row, false);
  }

  /** The account's hosts of the owner's mode. */
  async listHosts(owner: HostOwner, opts: Static<typeof ListQuery>) {
    const pos = decodeCursor(opts.cursor, 'uuid');
    const rows = await repo.listHosts(this.db, owner.accountId, owner.livemode, pos, opts.limit);
    const { items, pagination } = page(rows, opts.limit);
    const connected = await this.calendarConnected(items.map((r) => r.id));
    return { hosts: items.map((r) => presentHost(r, connected.has(r.id))), pagination };
  }

  /** A live host of the account in the owner's mode; NotFound otherwise (another account's or mode's host, deleted, unknown). */
  async getHost(owner: HostOwner, id: string) {
    const row = isUuid(id) ? await repo.findHost(this.db, owner.accountId, id, owner.livemode) : undefined;
    if (!row) throw new NotFound('No host with this id');
    return presentHost(row, (await this.calendarConnected([id])).has(id));
  }

  async updateHost(owner: HostOwner, id: string, patch: Static<typeof UpdateHostBody>) {
    const errors: Record<string, string> = {};
    const set: { display_name?: string; email?: string | null; timezone?: string } = {};
    if (patch.display_name !== undefined) {
      set.display_name = patch.display_name.trim();
      if (!set.display_name) errors.display_name = 'must not be empty';
    }
    if (patch.email !== undefined) set.email = normalizeEmail(patch.email, errors);
    if (patch.timezone !== undefined) {
      if (!isTimeZone(patch.timezone)) errors.timezone = 'must be a valid IANA time zone';
      set.timezone = patch.timezone;
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const key = { accountId: owner.accountId, id, livemode: owner.livemode };
    const row = await this.changing(id, (trx) => repo.updateHost(trx, key, set, owner.clock.now()));
    if (!row) throw new NotFound('No host with this id');
    return presentHost(row, (await this.calendarConnected([id])).has(id));
  }

  /** Soft delete: the host disappears from lists and availability; its rows stay for history. */
  async deleteHost(owner: HostOwner, id: string) {
    const key = { accountId: owner.accountId, id, livemode: owner.livemode };
    const row = await this.changing(id, (trx) => repo.softDeleteHost(trx, key, owner.clock.now()));
    if (!row) throw new NotFound('No host with this id');
    return presentHost(row, false);
  }

  async isManagedHost(accountId: string, principalId: string, livemode?: boolean): Promise<boolean> {
    if (!isUuid(principalId)) return false;
    return (await repo.findHost(this.db, accountId, principalId, livemode ?? null)) !== undefined;
  }

  async hostMode(accountId: string, principalId: string): Promise<boolean | null> {
    if (!isUuid(principalId)) return null;
    return (await repo.findHost(this.db, accountId, principalId, null))?.livemode ?? null;
  }

  // ---- principals ----------------------------------------------------------------------------------

  /**
   * Live principals among `ids` (keyed by lower-case id), with their effective schedules: from the
   * cache, the rest in one query. The objects may be shared with other requests: never mutate them.
   * With `mode.livemode`, hosts of the other mode are left out.
   */
  async profiles(ids: readonly string[], mode: ModeFilter = {}): Promise<Map<string, PrincipalProfile>> {
    const all = await this.allProfiles(ids);
    if (mode.livemode === undefined) return all;
    for (const [id, p] of all) if (!visibleIn(p, mode.livemode)) all.delete(id);
    return all;
  }

  private async allProfiles(ids: readonly string[]): Promise<Map<string, PrincipalProfile>> {
    const out = new Map<string, PrincipalProfile>();
    const missing: string[] = [];
    for (const id of new Set(ids.map((x) => x.toLowerCase()))) {
      if (!isUuid(id)) continue;
      const hit = this.cache.get(id);
      if (hit) out.set(id, hit);
      else missing.push(id);
    }
    if (missing.length === 0) return out;
    const generation = this.cache.generation;
    const fetched: [string, PrincipalProfile][] = [];
    for (const r of await repo.findPrincipalsWithSchedules(this.db, missing)) {
      if (r.deleted_at !== null) continue;
      const profile = profileOf(r);
      out.set(r.id, profile);
      fetched.push([r.id, profile]);
    }
    this.cache.store(generation, fetched);
    return out;
  }

  /**
   * The live principals behind `ids` as stored now, read in the caller's transaction and locked
   * against changes (schedule, zone, deletion) until it ends: what a booking is checked against
   * cannot change before it commits. Deleted and unknown ids are absent from `profiles`; `contacts`
   * are as `contacts()` answers them, read with the schedules after the lock (one round trip). With
   * `mode.livemode`, hosts of the other mode are absent from `profiles` as deleted ones are.
   */
  async lockedProfiles(
    trx: Tx,
    ids: readonly string[],
    mode: ModeFilter = {},
  ): Promise<{ profiles: Map<string, PrincipalProfile>; contacts: Map<string, Contact> }> {
    const valid = [...new Set(ids.map((x) => x.toLowerCase()))].filter(isUuid);
    const contacts = new Map<string, Contact>();
    const profiles = new Map<string, PrincipalProfile>();
    for (const r of await repo.lockWithSchedules(trx, valid)) {
      contacts.set(r.id, {
        name: r.display_name,
        email: r.email,
        timezone: r.schedule?.timezone ?? r.timezone,
      });
      if (r.deleted_at !== null) continue;
      if (mode.livemode !== undefined && !visibleIn(r, mode.livemode)) continue;
      profiles.set(r.id, profileOf(r));
    }
    return { profiles, contacts };
  }

  /**
   * Display names and mail addresses (docs/api.md#e-mail-and-pages: a user's sign-in e-mail, a host's
   * or an account's contact e-mail, or null), keyed by id. Not cached: read when a mail is written.
   */
  async contacts(ids: readonly string[]): Promise<Map<string, Contact>> {
    const valid = [...new Set(ids.map((x) => x.toLowerCase()))].filter(isUuid);
    const out = new Map<string, Contact>();
    for (const r of await repo.findContacts(this.db, valid))
      out.set(r.id, { name: r.display_name, email: r.email, timezone: r.timezone });
    return out;
  }

  /** Runs a change of principal `id` in one transaction that announces it; drops the local entry. */
  private async changing<T>(id: string, change: (trx: Tx) => Promise<T>): Promise<T> {
    try {
      return await withTransaction(this.db, async (trx) => {
        await repo.lockForChange(trx, id); // a booking checking this principal waits (lockedProfiles)
        const result = await change(trx);
        await repo.announceChange(trx, id);
        return result;
      });
    } finally {
      this.cache.invalidate(id);
    }
  }

  async principalExists(id: string): Promise<boolean> {
    return (await this.profiles([id.toLowerCase()])).has(id.toLowerCase());
  }

  /** The zone a principal's floating and all-day calendar events are read in (also when deleted); UTC by default. */
  async storedZoneOf(id: string): Promise<string> {
    return (await repo.zoneOf(this.db, id)) || 'UTC';
  }

  /** Sets the display name of a user's principal, in the caller's transaction (profiles hold no names). */
  renameUser(trx: Tx, id: string, displayName: string): Promise<void> {
    return repo.renameUser(trx, id, displayName);
  }

  /** Inserts the principal row of a new account or user, in the caller's transaction. */
  insertPrincipal(trx: Tx, principal: NewPrincipal): Promise<void> {
    return repo.insertPrincipal(trx, principal);
  }

  /** The time zone of a live principal, or null. */
  async timezoneOf(id: string): Promise<string | null> {
    return (await this.profiles([id.toLowerCase()])).get(id.toLowerCase())?.timezone ?? null;
  }

  // ---- schedules -----------------------------------------------------------------------------------

  async getSchedule(actor: ActorLike, principalId: string): Promise<Schedule> {
    return (await this.manageable(actor, principalId)).schedule;
  }

  /**
   * Replaces the schedule. Fields left out take their default values (the principal's zone,
   * Mon–Fri 09:00–17:00, no overrides, buffers or notice, 60 days ahead). A test actor changes test
   * hosts' schedules only: the account's and users' own principals are shared with live mode (403
   * `live_mode_only`).
   */
  async putSchedule(
    actor: ActorLike & { clock: Clock },
    principalId: string,
    body: unknown,
  ): Promise<Schedule> {
    const p = await this.manageable(actor, principalId);
    if (!actor.livemode && p.kind !== 'host') {
      throw new Forbidden(
        'A test key cannot change the schedule of the account’s or a user’s own principal (shared with live mode); use a live key or a session, or give a test host its hours',
        { code: 'live_mode_only' },
      );
    }
    const input =
      typeof body === 'object' && body !== null && !Array.isArray(body)
        ? { ...DEFAULT_SCHEDULE(p.timezone), ...body }
        : body;
    const result = validateSchedule(input);
    if (!result.ok) {
      const errors: Record<string, string> = {};
      for (const [field, message] of Object.entries(result.errors)) {
        errors[field] = message === 'unknown field' ? 'is not a known field' : message;
      }
      throw new ValidationFailed(errors);
    }
    const s = result.schedule;
    const schedule: Schedule = {
      timezone: s.timezone,
      weekly: s.weekly.map((r) => ({ day: r.day, start: r.start, end: r.end })),
      overrides: s.overrides,
      buffer_before_minutes: s.buffer_before_minutes,
      buffer_after_minutes: s.buffer_after_minutes,
      minimum_notice_minutes: s.minimum_notice_minutes,
      max_days_ahead: s.max_days_ahead,
    };
    await this.changing(p.id, (trx) => repo.upsertSchedule(trx, p.id, schedule, actor.clock.now()));
    return schedule;
  }

  /** The principal if `actor` may manage it (itself or a managed host); 403 otherwise, also if unknown. */
  private async manageable(actor: ActorLike, principalId: string): Promise<PrincipalProfile> {
    const p = await this.access.actingFor(actor, principalId);
    if (!p) {
      throw new Forbidden('The principal does not exist or is not accessible to this caller');
    }
    return p;
  }
}

/** The API's view of a host (docs/api.md#hosts-and-schedules). */
export function presentHost(row: repo.HostRow, calendarConnected: boolean) {
  return {
    id: row.id,
    principal_id: row.id,
    livemode: row.livemode,
    display_name: row.display_name,
    email: row.email,
    timezone: row.timezone,
    // The module writes only these two (repo.ts: 'active' by default, 'deleted' on removal).
    status: row.status as 'active' | 'deleted',
    calendar_connected: calendarConnected,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    deleted_at: row.deleted_at ? row.deleted_at.toISOString() : null,
  };
}
export type PresentedHost = ReturnType<typeof presentHost>;

function normalizeEmail(raw: string | null | undefined, errors: Record<string, string>): string | null {
  if (raw === undefined || raw === null) return null;
  const email = raw.trim();
  if (!isEmailAddress(email)) errors.email = 'must be a valid e-mail address';
  return email;
}

function profileOf(r: repo.PrincipalScheduleRow): PrincipalProfile {
  return {
    id: r.id,
    kind: r.kind,
    accountId: r.account_id,
    timezone: r.timezone,
    livemode: r.livemode,
    schedule: r.schedule ?? DEFAULT_SCHEDULE(r.timezone),
  };
}
