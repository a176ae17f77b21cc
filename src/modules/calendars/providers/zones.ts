/** Time-zone name resolution shared by the ICS parser and the Graph client. */
import { IANAZone } from 'luxon';

/**
 * Windows zone ids still seen in Outlook/Exchange ICS feeds (TZID without VTIMEZONE) and in Graph
 * answers when a mailbox ignores the Prefer header. Not exhaustive: the common ones.
 */
const WINDOWS_ZONES: Record<string, string> = {
  'GMT Standard Time': 'Europe/London',
  'Greenwich Standard Time': 'Atlantic/Reykjavik',
  'W. Europe Standard Time': 'Europe/Berlin',
  'Romance Standard Time': 'Europe/Paris',
  'Central Europe Standard Time': 'Europe/Budapest',
  'Central European Standard Time': 'Europe/Warsaw',
  'E. Europe Standard Time': 'Europe/Chisinau',
  'FLE Standard Time': 'Europe/Kiev',
  'GTB Standard Time': 'Europe/Bucharest',
  'Russian Standard Time': 'Europe/Moscow',
  'Eastern Standard Time': 'America/New_York',
  'Central Standard Time': 'America/Chicago',
  'Mountain Standard Time': 'America/Denver',
  'US Mountain Standard Time': 'America/Phoenix',
  'Pacific Standard Time': 'America/Los_Angeles',
  'Alaskan Standard Time': 'America/Anchorage',
  'Hawaiian Standard Time': 'Pacific/Honolulu',
  'Atlantic Standard Time': 'America/Halifax',
  'E. South America Standard Time': 'America/Sao_Paulo',
  'India Standard Time': 'Asia/Kolkata',
  'China Standard Time': 'Asia/Shanghai',
  'Tokyo Standard Time': 'Asia/Tokyo',
  'Korea Standard Time': 'Asia/Seoul',
  'Singapore Standard Time': 'Asia/Singapore',
  'Arabian Standard Time': 'Asia/Dubai',
  'South Africa Standard Time': 'Africa/Johannesburg',
  'AUS Eastern Standard Time': 'Australia/Sydney',
  'New Zealand Standard Time': 'Pacific/Auckland',
};

const UTC_NAMES = new Set([
  'utc',
  'gmt',
  'z',
  'etc/utc',
  'etc/gmt',
  'tzone://microsoft/utc',
  'coordinated universal time',
]);

/**
 * Maps a zone name to a valid IANA id, or undefined. Accepts IANA ids, the old
 * `/mozilla.org/20050126_1/Europe/Paris`-style prefixed ids, Windows ids and UTC spellings.
 */
export function resolveZoneName(name: string): string | undefined {
  const n = name.trim().replace(/^"|"$/g, '');
  if (UTC_NAMES.has(n.toLowerCase())) return 'UTC';
  if (IANAZone.isValidZone(n)) return n;
  const win = WINDOWS_ZONES[n];
  if (win) return win;
  // Prefixed ids: try the last two and three path segments.
  const parts = n.split('/').filter(Boolean);
  for (const take of [3, 2]) {
    if (parts.length > take) {
      const candidate = parts.slice(-take).join('/');
      if (IANAZone.isValidZone(candidate)) return candidate;
    }
  }
  return undefined;
}
