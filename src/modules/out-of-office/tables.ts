/** Table types of the outOfOffice module (migration 0027_out_of_office), merged into the database type. */
import type { Timestamp } from '../../db/types.js';

export interface OutOfOfficeTable {
  /** False for ranges made in test mode (docs/api.md#test-mode): busy in test mode only. */
  livemode: boolean;
  /** `ooo_…` */
  id: string;
  account_id: string;
  principal_id: string;
  start_time: Timestamp;
  end_time: Timestamp;
  note: string | null;
  created_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    out_of_office: OutOfOfficeTable;
  }
}
