import pg from 'pg';

type Handler = (payload: string) => void;

/** The longest wait between two reconnection attempts. */
const MAX_RETRY_MS = 2_000;
/**
 * How long connecting, or a LISTEN, may take before it counts as failed (by default): a store that
 * accepts the connection and then never answers fails a start (or is retried, after a loss) instead of
 * holding it.
 */
const ANSWER_TIMEOUT_MS = 10_000;

/**
 * One dedicated connection that LISTENs for every channel this process cares about (auth cache
 * invalidation, job wake-ups). Reconnects with backoff (at most `MAX_RETRY_MS` apart, so a restarted
 * store is heard again within seconds). Notifications sent while disconnected are lost, so a cache that
 * relies on them stops serving when the connection is lost (onDisconnect) and starts again empty when
 * it is back (onReconnect).
 */
export class Notifier {
  private client: pg.Client | null = null;
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly reconnectHandlers = new Set<() => void>();
  private readonly disconnectHandlers = new Set<() => void>();
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly answerTimeoutMs = ANSWER_TIMEOUT_MS,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.answerTimeoutMs,
      query_timeout: this.answerTimeoutMs,
    });
    client.on('notification', (msg) => {
      for (const h of this.handlers.get(msg.channel) ?? []) h(msg.payload ?? '');
    });
    client.on('error', (err) => {
      this.onError(err);
      this.scheduleReconnect();
    });
    client.on('end', () => this.scheduleReconnect());
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN "${channel}"`);
    } catch (err) {
      // Not left half-open: the caller retries (or the start fails) with a connection of its own.
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw err;
    }
    this.client = client;
  }

  private scheduleReconnect(delayMs = 250): void {
    if (this.closed || this.retryTimer) return;
    if (this.client) {
      this.client = null;
      for (const h of this.disconnectHandlers) h();
    }
    this.retryTimer = setTimeout(async () => {
      this.retryTimer = null;
      try {
        await this.connect();
        for (const h of this.reconnectHandlers) h();
      } catch (err) {
        this.onError(err);
        this.scheduleReconnect(Math.min(delayMs * 2, MAX_RETRY_MS));
      }
    }, delayMs);
    this.retryTimer.unref();
  }

  async listen(channel: string, handler: Handler): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      if (this.client) await this.client.query(`LISTEN "${channel}"`);
    }
    set.add(handler);
  }

  /** Runs `handler` each time the connection is back after a loss. */
  onReconnect(handler: () => void): void {
    this.reconnectHandlers.add(handler);
  }

  /**
   * Runs `handler(false)` each time the connection is lost (before any attempt to get it back) and
   * `handler(true)` each time it is back: a cache that relies on notifications serves only while live.
   */
  onLiveness(handler: (live: boolean) => void): void {
    this.disconnectHandlers.add(() => handler(false));
    this.reconnectHandlers.add(() => handler(true));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = null;
    if (c) {
      c.removeAllListeners('end');
      await c.end().catch(() => {});
    }
  }
}
