import { afterAll, beforeAll } from 'vitest';
import { FakeClock } from '../../src/platform/clock.js';
import { startTestApp, type TestApp, type TestAppOptions } from './app.js';

/**
 * One test app for a whole file, on a FakeClock at `at` (default 2026-06-01T12:00Z; retention tests
 * move it): started before the file's tests, closed after them. `t` stands for the app once it has
 * started, so tests write `t.ctx…` as with an app of their own.
 */
export function clockedApp(opts: Omit<TestAppOptions, 'clock'> & { at?: string } = {}): {
  clock: FakeClock;
  t: TestApp;
} {
  const { at = '2026-06-01T12:00:00.000Z', ...appOpts } = opts;
  const clock = new FakeClock(at);
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp({ ...appOpts, clock });
  });
  afterAll(async () => {
    await app?.close();
  });
  const t = new Proxy({} as TestApp, {
    get(_, key) {
      if (!app) throw new Error('the app starts in beforeAll');
      return Reflect.get(app, key);
    },
  });
  return { clock, t };
}
