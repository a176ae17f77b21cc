/** The calendars module's background work: busy-time refreshes and Google grant revocations. */
import type { Job } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import type { JobContribution, ScheduleContribution } from '../module.js';
import type { CalendarBusySource } from './busy-cache.js';
import type { ProviderGateway } from './gateway.js';
import { OAuthError } from './providers/index.js';

/** Jobs revoking the grants of removed Google connections; tried this many times (2, 4, 8… min apart). */
export const REVOKE_QUEUE = 'calendar-token-revoke';
const REVOKE_ATTEMPTS = 6;

export interface CalendarJobsDeps {
  busySource: Pick<CalendarBusySource, 'work'>;
  gateway: Pick<ProviderGateway, 'revokeGoogle'>;
  clock: Pick<Clock, 'nowMs'>;
  log: { error(obj: object, msg: string): void };
}

/** Background work of the calendars module: busy-time refreshes and token revocations. */
export function calendarWork(deps: CalendarJobsDeps): {
  jobs: JobContribution[];
  schedules: ScheduleContribution[];
} {
  const busy = deps.busySource.work();
  const revoke: JobContribution = {
    queue: REVOKE_QUEUE,
    handler: async (job: Job<{ credentials_enc: string }>) => {
      try {
        await deps.gateway.revokeGoogle(job.payload.credentials_enc);
      } catch (err) {
        if (!(err instanceof OAuthError) || job.attempts >= REVOKE_ATTEMPTS) {
          deps.log.error({ err, attempts: job.attempts }, 'revoking a removed Google grant failed');
          return;
        }
        return { retryAt: new Date(deps.clock.nowMs() + 60_000 * 2 ** job.attempts) };
      }
    },
    options: { concurrency: 4 },
  };
  return { jobs: [...busy.jobs, revoke], schedules: busy.schedules };
}
