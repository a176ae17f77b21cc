import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.js';

/** A batcher over a fake store whose calls are recorded and finished by hand. */
function recorded(opts?: { maxBatch?: number; maxInFlight?: number }) {
  const calls: { questions: readonly number[]; finish: (fail?: Error) => void }[] = [];
  const batcher = new Batcher<number, string>(
    (questions) =>
      new Promise((resolve, reject) => {
        calls.push({
          questions,
          finish: (fail) => (fail ? reject(fail) : resolve(questions.map((q) => `answer ${q}`))),
        });
      }),
    opts,
  );
  return { batcher, calls };
}

describe('Batcher', () => {
  it('answers the questions of one turn with one call, each with its own answer', async () => {
    const { batcher, calls } = recorded();
    const asked = [1, 2, 3].map((q) => batcher.ask(q));
    await nextTurn();
    expect(calls.map((c) => c.questions)).toEqual([[1, 2, 3]]);
    calls[0]!.finish();
    expect(await Promise.all(asked)).toEqual(['answer 1', 'answer 2', 'answer 3']);
  });

  it('never joins a question to a call already under way: it goes in a call that starts after it', async () => {
    const { batcher, calls } = recorded({ maxInFlight: 1 });
    const first = batcher.ask(1);
    await nextTurn();
    expect(calls).toHaveLength(1);
    const second = batcher.ask(2);
    const third = batcher.ask(3);
    await nextTurn();
    expect(calls).toHaveLength(1); // the one call allowed is still under way: 2 and 3 wait
    calls[0]!.finish();
    expect(await first).toBe('answer 1');
    await nextTurn();
    expect(calls.map((c) => c.questions)).toEqual([[1], [2, 3]]);
    calls[1]!.finish();
    expect(await Promise.all([second, third])).toEqual(['answer 2', 'answer 3']);
  });

  it('starts a second call while one is under way when maxInFlight allows', async () => {
    const { batcher, calls } = recorded({ maxInFlight: 2 });
    const first = batcher.ask(1);
    await nextTurn();
    const second = batcher.ask(2);
    await nextTurn();
    expect(calls.map((c) => c.questions)).toEqual([[1], [2]]);
    calls[1]!.finish();
    calls[0]!.finish();
    expect(await Promise.all([first, second])).toEqual(['answer 1', 'answer 2']);
  });

  it('fails the questions of a failed call, and only those', async () => {
    const { batcher, calls } = recorded({ maxInFlight: 2 });
    const failed = [batcher.ask(1), batcher.ask(2)];
    await nextTurn();
    const later = batcher.ask(3);
    await nextTurn();
    calls[0]!.finish(new Error('connection lost'));
    for (const f of failed) await expect(f).rejects.toThrow('connection lost');
    calls[1]!.finish();
    expect(await later).toBe('answer 3');
  });

  it('splits a long queue into calls of at most maxBatch questions', async () => {
    const { batcher, calls } = recorded({ maxBatch: 2, maxInFlight: 5 });
    const asked = [1, 2, 3, 4, 5].map((q) => batcher.ask(q));
    await nextTurn();
    expect(calls.map((c) => c.questions)).toEqual([[1, 2], [3, 4], [5]]);
    for (const c of calls) c.finish();
    expect(await Promise.all(asked)).toHaveLength(5);
  });

  it('refuses an answer of the wrong length rather than answering questions with others’ answers', async () => {
    const batcher = new Batcher<number, number>(async (qs) => qs.slice(1));
    await expect(Promise.all([batcher.ask(1), batcher.ask(2)])).rejects.toThrow('got 1 answers');
  });
});
