import { sql } from 'kysely';
import type { Db } from '../db/store.js';
import type { Clock } from './clock.js';

/** The most a test clock may run ahead of real time, in all (docs/api.md#test-clock). */
export const TEST_CLOCK_MAX_OFFSET_MS = 400 * 86_400_000;

/** Real time moved by a fixed offset: an account's test clock. */
export class OffsetClock implements Clock {
  constructor(
    private readonly base: Clock,
    readonly offsetMs: number,
  ) {}
  now(): Date {
    return new Date(this.base.nowMs() + this.offsetMs);
  }
  nowMs(): number {
    return this.base.nowMs() + this.offsetMs;
  }
}

/** A clock that stands at one instant: test-mode work done "as at" a time the clock passes. */
export class FixedClock implements Clock {
  constructor(private readonly ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
  nowMs(): number {
    return this.ms;
  }
}

/**
 * The test clocks (docs/api.md#test-clock), one per account, kept in `test_clocks` as an offset from
 * the server's clock (no row: zero). Live mode never reads them: `clockFor(…, true)` is the server's
 * clock without a statement. The platform owns them because the gate gives every test-mode request
 * its clock; the testClock module serves the routes and moves them (`moveForward`).
 */
export class TestClocks {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The account's offset; `db`: a transaction of the caller's to read it in. */
  async offsetMs(accountId: string, db: Pick<Db, 'selectFrom'> = this.db): Promise<number> {
    const row = await db
      .selectFrom('test_clocks')
      .select('offset_ms')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row ? Number(row.offset_ms) : 0;
  }

  /** The account's test clock (one statement). */
  async testClock(accountId: string): Promise<OffsetClock> {
    return new OffsetClock(this.clock, await this.offsetMs(accountId));
  }

  /** The clock of one mode of an account: the server's for live mode, the test clock for test mode. */
  async clockFor(accountId: string, livemode = false): Promise<Clock> {
    return livemode ? this.clock : this.testClock(accountId);
  }

  /** Every account that has a test clock row, with its clock (the periodic test-mode sweep). */
  async all(): Promise<{ accountId: string; clock: OffsetClock }[]> {
    const rows = await this.db.selectFrom('test_clocks').select(['account_id', 'offset_ms']).execute();
    return rows.map((r) => ({
      accountId: r.account_id,
      clock: new OffsetClock(this.clock, Number(r.offset_ms)),
    }));
  }

  /** Gives the account a test clock row (offset zero) if it has none: done when a test key is made. */
  async ensure(accountId: string): Promise<void> {
    await this.db
      .insertInto('test_clocks')
      .values({ account_id: accountId })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
  }

  /**
   * Moves the account's test clock forward, one mover at a time: the row is locked for the whole move
   * (a second advance waits for the first and starts from where it ended). `target(nowMs)` gets the
   * clock's time under the lock and returns where it is to stand (it throws to refuse; nothing moved);
   * `work(fromMs, toMs)` runs while the lock is held, before the new offset commits, so whatever it
   * makes due is done before anyone sees the clock past it. Returns the clock as it then stands.
   */
  async moveForward(
    accountId: string,
    target: (nowMs: number, offsetMs: number) => number,
    work: (fromMs: number, toMs: number) => Promise<void>,
  ): Promise<OffsetClock> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('test_clocks')
        .values({ account_id: accountId })
        .onConflict((oc) => oc.column('account_id').doNothing())
        .execute();
      const row = await trx
        .selectFrom('test_clocks')
        .select('offset_ms')
        .where('account_id', '=', accountId)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const offset = Number(row.offset_ms);
      const from = this.clock.nowMs() + offset;
      const to = target(from, offset);
      await work(from, to);
      // The clock moves by exactly what was asked; real time that passed while the work ran is time
      // the clock ran on, as it always does.
      const next = offset + (to - from);
      await trx
        .updateTable('test_clocks')
        .set({ offset_ms: next, updated_at: sql<Date>`now()` })
        .where('account_id', '=', accountId)
        .execute();
      return new OffsetClock(this.clock, next);
    });
  }
}
