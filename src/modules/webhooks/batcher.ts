/**
 * Coalesces concurrent calls into one run over all of them: the deliverer's many attempts in flight
 * each ask for their context and each record their outcome, and a batch turns N round trips and N
 * commits into one. A call waits at most for the run in progress to end (nothing waits for a batch
 * to fill), so an idle server pays only a turn of the event loop.
 */
export class Batcher<I, O> {
  private waiting: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  private runs = 0;

  /**
   * `run` answers one output per input, in order. At most `parallel` runs at once (a second run
   * overlaps the first's round trips), each of at most `max` items.
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly opts: { max: number; parallel: number },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.runs < this.opts.parallel) {
        this.runs++;
        // The calls made in this turn of the event loop join the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.opts.max);
      try {
        const out = await this.run(batch.map((b) => b.item));
        for (const [i, b] of batch.entries()) b.resolve(out[i]!);
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.runs--;
  }
}
