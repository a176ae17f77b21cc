// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { TestClockApi, TestClockNeeds } from './api.js';
import { testClockRoutes } from './routes.js';
import { TestClockService } from './service.js';

/** The test clock (docs/api.md#test-clock): its routes, and test mode's timed work on each account's clock. */
export const testClockModule = defineModule<TestClockNeeds>()({
  name: 'testClock',
  needs: [],
  create({ platform, extensions }) {
    const clocks = new TestClockService(platform, extensions);
    const api: TestClockApi = clocks;
    return {
      api,
      routes: (app) => testClockRoutes(app, clocks),
      schedules: [{ name: 'test-clock-sweep', everyMs: 30_000, run: () => clocks.sweep() }],
    };
  },
});
