/** Table types of the principals module (migration 0003_principals), merged into the database type. */
import type { Json, Timestamp } from '../../db/types.js';
import type { ScheduleOverride, WeeklyRule } from '../../lib/schedule.js';

export interface SchedulesTable {
  principal_id: string;
  timezone: string;
  weekly: Json<WeeklyRule[]>;
  overrides: Json<ScheduleOverride[]>;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  minimum_notice_minutes: number;
  max_days_ahead: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    schedules: SchedulesTable;
  }
}
