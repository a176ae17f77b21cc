import type { Migration } from 'kysely';
import * as m0001 from './0001_platform.js';
import * as m0002 from './0002_webhooks.js';
import * as m0003 from './0003_principals.js';
import * as m0004 from './0004_calendars.js';
import * as m0005 from './0005_calendar_busy_notify.js';
import * as m0006 from './0006_mail.js';
import * as m0007 from './0007_booking_links.js';
import * as m0008 from './0008_bookings.js';
import * as m0009 from './0009_calendar_writes.js';
import * as m0010 from './0010_payments.js';
import * as m0011 from './0011_network.js';
import * as m0012 from './0012_proposals.js';
import * as m0013 from './0013_booking_titles.js';
import * as m0014 from './0014_retention_indexes.js';
import * as m0015 from './0015_console.js';
import * as m0016 from './0016_mail_render.js';
import * as m0017 from './0017_locked_profiles.js';
import * as m0018 from './0018_schedule_seq.js';
import * as m0019 from './0019_notify_after_commit.js';
import * as m0020 from './0020_booking_length.js';
import * as m0021 from './0021_waitlist_waiting.js';
import * as m0022 from './0022_waitlist_window_ended.js';
import * as m0023 from './0023_user_names.js';
import * as m0024 from './0024_test_mode.js';
import * as m0025 from './0025_events.js';
import * as m0026 from './0026_series_seats.js';
import * as m0027 from './0027_out_of_office.js';
import * as m0028 from './0028_guests_no_show.js';

/** Every migration, in order. Modules append theirs here: `'0002_webhooks': m0002`. */
export const migrations: Record<string, Migration> = {
  '0001_platform': m0001,
  '0002_webhooks': m0002,
  '0003_principals': m0003,
  '0004_calendars': m0004,
  '0005_calendar_busy_notify': m0005,
  '0006_mail': m0006,
  '0007_booking_links': m0007,
  '0008_bookings': m0008,
  '0009_calendar_writes': m0009,
  '0010_payments': m0010,
  '0011_network': m0011,
  '0012_proposals': m0012,
  '0013_booking_titles': m0013,
  '0014_retention_indexes': m0014,
  '0015_console': m0015,
  '0016_mail_render': m0016,
  '0017_locked_profiles': m0017,
  '0018_schedule_seq': m0018,
  '0019_notify_after_commit': m0019,
  '0020_booking_length': m0020,
  '0021_waitlist_waiting': m0021,
  '0022_waitlist_window_ended': m0022,
  '0023_user_names': m0023,
  '0024_test_mode': m0024,
  '0025_events': m0025,
  '0026_series_seats': m0026,
  '0027_out_of_office': m0027,
  '0028_guests_no_show': m0028,
};
