import { describe, expect, it } from 'vitest';
import { isTokenShape, pooledRandomBytes, randomToken } from './crypto.js';

describe('random bytes from the pool', () => {
  it('are handed out once each, across refills, with every byte value about equally often', () => {
    const seen = new Set<string>();
    const counts = new Uint32Array(256);
    const n = 20_000; // 320,000 bytes: about 78 refills of the pool
    for (let i = 0; i < n; i++) {
      const b = pooledRandomBytes(16);
      expect(b.length).toBe(16);
      seen.add(b.toString('hex'));
      for (const byte of b) counts[byte]!++;
    }
    expect(seen.size).toBe(n);
    const expected = (n * 16) / 256;
    for (const count of counts) expect(Math.abs(count - expected) / expected).toBeLessThan(0.15);
  });

  it('keep what was handed out unchanged when the pool is refilled', () => {
    const first = pooledRandomBytes(32);
    const copy = Buffer.from(first);
    for (let i = 0; i < 300; i++) pooledRandomBytes(100); // several refills
    expect(first.equals(copy)).toBe(true);
  });

  it('make tokens of the documented shape, and more than a pool at once when asked', () => {
    expect(isTokenShape(randomToken())).toBe(true);
    expect(randomToken(16)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(pooledRandomBytes(10_000).length).toBe(10_000);
  });
});
