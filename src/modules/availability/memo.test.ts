import { describe, expect, it } from 'vitest';
import { AnswerMemo } from './memo.js';

describe('AnswerMemo', () => {
  it('names objects by identity and never gives a number to two objects', () => {
    const memo = new AnswerMemo<string>(1 << 20, (v) => v.length);
    const a = [1];
    const b = [1];
    expect(memo.idOf(a)).toBe(memo.idOf(a));
    expect(memo.idOf(a)).not.toBe(memo.idOf(b));
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) seen.add(memo.idOf({}));
    expect(seen.size).toBe(1000);
  });

  it('keeps what fits in its byte budget, evicting the least recently used first', () => {
    // Each entry: 900 bytes of value + 2 x 2 bytes of key + 64 bytes of bookkeeping = 968; 8 fit.
    const memo = new AnswerMemo<string>(8_000, (v) => v.length);
    const value = 'x'.repeat(900);
    for (let i = 0; i < 8; i++) memo.set(`k${i}`, value);
    expect(memo.stats.entries).toBe(8);
    expect(memo.get('k0')).toBe(value); // k0 is now the most recently used
    memo.set('k8', value);
    expect(memo.get('k1')).toBeUndefined(); // the least recently used went
    expect(memo.get('k0')).toBe(value);
    expect(memo.get('k8')).toBe(value);
    expect(memo.stats.entries).toBe(8);
    expect(memo.stats.bytes).toBeLessThanOrEqual(8_000);
  });

  it('admits an answer the second time its key is asked, within a bounded window of recent keys', () => {
    const memo = new AnswerMemo<string>(1 << 20, (v) => v.length, 3);
    expect(memo.admit('a')).toBe(false);
    expect(memo.admit('a')).toBe(true);
    expect(memo.admit('a')).toBe(false); // kept by now, or asked afresh
    for (const k of ['b', 'c', 'd']) memo.admit(k); // the window of 3 fills and starts over
    expect(memo.admit('b')).toBe(false);
  });

  it('replaces an entry under the same key, and does not store one answer too big for the budget', () => {
    const memo = new AnswerMemo<string>(8_000, (v) => v.length);
    memo.set('k', 'a');
    memo.set('k', 'b');
    expect(memo.get('k')).toBe('b');
    expect(memo.stats.entries).toBe(1);
    memo.set('huge', 'x'.repeat(2000));
    expect(memo.get('huge')).toBeUndefined();
    expect(memo.get('k')).toBe('b');
  });
});
