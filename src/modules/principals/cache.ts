/**
 * In-process cache of principal profiles (principal + effective schedule), so that availability reads
 * do not ask the database for them on every request. Entries live at most a minute; every change
 * (schedule, host update or delete) is announced with NOTIFY on PRINCIPALS_CHANNEL in the writing
 * transaction and drops the entry in every process at commit; a lost LISTEN connection clears the whole
 * cache when it comes back. Until `listen` has run, nothing is cached (no way to hear of changes).
 */
import type { Notifier } from '../../db/notify.js';
import type { Clock } from '../../platform/clock.js';

export const PRINCIPALS_CHANNEL = 'kairos_principals';
const TTL_MS = 60_000;
const MAX_ENTRIES = 100_000;

export class ProfileCache<T> {
  private readonly entries = new Map<string, { value: T; at: number }>();
  private active = false;
  /** Bumped by every invalidation; a read that overlapped one does not store its (maybe older) rows. */
  private gen = 0;

  constructor(private readonly clock: Clock) {}

  async listen(notifier: Notifier): Promise<void> {
    await notifier.listen(PRINCIPALS_CHANNEL, (id) => this.invalidate(id));
    notifier.onReconnect(() => this.clear());
    this.active = true;
  }

  /** The generation to pass to `store` for a read that starts now. */
  get generation(): number {
    return this.gen;
  }

  get(id: string): T | undefined {
    const hit = this.entries.get(id);
    if (hit === undefined) return undefined;
    if (this.clock.nowMs() - hit.at < TTL_MS) return hit.value;
    this.entries.delete(id);
    return undefined;
  }

  /** Stores values read since `generation`, unless an invalidation came in meanwhile. */
  store(generation: number, values: Iterable<[string, T]>): void {
    if (!this.active || generation !== this.gen) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const at = this.clock.nowMs();
    for (const [id, value] of values) this.entries.set(id, { value, at });
  }

  invalidate(id: string): void {
    this.gen++;
    this.entries.delete(id);
  }

  clear(): void {
    this.gen++;
    this.entries.clear();
  }
}
