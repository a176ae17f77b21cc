import type { Migration } from 'kysely';
import * as m0001 from './0001_platform.js';
import * as m0002 from './0002_webhooks.js';

/** Every migration, in order. Modules append theirs here: `'0002_webhooks': m0002`. */
export const migrations: Record<string, Migration> = {
  '0001_platform': m0001,
  '0002_webhooks': m0002,
};
