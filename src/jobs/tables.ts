/** Table types of the job runner (migration 0001_platform), merged into the database type. */
import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../db/types.js';

export interface JobsTable {
  id: Generated<string>;
  queue: string;
  payload: Json;
  run_at: Timestamp;
  attempts: number;
  locked_by: string | null;
  locked_until: Timestamp | null;
  last_error: string | null;
  created_at: Timestamp;
}

export interface JobSchedulesTable {
  name: string;
  next_run_at: Timestamp;
}

declare module '../db/types.js' {
  interface DB {
    jobs: JobsTable;
    job_schedules: JobSchedulesTable;
  }
}
