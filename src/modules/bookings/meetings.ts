/**
 * Bookings made by an accepted proposal (docs/design.md#proposals-and-polls): one booking per
 * principal of the meeting, each in that principal's account, written inside the proposal's own
 * transaction so that the acceptance and the time it takes commit together. The time is taken by
 * occupancy rows like any booking: the exclusion constraint refuses an overlap (23P01), never a
 * check-then-insert. The proposal sends its own mails and writes one calendar meeting for everyone,
 * so these bookings mail nothing and write no calendar event of their own.
 */
import type { Tx } from '../../db/store.js';
import type { Interval } from '../../lib/intervals.js';
import type { Clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import type { PrincipalProfile } from '../principals/api.js';
import type { BookingsNeeds, MeetingBookingInput } from './api.js';
import { presentBooking } from './present.js';
import * as repo from './repo.js';
import { manageToken, newManageNonce, tokenHash } from './tokens.js';

/** What the meetings' writes use: the clock, the self-service link key, the webhooks' emit. */
export interface MeetingDeps {
  clock: Clock;
  linkKey: Buffer;
  webhooks: BookingsNeeds['webhooks'];
}

/**
 * Books everyone at once (one occupancy insert: all or nothing), with booking.created to each
 * booking's account. Throws the database's 23P01 when anyone's time is taken.
 */
export async function bookMeeting(
  trx: Tx,
  deps: MeetingDeps,
  m: MeetingBookingInput,
  occupancyOf: (ownerId: string, h: PrincipalProfile, slot: Interval, livemode: boolean) => repo.OccupancyRow,
): Promise<repo.BookingRow[]> {
  const now = deps.clock.now();
  const livemode = m.livemode ?? true;
  const rows = m.principals.map((p) => {
    const id = prefixedId('booking', now.getTime());
    const nonce = newManageNonce();
    const customer = m.customers.get(p.id);
    if (!customer) throw new Error(`meeting booking: no customer for principal ${p.id}`);
    return { p, id, nonce, token: manageToken(deps.linkKey, id, nonce), customer };
  });
  const occupancy = rows.map((r) => occupancyOf(r.id, r.p, m.slot, livemode));
  // Test mode: the constraint is per mode, so live time is checked (answered as the constraint would).
  if (!livemode && (await repo.liveOverlaps(trx, occupancy)).size > 0) {
    throw Object.assign(new Error('meeting booking: live time is taken'), { code: repo.EXCLUSION_VIOLATION });
  }
  await repo.insertOccupancy(trx, occupancy);
  const inserted = await repo.insertBookings(
    trx,
    rows.map((r) => ({
      id: r.id,
      account_id: r.p.accountId,
      principal_id: r.p.id,
      host_ids: [r.p.id],
      booking_link_id: null,
      livemode,
      title: m.title,
      status: 'confirmed' as const,
      start_time: new Date(m.slot.start),
      end_time: new Date(m.slot.end),
      customer_email: r.customer.email,
      customer_name: r.customer.name,
      customer_timezone: r.customer.timezone,
      notes: m.notes,
      answers: '{}',
      metadata: JSON.stringify(m.metadata),
      manage_token_hash: tokenHash(r.token),
      manage_nonce: r.nonce,
      sequence: 0,
      waitlist_entry_id: null,
      proposal_id: m.proposalId,
      created_at: now,
      updated_at: now,
    })),
  );
  for (const b of inserted) {
    await deps.webhooks.emit(trx, {
      accountId: b.account_id,
      type: 'booking.created',
      data: { booking: presentBooking(b) },
      livemode: b.livemode,
    });
  }
  return inserted;
}

/**
 * Cancels the live bookings of a proposal (its cancellation): frees their time, booking.cancelled to
 * each booking's account. Answers the principals whose time was freed.
 */
export async function cancelMeeting(
  trx: Tx,
  deps: Pick<MeetingDeps, 'clock' | 'webhooks'>,
  proposalId: string,
  reason: string | null,
): Promise<string[]> {
  const now = deps.clock.now();
  const live = await repo.lockConfirmedOfProposal(trx, proposalId);
  if (live.length === 0) return [];
  const ids = live.map((b) => b.id);
  await repo.releaseOccupancyOf(trx, ids);
  const cancelled = await repo.cancelBookings(trx, ids, reason, now);
  for (const b of cancelled) {
    await deps.webhooks.emit(trx, {
      accountId: b.account_id,
      type: 'booking.cancelled',
      data: { booking: presentBooking(b) },
      livemode: b.livemode,
    });
  }
  return cancelled.flatMap((b) => b.host_ids);
}
