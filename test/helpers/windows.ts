/**
 * The per-key rate limit counts in fixed hourly windows (docs/api.md, Rate limits). A test that
 * counts requests against it waits, when the next window is about to begin, until it has: two
 * requests either side of the hour would count in different windows.
 */
import { HOUR } from '../../src/lib/time.js';

/** Resolves once at least `marginMs` remain before the next hourly window begins. */
export async function clearOfHourBoundary(marginMs = 15_000): Promise<void> {
  const left = HOUR - (Date.now() % HOUR);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}
