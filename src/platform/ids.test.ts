import { describe, expect, it } from 'vitest';
import { isPrefixedId, prefixedId } from './ids.js';

describe('prefixed ids', () => {
  it('have the documented shape and sort by the millisecond they were made in', () => {
    const a = prefixedId('req', Date.UTC(2026, 0, 1));
    const b = prefixedId('req', Date.UTC(2026, 0, 1) + 1);
    const c = prefixedId('req', Date.UTC(2031, 5, 1));
    for (const id of [a, b, c]) expect(isPrefixedId(id)).toBe(true);
    expect([c, a, b].sort()).toEqual([a, b, c]);
    // The time part is the same for ids of one millisecond; the random part is not.
    const d = prefixedId('req', Date.UTC(2026, 0, 1));
    expect(d.slice(0, 14)).toBe(a.slice(0, 14));
    expect(d).not.toBe(a);
  });

  it('draw their random part evenly from all 32 characters, across pool refills, never twice alike', () => {
    const seen = new Set<string>();
    const counts = new Map<string, number>();
    const n = 20_000; // 320,000 random characters: about 78 refills of the pool
    for (let i = 0; i < n; i++) {
      const id = prefixedId('whd', 1_800_000_000_000);
      seen.add(id);
      for (const ch of id.slice(14)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(seen.size).toBe(n);
    expect(counts.size).toBe(32);
    const expected = (n * 16) / 32;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.05);
  });
});
