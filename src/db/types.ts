import type { ColumnType } from 'kysely';

/**
 * The database type, empty here: src/db knows no module. Whoever owns a table registers its type in
 * its own `tables.ts` by declaration merging (docs/architecture.md#house-rules):
 *   declare module '../../db/types.js' { interface DB { webhooks: WebhooksTable } }
 * Modules in src/modules/<name>/tables.ts, the platform in src/platform/tables.ts, the job runner in
 * src/jobs/tables.ts. `npm run check:house` builds the table → owner map from those files.
 */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type Json<T = unknown> = ColumnType<T, string, string>;

// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging from each owner's tables.ts
export interface DB {}
