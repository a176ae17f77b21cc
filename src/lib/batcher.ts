/**
 * Questions asked in the same turn of the event loop, answered together by one call (one statement
 * for many requests: docs/design.md, "Access checks asked together").
 *
 * Every question is answered by a call that starts after the question was asked: a question is never
 * joined to a call already under way. So an answer read from the database is as fresh as if the
 * question had been asked alone (it sees every commit made before the question), which is what lets
 * access checks be shared between requests without weakening "a revocation holds for the next
 * request".
 *
 * Questions wait for the end of the turn (`setImmediate`: the requests read in one poll phase ask
 * together), and while `maxInFlight` calls are under way, until one of them ends. A call's failure
 * fails the questions it carried, and only those.
 */

export interface BatcherOptions {
  /** At most this many questions in one call (default 256). */
  maxBatch?: number;
  /** At most this many calls under way at once (default 2). */
  maxInFlight?: number;
}

interface Waiting<Q, A> {
  question: Q;
  resolve: (answer: A) => void;
  reject: (err: unknown) => void;
}

export class Batcher<Q, A> {
  private queue: Waiting<Q, A>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  /** `answer(questions)` answers each question, in order (an array as long as `questions`). */
  constructor(
    private readonly answer: (questions: readonly Q[]) => Promise<readonly A[]>,
    opts: BatcherOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 256;
    this.maxInFlight = opts.maxInFlight ?? 2;
  }

  ask(question: Q): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      this.queue.push({ question, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      this.queue = batch === this.queue ? [] : this.queue.slice(this.maxBatch);
      this.inFlight++;
      void this.run(batch);
    }
  }

  private async run(batch: Waiting<Q, A>[]): Promise<void> {
    try {
      const answers = await this.answer(batch.map((w) => w.question));
      if (answers.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} questions got ${answers.length} answers`);
      }
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(answers[i]!);
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
