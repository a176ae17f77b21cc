/**
 * Remembered availability answers. A booking page asks the same question again and again (same
 * principal, window and duration) while nothing it depends on changes; computing 30 days of slots and
 * rendering them costs more than sending them (bench/availability.ts), so each answer is remembered
 * under a key naming everything it is computed from.
 *
 * Inputs that are objects are named by identity: busy sources hand out the same interval array for the
 * same question while their data is unchanged (a new array when it changes), and cached principal
 * profiles keep their schedule object until the schedule changes. `idOf` numbers such objects through
 * a WeakMap and never reuses a number, so an answer computed from old data can never be found under
 * a key made from new data: there is nothing to invalidate. Old entries simply stop being asked for
 * and are evicted, least recently used first, within a byte budget.
 *
 * An answer is kept only when its key comes back (`admit`): a question asked once (a new window each
 * time) would otherwise fill the budget with answers nobody asks for again, and the garbage collector
 * with their churn. The first sight of a key costs a few bytes in a bounded set of recent keys.
 */

export class AnswerMemo<V> {
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;
  /** Insertion order is recency order: a hit moves its entry to the end. */
  private readonly entries = new Map<string, { value: V; size: number }>();
  private bytes = 0;
  /** Keys seen once and not (yet) kept; emptied when it grows past `maxSeen`. */
  private readonly seen = new Set<string>();

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
    private readonly maxSeen = 20_000,
  ) {}

  /**
   * Whether an answer computed for `key` should be kept: true from the second time a key is asked
   * (after a miss) within the recent-keys window.
   */
  admit(key: string): boolean {
    if (this.seen.delete(key)) return true;
    if (this.seen.size >= this.maxSeen) this.seen.clear();
    this.seen.add(key);
    return false;
  }

  /** A number for `o`, the same for the same object, never given to another one. */
  idOf(o: object): number {
    let id = this.ids.get(o);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(o, id);
    }
    return id;
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, value: V): void {
    const size = this.sizeOf(value) + key.length * 2 + 64;
    if (size > this.maxBytes / 8) return; // one huge answer must not flush everything else
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.bytes -= old.size;
    }
    while (this.bytes + size > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.bytes -= this.entries.get(oldest.value)!.size;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, size });
    this.bytes += size;
  }

  /** Entries and bytes held (for tests and metrics). */
  get stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
