/**
 * No-shows (docs/api.md#no-shows): after a booking's start, on its mode's clock, its account marks a
 * party (`customer` or `host`) as not having come. `no_show` is a set: marking a party again changes
 * nothing and emits nothing; each party marked emits `booking.no_show` once.
 */
import { type Db, withTransaction } from '../../db/store.js';
import type { Actor } from '../../platform/actor.js';
import { Conflict, NotFound, Unprocessable } from '../../platform/errors.js';
import { isPrefixedId } from '../../platform/ids.js';
import type { BookingsNeeds } from './api.js';
import { presentBooking } from './present.js';
import * as repo from './repo.js';
import type { BookingRow } from './repo.js';
import type { NoShowParty } from './tables.js';

/** The order `no_show` lists its parties in. */
const PARTIES: readonly NoShowParty[] = ['customer', 'host'];

export class NoShows {
  constructor(
    private readonly db: Db,
    private readonly needs: Pick<BookingsNeeds, 'webhooks'>,
  ) {}

  /** POST /v1/bookings/{id}/no-show: the booking with `party` in its `no_show`. */
  async mark(actor: Pick<Actor, 'accountId' | 'livemode' | 'clock'>, id: string, party: NoShowParty) {
    const found =
      isPrefixedId(id) && id.startsWith('booking_')
        ? await repo.findBooking(this.db, actor.accountId, id, actor.livemode)
        : undefined;
    if (!found) throw new NotFound('No booking with this id');
    const row = await withTransaction(this.db, async (trx) => {
      const b = (await repo.lockBooking(trx, found.id)) ?? found;
      markable(b, actor.clock.nowMs());
      if (b.no_show.includes(party)) return b;
      const marked = await repo.updateBooking(trx, b.id, {
        no_show: PARTIES.filter((p) => p === party || b.no_show.includes(p)),
        updated_at: actor.clock.now(),
      });
      await this.needs.webhooks.emit(trx, {
        accountId: marked.account_id,
        type: 'booking.no_show',
        data: { booking: presentBooking(marked), party },
        livemode: marked.livemode,
      });
      return marked;
    });
    return { booking: presentBooking(row) };
  }
}

/** 409 for a booking no longer (or not yet) confirmed, 422 before its start (`now`, its mode's). */
function markable(b: BookingRow, now: number): void {
  if (b.status === 'cancelled' || b.status === 'expired') {
    throw new Conflict(`A ${b.status} booking cannot be marked as a no-show`, { code: 'booking_not_live' });
  }
  if (b.status === 'pending_payment') {
    throw new Conflict('A booking waiting for its payment cannot be marked as a no-show', {
      code: 'payment_pending',
    });
  }
  if (new Date(b.start_time).getTime() > now) {
    throw new Unprocessable('The booking has not started yet; mark a no-show after its start', {
      code: 'booking_not_started',
    });
  }
}
