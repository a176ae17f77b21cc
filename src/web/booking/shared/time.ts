/**
 * Dates as a visitor sees them: days (`YYYY-MM-DD`) and months (`YYYY-MM`) in the visitor's time
 * zone, labels in the browser's language. Instants stay ISO strings / epoch milliseconds; only the
 * labels and the grouping by day depend on the zone.
 */

const formats = new Map<string, Intl.DateTimeFormat>();
function format(key: string, options: Intl.DateTimeFormatOptions, locale?: string): Intl.DateTimeFormat {
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, options);
    formats.set(key, f);
  }
  return f;
}

/** The browser's time zone (IANA), or UTC. */
export function detectedZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Every zone the browser knows, with `current` and UTC among them. */
export function zones(current: string): string[] {
  let list: string[] = [];
  try {
    list = Intl.supportedValuesOf('timeZone');
  } catch {
    // an older browser: the detected zone and UTC only
  }
  if (!list.includes('UTC')) list = [...list, 'UTC'];
  if (!list.includes(current)) list = [current, ...list];
  return list;
}

/** Whether the browser accepts `zone` as an IANA time zone. */
export function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The day (`YYYY-MM-DD`) an instant falls on in `zone`. */
export function dayKey(ms: number, zone: string): string {
  // en-CA writes dates as YYYY-MM-DD: one format() instead of formatToParts() for every slot.
  const text = format(
    `day:${zone}`,
    { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' },
    'en-CA',
  ).format(ms);
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return text;
  const parts = format(
    `dayp:${zone}`,
    { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' },
    'en-US',
  ).formatToParts(ms);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** Noon UTC of a `YYYY-MM-DD` day or the 15th of a `YYYY-MM` month: a safe instant to label it. */
function noon(key: string): number {
  const [y, m, d] = key.split('-').map(Number);
  return Date.UTC(y ?? 1970, (m ?? 1) - 1, d ?? 15, 12);
}

export function dayLabel(day: string, withYear = false): string {
  return format(`dl:${withYear}`, {
    timeZone: 'UTC',
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    ...(withYear ? { year: 'numeric' } : {}),
  }).format(noon(day));
}

export function monthLabel(month: string): string {
  return format('ml', { timeZone: 'UTC', month: 'long', year: 'numeric' }).format(noon(month));
}

export function timeLabel(iso: string, zone: string): string {
  return format(`t:${zone}`, { timeZone: zone, hour: 'numeric', minute: '2-digit' }).format(Date.parse(iso));
}

/** "Tuesday, 3 March 2026, 10:00 – 10:30" in `zone`. */
export function whenLabel(start: string, end: string, zone: string): string {
  return `${dayLabel(dayKey(Date.parse(start), zone), true)}, ${timeLabel(start, zone)} – ${timeLabel(end, zone)}`;
}

export function zoneLabel(zone: string): string {
  return zone.replace(/_/g, ' ');
}

export function addMonths(month: string, n: number): string {
  const [y, m] = month.split('-').map(Number);
  const d = new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1 + n, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Weekday names, short and long, Monday first. */
export function weekdays(): { short: string; long: string }[] {
  const out: { short: string; long: string }[] = [];
  for (let i = 0; i < 7; i++) {
    const ms = Date.UTC(2024, 0, 1 + i, 12); // 1 January 2024 was a Monday
    out.push({
      short: format('wd', { timeZone: 'UTC', weekday: 'short' }).format(ms),
      long: format('wl', { timeZone: 'UTC', weekday: 'long' }).format(ms),
    });
  }
  return out;
}

/** The weeks of a month, Monday first: day keys, null for the cells before the 1st and after the last. */
export function monthWeeks(month: string): (string | null)[][] {
  const [y, m] = month.split('-').map(Number);
  const year = y ?? 1970;
  const mon = (m ?? 1) - 1;
  const days = new Date(Date.UTC(year, mon + 1, 0)).getUTCDate();
  const lead = (new Date(Date.UTC(year, mon, 1)).getUTCDay() + 6) % 7;
  const cells: (string | null)[] = Array.from({ length: lead }, () => null);
  for (let d = 1; d <= days; d++) cells.push(`${month}-${String(d).padStart(2, '0')}`);
  while (cells.length % 7) cells.push(null);
  const weeks: (string | null)[][] = [];
  for (let i = 0; i < cells.length; i += 7) weeks.push(cells.slice(i, i + 7));
  return weeks;
}

const HOUR = 3_600_000;

/**
 * The instants to ask availability for so that every day of `month` in any zone is covered (zones
 * are at most 14 hours from UTC), from `now` on; null when the month is over.
 */
export function monthWindow(month: string, now: number): { from: number; to: number } | null {
  const [y, m] = month.split('-').map(Number);
  const start = Date.UTC(y ?? 1970, (m ?? 1) - 1, 1) - 14 * HOUR;
  const end = Date.UTC(y ?? 1970, m ?? 1, 1) + 14 * HOUR;
  const from = Math.max(start, Math.floor(now / 60_000) * 60_000);
  return from < end ? { from, to: end } : null;
}

/** An amount in minor units as the browser writes money ("€45.00"). */
export function money(amount: number, currency: string): string {
  try {
    const f = new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() });
    const digits = f.resolvedOptions().maximumFractionDigits ?? 2;
    return f.format(amount / 10 ** digits);
  } catch {
    return `${amount} ${currency.toUpperCase()}`;
  }
}

/** How far `zone` is ahead of UTC at instant `ms`, in milliseconds. */
function zoneOffset(ms: number, zone: string): number {
  const parts = format(
    `off:${zone}`,
    {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    },
    'en-US',
  ).formatToParts(ms);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour') % 24,
    get('minute'),
    get('second'),
  );
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** The instant a wall-clock day (`YYYY-MM-DD`) and time (`HH:MM`) in `zone` names; NaN if malformed. */
export function zonedInstant(day: string, time: string, zone: string): number {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  const t = /^(\d{2}):(\d{2})$/.exec(time);
  if (!d || !t) return Number.NaN;
  const wall = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(t[1]), Number(t[2]));
  // Twice: the offset at the first guess may differ from the offset at the answer (a DST change).
  const first = wall - zoneOffset(wall, zone);
  return wall - zoneOffset(first, zone);
}
