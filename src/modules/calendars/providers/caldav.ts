/**
 * CalDAV (RFC 4791) over raw WebDAV XML and the injected fetch: discovery (RFC 6764 / 5397) and busy
 * time via calendar-query REPORT with a time-range filter. Returned VEVENT data always goes through
 * parseIcsBusy, so recurrences are right whether or not the server honours <C:expand>.
 *
 * Write-through (events.ts): caldavPutEvent stores a Kairos event at `<calendar>/<ref>.ics` with
 * conditional PUTs (If-None-Match: * to create, If-Match to update), caldavDeleteEvent removes it.
 * parseIcsBusy skips these events again (UID `…@kairos`, X-KAIROS-MEETING).
 *
 * tsdav 2.3 does accept a custom fetch, but raw requests keep the exact XML, the URL guard and the
 * error mapping in one place, and avoid depending on tsdav's own fetch types.
 */
import ical, { ICalEventStatus, ICalEventTransparency } from 'ical-generator';
import { type Clock, systemClock } from '../../../platform/clock.js';
import { networkError, ProviderError } from './errors.js';
import { answerError, codeForStatus } from './http.js';
import { type EventSpec, ICAL_KAIROS_PROPERTY, KAIROS_UID_SUFFIX, type WrittenEvent } from './events.js';
import { parseIcsEvents } from './ics.js';
import { type Interval, normalizedCopy } from '../../../lib/intervals.js';
import {
  assertWindow,
  type BusyResult,
  type CalendarError,
  type HttpFetch,
  mapLimit,
  type TitledInterval,
} from './types.js';
import { child, children, descendants, escapeXml, parseXml, type XmlElement } from './xml.js';

export { ProviderError } from './errors.js';

export interface CaldavCredentials {
  serverUrl: string;
  username: string;
  password: string;
}

export interface CaldavCalendar {
  /** Absolute collection URL, with a trailing slash as the server gave it. */
  url: string;
  displayName: string;
  ctag?: string;
  color?: string;
}

export interface CaldavOptions {
  /** caldavBusy: also answer every busy occurrence with its SUMMARY (`events`). */
  withTitles?: boolean;
  /** Zone for floating times and all-day events in the data (default UTC). */
  defaultZone?: string;
  clock?: Pick<Clock, 'nowMs'>;
}

const DAV = 'DAV:';
const CALDAV = 'urn:ietf:params:xml:ns:caldav';
const CS = 'http://calendarserver.org/ns/';
const APPLE = 'http://apple.com/ns/ical/';
const CONCURRENCY = 3;

interface DavResponse {
  href: string;
  /** Absolute URL of href, resolved against the request URL. */
  url: string;
  /** Response-level status when there is no propstat (e.g. 404 for a missing member). */
  status?: number;
  /** Properties whose propstat status was 2xx. */
  props: XmlElement[];
}

export async function caldavDiscover(
  creds: CaldavCredentials,
  fetch: HttpFetch,
  opts: CaldavOptions = {},
): Promise<CaldavCalendar[]> {
  const client = new DavClient(creds, fetch, opts);
  const start = client.resolve(creds.serverUrl, creds.serverUrl);
  const body = propfindBody([
    [DAV, 'current-user-principal'],
    [DAV, 'resourcetype'],
    [DAV, 'displayname'],
    [CALDAV, 'calendar-home-set'],
  ]);
  let first = await client.propfindOrNull(start, 0, body);
  if (!first || !hasProp(first, DAV, 'current-user-principal')) {
    // RFC 6764 bootstrapping: the context path lives at /.well-known/caldav.
    const wellKnown = new URL('/.well-known/caldav', start).toString();
    const alt = await client.propfindOrNull(wellKnown, 0, body);
    if (alt && (hasProp(alt, DAV, 'current-user-principal') || !first)) first = alt;
  }
  if (!first) throw new ProviderError('bad_request', 404, 'no CalDAV service found at this URL');

  // The URL may already be a calendar collection: use it as the only calendar.
  const own = first[0];
  if (own && isCalendar(own)) return [toCalendar(own)];

  let homes = hrefsOf(first, CALDAV, 'calendar-home-set');
  if (homes.length === 0) {
    const principal = hrefsOf(first, DAV, 'current-user-principal')[0];
    if (!principal) throw new ProviderError('bad_request', 404, 'server did not name a principal');
    const p = await client.propfind(principal, 0, propfindBody([[CALDAV, 'calendar-home-set']]));
    homes = hrefsOf(p, CALDAV, 'calendar-home-set');
    if (homes.length === 0) throw new ProviderError('bad_request', 404, 'principal has no calendar-home-set');
  }
  const listBody = propfindBody([
    [DAV, 'resourcetype'],
    [DAV, 'displayname'],
    [CALDAV, 'supported-calendar-component-set'],
    [CS, 'getctag'],
    [APPLE, 'calendar-color'],
  ]);
  const seen = new Set<string>();
  const out: CaldavCalendar[] = [];
  for (const home of homes) {
    for (const r of await client.propfind(home, 1, listBody)) {
      if (!isCalendar(r) || !supportsEvents(r) || seen.has(r.url)) continue;
      seen.add(r.url);
      out.push(toCalendar(r));
    }
  }
  return out;
}

export async function caldavBusy(
  creds: CaldavCredentials,
  fetch: HttpFetch,
  calendarUrls: readonly string[],
  window: Interval,
  opts: CaldavOptions = {},
): Promise<BusyResult> {
  assertWindow(window);
  const client = new DavClient(creds, fetch, opts);
  const zone = opts.defaultZone ?? 'UTC';
  const busy: TitledInterval[] = [];
  const errors: CalendarError[] = [];
  await mapLimit([...new Set(calendarUrls)], CONCURRENCY, async (calendarUrl) => {
    const url = client.resolve(calendarUrl, creds.serverUrl);
    let responses: DavResponse[];
    try {
      responses = await client.calendarQuery(url, window);
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'bad_request') {
        errors.push({ calendarId: calendarUrl, reason: err.reason ?? `http_${err.status}` });
        return;
      }
      throw err;
    }
    let unreadable = 0;
    for (const r of responses) {
      for (const prop of r.props) {
        if (prop.ns !== CALDAV || prop.name !== 'calendar-data' || prop.text.trim() === '') continue;
        try {
          busy.push(...parseIcsEvents(prop.text, window, zone));
        } catch {
          unreadable++;
        }
      }
    }
    // The other objects still count; the caller sees that some data was skipped.
    if (unreadable > 0) errors.push({ calendarId: calendarUrl, reason: `unreadable_objects:${unreadable}` });
  });
  return { busy: normalizedCopy(busy), errors, ...(opts.withTitles ? { events: busy } : {}) };
}

/** What a PUT is conditioned on: create only, replace a known version, or replace whatever is there. */
type PutCondition = { kind: 'create' } | { kind: 'match'; etag: string } | { kind: 'any' };

/** PUTs per caldavPutEvent: the first, plus re-tries after 412/404 (each re-reads the current ETag). */
const MAX_PUT_ATTEMPTS = 4;

/** A resource name Kairos may write (`kairos` + hex from eventRef; no slashes, no dot segments). */
const REF_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,254}$/;

/**
 * Creates or updates the Kairos event of `spec` in the calendar collection `calendarUrl`.
 *
 * The resource is `known.href`, or `<calendarUrl>/<spec.ref>.ics` for a new one.
 * - Create (no `known.etag`): `If-None-Match: *`. A 412 means the resource is already there (an
 *   earlier PUT whose answer was lost): its current ETag is read and the PUT repeated with If-Match.
 * - Update (`known.etag`): `If-Match: <etag>`. On 412 (changed meanwhile, e.g. by the user; Kairos
 *   owns this event's times) the current ETag is read and the PUT repeated with it; if the resource
 *   is gone (404, or a 412 and then no resource, as Radicale answers) it is created again.
 * The new ETag is the answer's `ETag` header, else read with a PROPFIND (null if none is given).
 * Errors: 401 → unauthorized, 429 → rate_limited, 5xx → unavailable, other 4xx → bad_request;
 * preconditions that keep failing (a writer racing every attempt) → unavailable with status 412.
 */
export async function caldavPutEvent(
  creds: CaldavCredentials,
  fetch: HttpFetch,
  calendarUrl: string,
  spec: EventSpec,
  known: { href: string | null; etag: string | null },
  opts: CaldavOptions = {},
): Promise<WrittenEvent> {
  if (!REF_PATTERN.test(spec.ref)) throw new RangeError(`invalid event ref: ${JSON.stringify(spec.ref)}`);
  const client = new DavClient(creds, fetch, opts);
  const collection = client.resolve(calendarUrl, creds.serverUrl);
  const base = collection.endsWith('/') ? collection : `${collection}/`;
  const url = client.resolve(known.href ?? `${spec.ref}.ics`, base);
  const body = buildKairosVevent(spec, (opts.clock ?? systemClock).nowMs());
  let condition: PutCondition = known.etag ? { kind: 'match', etag: known.etag } : { kind: 'create' };
  for (let attempt = 1; ; attempt++) {
    const headers: Record<string, string> = { 'content-type': 'text/calendar; charset=utf-8' };
    if (condition.kind === 'create') headers['if-none-match'] = '*';
    else if (condition.kind === 'match') headers['if-match'] = condition.etag;
    const res = await client.send(url, 'PUT', headers, body);
    if (res.ok) {
      await discard(res);
      const etag = res.headers.get('etag') ?? (await client.currentEtag(url))?.etag ?? null;
      return { id: url, etag };
    }
    const gone = res.status === 404 && condition.kind === 'match';
    if (res.status !== 412 && !gone) throw await client.error(res, 'PUT');
    if (attempt >= MAX_PUT_ATTEMPTS) {
      await discard(res);
      throw new ProviderError(
        'unavailable',
        res.status,
        `CalDAV PUT answered ${res.status} ${attempt} times`,
      );
    }
    await discard(res);
    if (gone) {
      condition = { kind: 'create' };
      continue;
    }
    const current = await client.currentEtag(url);
    condition =
      current === null
        ? { kind: 'create' }
        : current.etag === null
          ? { kind: 'any' }
          : { kind: 'match', etag: current.etag };
  }
}

/**
 * Deletes a Kairos event resource. With `etag`, the DELETE carries If-Match; a 412 (changed
 * meanwhile) is answered with one more DELETE without it. 404/410 mean already gone: success.
 * Refuses collection URLs (a trailing slash), so a wrong href can never delete a whole calendar.
 */
export async function caldavDeleteEvent(
  creds: CaldavCredentials,
  fetch: HttpFetch,
  href: string,
  etag: string | null,
  opts: CaldavOptions = {},
): Promise<void> {
  const client = new DavClient(creds, fetch, opts);
  const url = client.resolve(href, creds.serverUrl);
  if (new URL(url).pathname.endsWith('/')) {
    throw new ProviderError('bad_request', 0, `refusing to DELETE a collection URL: ${url}`);
  }
  let ifMatch = etag;
  for (;;) {
    const res = await client.send(url, 'DELETE', ifMatch ? { 'if-match': ifMatch } : {});
    if (res.ok || res.status === 404 || res.status === 410) {
      await discard(res);
      return;
    }
    if (res.status !== 412 || ifMatch === null) throw await client.error(res, 'DELETE');
    await discard(res);
    ifMatch = null;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it matches
const TEXT_CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** Text for an iCalendar TEXT value: CRLF/CR → LF, other control characters → space. */
function icalText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(TEXT_CONTROL_CHARACTERS, ' ');
}

/** One line of text (a name): all control characters, line breaks included, → space. */
function icalLine(text: string | null): string {
  return icalText(text ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The event's description plus its guests as plain text (no ATTENDEE lines: no server scheduling). */
function kairosDescription(spec: EventSpec): string | null {
  const parts: string[] = [];
  const description = icalText(spec.description ?? '').trim();
  if (description !== '') parts.push(description);
  const guests = spec.attendees.map((a) => {
    const name = icalLine(a.name);
    const email = icalLine(a.email);
    return name !== '' ? `${name} <${email}>` : email;
  });
  if (guests.length > 0) parts.push(['Guests:', ...guests].join('\n'));
  return parts.length > 0 ? parts.join('\n\n') : null;
}

/**
 * The calendar object resource (a VCALENDAR with one VEVENT, no METHOD) Kairos stores for `spec`:
 * `UID:<ref>@kairos`, SEQUENCE, DTSTAMP = `stampMs`, DTSTART/DTEND in UTC, SUMMARY, DESCRIPTION
 * (with the guests as text), LOCATION when set, `X-KAIROS-MEETING:<meeting key>`, TRANSP:OPAQUE,
 * STATUS:CONFIRMED. Deliberately no ORGANIZER/ATTENDEE, so no server sends scheduling messages.
 */
export function buildKairosVevent(spec: EventSpec, stampMs: number): string {
  if (!Number.isFinite(spec.start) || !Number.isFinite(spec.end) || !(spec.end > spec.start)) {
    throw new RangeError('event: end must be after start (finite epoch ms)');
  }
  if (!Number.isInteger(spec.sequence) || spec.sequence < 0) {
    throw new RangeError('event: sequence must be a non-negative integer');
  }
  if (!Number.isFinite(stampMs)) throw new RangeError('event: stamp must be finite epoch ms');
  const calendar = ical({ prodId: { company: 'kairos', product: 'kairos', language: 'EN' } });
  const location = spec.location === null ? '' : icalLine(spec.location);
  calendar.createEvent({
    id: `${spec.ref}${KAIROS_UID_SUFFIX}`,
    sequence: spec.sequence,
    stamp: new Date(stampMs),
    start: new Date(spec.start),
    end: new Date(spec.end),
    summary: icalLine(spec.title),
    description: kairosDescription(spec),
    location: location === '' ? null : location,
    transparency: ICalEventTransparency.OPAQUE,
    status: ICalEventStatus.CONFIRMED,
    x: { [ICAL_KAIROS_PROPERTY]: icalLine(spec.meetingKey) },
  });
  return calendar.toString();
}

/** Releases an answer's body (keeps the connection reusable); never throws. */
async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

/** The `reason` of a CalDAV refusal by status. */
const REFUSALS: Record<number, string> = { 403: 'forbidden', 404: 'not_found' };

class DavClient {
  private readonly auth: string;
  private readonly origin: string;

  constructor(
    creds: CaldavCredentials,
    private readonly fetch: HttpFetch,
    private readonly opts: CaldavOptions,
  ) {
    this.auth = `Basic ${Buffer.from(`${creds.username}:${creds.password}`, 'utf8').toString('base64')}`;
    this.origin = new URL(creds.serverUrl).origin;
  }

  /**
   * Resolves an href against a base and checks where credentials may go: the configured origin,
   * or another https origin (iCloud serves homes from partition hosts). Never plain http elsewhere.
   */
  resolve(href: string, base: string): string {
    const url = new URL(href, base);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ProviderError('bad_request', 0, `unsupported URL scheme ${url.protocol}`);
    }
    if (url.origin !== this.origin && url.protocol !== 'https:') {
      throw new ProviderError('bad_request', 0, `refusing to send credentials to ${url.origin}`);
    }
    url.hash = '';
    return url.toString();
  }

  async propfind(url: string, depth: 0 | 1, body: string): Promise<DavResponse[]> {
    const res = await this.request(url, 'PROPFIND', depth, body);
    if (res.status !== 207) throw await this.error(res, 'PROPFIND');
    return this.multistatus(res, url);
  }

  /** As propfind, but 404/405 (nothing DAV here) gives null instead of an error. */
  async propfindOrNull(url: string, depth: 0 | 1, body: string): Promise<DavResponse[] | null> {
    const res = await this.request(url, 'PROPFIND', depth, body);
    if (res.status === 404 || res.status === 405 || res.status === 501 || (res.ok && res.status !== 207)) {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }
    if (res.status !== 207) throw await this.error(res, 'PROPFIND');
    return this.multistatus(res, url);
  }

  async calendarQuery(url: string, window: Interval): Promise<DavResponse[]> {
    let res = await this.request(url, 'REPORT', 1, calendarQueryBody(window, true));
    if (res.status === 400 || res.status === 403 || res.status === 501) {
      // Some servers refuse <C:expand>; the unexpanded data is parsed the same way.
      await res.body?.cancel().catch(() => undefined);
      res = await this.request(url, 'REPORT', 1, calendarQueryBody(window, false));
    }
    if (res.status !== 207) throw await this.error(res, 'REPORT');
    return this.multistatus(res, url);
  }

  /**
   * The current ETag of a resource via PROPFIND getetag: null when there is no resource (404/410),
   * `{ etag: null }` when it exists but the server names no ETag.
   */
  async currentEtag(url: string): Promise<{ etag: string | null } | null> {
    const res = await this.request(url, 'PROPFIND', 0, propfindBody([[DAV, 'getetag']]));
    if (res.status === 404 || res.status === 410) {
      await discard(res);
      return null;
    }
    if (res.status !== 207) throw await this.error(res, 'PROPFIND');
    const responses = await this.multistatus(res, url);
    const own = responses.find((r) => r.url === url) ?? responses[0];
    if (!own || own.status === 404 || own.status === 410) return null;
    const etag = prop(own, DAV, 'getetag')?.text.trim();
    return { etag: etag ? etag : null };
  }

  /** One authenticated request; a rejected fetch becomes `unavailable`. */
  async send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Response> {
    const target = this.resolve(url, url);
    const init: RequestInit = { method, headers: { ...headers, authorization: this.auth } };
    if (body !== undefined) init.body = body;
    try {
      return await this.fetch(target, init);
    } catch (err) {
      throw networkError(err, `CalDAV ${method} failed`);
    }
  }

  private request(url: string, method: string, depth: 0 | 1, body: string): Promise<Response> {
    return this.send(
      url,
      method,
      {
        depth: String(depth),
        'content-type': 'application/xml; charset=utf-8',
        accept: 'application/xml, text/xml',
      },
      body,
    );
  }

  async error(res: Response, what: string): Promise<ProviderError> {
    await res.body?.cancel().catch(() => undefined);
    const nowMs = (this.opts.clock ?? systemClock).nowMs();
    // Refusals (not 401, 429 or 5xx) say which: forbidden, not_found, or the status.
    const reason =
      codeForStatus(res.status, false) === 'bad_request'
        ? (REFUSALS[res.status] ?? `http_${res.status}`)
        : undefined;
    return answerError(res, nowMs, { message: `CalDAV ${what} answered ${res.status}`, reason });
  }

  private async multistatus(res: Response, requestUrl: string): Promise<DavResponse[]> {
    const text = await res.text();
    let root: XmlElement;
    try {
      root = parseXml(text);
    } catch (err) {
      throw new ProviderError('unavailable', res.status, 'unreadable CalDAV multistatus', { cause: err });
    }
    if (root.ns !== DAV || root.name !== 'multistatus') {
      throw new ProviderError('unavailable', res.status, 'CalDAV answer is not a multistatus');
    }
    const out: DavResponse[] = [];
    for (const r of children(root, DAV, 'response')) {
      const href = child(r, DAV, 'href')?.text.trim();
      if (!href) continue;
      const entry: DavResponse = { href, url: new URL(href, requestUrl).toString(), props: [] };
      const status = parseStatus(child(r, DAV, 'status')?.text);
      if (status !== undefined) entry.status = status;
      for (const ps of children(r, DAV, 'propstat')) {
        const s = parseStatus(child(ps, DAV, 'status')?.text) ?? 200;
        const prop = child(ps, DAV, 'prop');
        if (prop && s >= 200 && s < 300) entry.props.push(...prop.children);
      }
      out.push(entry);
    }
    return out;
  }
}

function parseStatus(line: string | undefined): number | undefined {
  const m = line ? /HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(line) : null;
  return m ? Number(m[1]) : undefined;
}

function prop(r: DavResponse, ns: string, name: string): XmlElement | undefined {
  return r.props.find((p) => p.ns === ns && p.name === name);
}

function hasProp(rs: DavResponse[], ns: string, name: string): boolean {
  return rs.some((r) => prop(r, ns, name) !== undefined);
}

function hrefsOf(rs: DavResponse[], ns: string, name: string): string[] {
  const out: string[] = [];
  for (const r of rs) {
    const p = prop(r, ns, name);
    if (!p) continue;
    for (const h of descendants(p, DAV, 'href')) {
      const t = h.text.trim();
      if (t) out.push(new URL(t, r.url).toString());
    }
  }
  return out;
}

function isCalendar(r: DavResponse): boolean {
  const rt = prop(r, DAV, 'resourcetype');
  return rt !== undefined && child(rt, CALDAV, 'calendar') !== undefined;
}

function supportsEvents(r: DavResponse): boolean {
  const set = prop(r, CALDAV, 'supported-calendar-component-set');
  if (!set) return true; // absent means all components (RFC 4791 5.2.3)
  return children(set, CALDAV, 'comp').some((c) => c.attrs.name?.toUpperCase() === 'VEVENT');
}

function toCalendar(r: DavResponse): CaldavCalendar {
  const name = prop(r, DAV, 'displayname')?.text.trim();
  const fallback = decodeURIComponent(new URL(r.url).pathname.replace(/\/+$/, '').split('/').pop() ?? '');
  const cal: CaldavCalendar = { url: r.url, displayName: name || fallback || r.url };
  const ctag = prop(r, CS, 'getctag')?.text.trim();
  if (ctag) cal.ctag = ctag;
  const color = prop(r, APPLE, 'calendar-color')?.text.trim();
  if (color) cal.color = color;
  return cal;
}

function propfindBody(props: [string, string][]): string {
  const prefixes: Record<string, string> = { [DAV]: 'D', [CALDAV]: 'C', [CS]: 'CS', [APPLE]: 'A' };
  const inner = props.map(([ns, name]) => `<${prefixes[ns]}:${name}/>`).join('');
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    `<D:propfind xmlns:D="${DAV}" xmlns:C="${CALDAV}" xmlns:CS="${CS}" xmlns:A="${APPLE}">` +
    `<D:prop>${inner}</D:prop></D:propfind>`
  );
}

/** RFC 4791 9.9 time in UTC basic format, e.g. 20260301T000000Z. */
export function caldavTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function calendarQueryBody(window: Interval, expand: boolean): string {
  const start = escapeXml(caldavTime(window.start));
  const end = escapeXml(caldavTime(window.end));
  const data = expand
    ? `<C:calendar-data><C:expand start="${start}" end="${end}"/></C:calendar-data>`
    : '<C:calendar-data/>';
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    `<C:calendar-query xmlns:D="${DAV}" xmlns:C="${CALDAV}">` +
    `<D:prop><D:getetag/>${data}</D:prop>` +
    '<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">' +
    `<C:time-range start="${start}" end="${end}"/>` +
    '</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>'
  );
}
