import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { Notifier } from './notify.js';

/** A "store" that accepts connections and never answers; `open` counts the sockets not yet closed. */
async function silentStore(): Promise<{ url: string; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.resume(); // reads (and ignores) what it is sent, so that it sees the other end close
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgres://nobody@127.0.0.1:${port}/none`,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('the LISTEN connection', () => {
  let cleanup: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await cleanup?.();
    cleanup = null;
  });

  it('fails a start against a store that accepts the connection and never answers, and leaves no socket open', async () => {
    const store = await silentStore();
    cleanup = store.close;
    const notifier = new Notifier(store.url, () => {}, 300);
    const began = Date.now();
    await expect(notifier.start()).rejects.toThrow(/timeout/i);
    expect(Date.now() - began).toBeLessThan(5_000);
    await notifier.close();
    await expect.poll(store.open).toBe(0);
  });

  it('starts and hears a notification on a real store within its answer timeout', async () => {
    const database: TestDatabase = await createTestDatabase();
    const notifier = new Notifier(database.url, () => {}, 2_000);
    cleanup = async () => {
      await notifier.close();
      await database.drop();
    };
    const heard: string[] = [];
    await notifier.start();
    await notifier.listen('kairos_notify_test', (p) => heard.push(p));
    const { default: pg } = await import('pg');
    const sender = new pg.Client({ connectionString: database.url });
    await sender.connect();
    await sender.query(`NOTIFY kairos_notify_test, 'hello'`);
    await sender.end();
    await expect.poll(() => heard).toEqual(['hello']);
  });
});
