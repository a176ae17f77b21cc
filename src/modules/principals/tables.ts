/** Table types of the principals module (migrations 0001_platform, 0003_principals, 0018_schedule_seq), merged into the DB type. */
import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../../db/types.js';
import type { ScheduleOverride, WeeklyRule } from '../../lib/schedule.js';

export interface PrincipalsTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  id: string;
  kind: 'account' | 'host' | 'user';
  account_id: string;
  display_name: string;
  email: string | null;
  timezone: string;
  status: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
  /** Bumped by every schedule write (repo.upsertSchedule); equals the schedule row's `seq`. */
  schedule_seq: Generated<number>;
}

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
  /** Its principal's `schedule_seq` when it was written. */
  seq: Generated<number>;
}

declare module '../../db/types.js' {
  interface DB {
    principals: PrincipalsTable;
    schedules: SchedulesTable;
  }
}
