import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.js';

describe('Batcher', () => {
  it('runs the calls of one turn as one batch, later ones in the next, each answered in order', async () => {
    const runs: number[][] = [];
    const b = new Batcher<number, number>(
      async (items) => {
        runs.push(items);
        await new Promise((r) => setTimeout(r, 10));
        return items.map((i) => i * 2);
      },
      { max: 3, parallel: 1 },
    );
    const first = [1, 2, 3, 4].map((i) => b.submit(i));
    await new Promise((r) => setImmediate(r));
    const later = b.submit(5); // arrives while the first batch runs
    expect(await Promise.all([...first, later])).toEqual([2, 4, 6, 8, 10]);
    expect(runs).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('rejects every call of a failed batch, and the next batch runs', async () => {
    let fail = true;
    const b = new Batcher<string, string>(
      async (items) => {
        if (fail) throw new Error('boom');
        return items;
      },
      { max: 10, parallel: 2 },
    );
    const failed = await Promise.allSettled([b.submit('a'), b.submit('b')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await b.submit('c')).toBe('c');
  });
});
