/**
 * The public booking API as the pages call it (docs/api.md#public-booking-surface): same origin,
 * JSON in and out, problem+json on failure. Never throws: a network failure is status 0.
 */

export interface Problem {
  status: number;
  title?: string;
  detail?: string;
  code?: string;
  reason?: string;
  errors?: Record<string, string>;
  /** A series refused (409 `slot_unavailable`): every occurrence that failed, and why. */
  conflicts?: SeriesConflict[];
}

export interface SeriesConflict {
  start_time: string;
  end_time: string;
  /** `taken`, `calendar_busy`, `out_of_office`, `outside_working_hours`, `minimum_notice`, `max_days_ahead`, `no_host`. */
  reason: string;
}

export type Answer<T> =
  | { ok: true; status: number; data: T }
  | { ok: false; status: number; problem: Problem };

export interface Slot {
  start: string;
  end: string;
  /** A seated link that shows what remains: the seats of this slot still free. */
  seats_remaining?: number;
}

export interface SlotsAnswer {
  duration_minutes: number;
  timezone: string;
  slots: Slot[];
}

export interface Question {
  id: string;
  label: string;
  type: string;
  required: boolean;
  options?: string[];
}

export interface PublicLink {
  slug: string;
  title: string;
  description: string;
  duration_minutes: number;
  durations: number[];
  hosts: { display_name: string }[];
  questions: Question[];
  price_amount: number | null;
  price_currency: string | null;
  /**
   * false: a test-mode link (docs/api.md#test-mode): what is booked on it is not real. Read
   * defensively: an answer without it is a live link.
   */
  livemode?: boolean;
  /** The series a visitor may ask for (docs/api.md#recurring-series); null or absent: single bookings. */
  recurrence?: { frequencies: Frequency[]; max_count: number } | null;
  /** A seated link (docs/api.md#seats): customers per slot; null or absent: one per slot. */
  seats?: { capacity: number; show_remaining: boolean } | null;
}

export type Frequency = 'daily' | 'weekly' | 'monthly';

/** What a public series booking asks for: the visitor's zone keeps the wall-clock time. */
export interface RecurrenceRequest {
  frequency: Frequency;
  count: number;
  timezone: string;
}

export interface SeriesOccurrence {
  booking_id: string;
  start_time: string;
  end_time: string;
  status: PublicBooking['status'];
}

/** The series of a public booking's creation answer (with `recurrence` only). */
export interface PublicSeries {
  id: string;
  recurrence: { frequency: Frequency; interval: number; count: number; timezone: string };
  occurrences: SeriesOccurrence[];
}

export interface PublicBooking {
  id: string;
  status: 'pending_payment' | 'confirmed' | 'cancelled' | 'expired';
  title: string;
  start_time: string;
  end_time: string;
  customer_name: string;
  customer_email: string;
  hosts: { display_name: string }[];
  checkout_url: string | null;
  payment_amount: number | null;
  payment_currency: string | null;
  cancellation_reason: string | null;
  /** The SEQUENCE of the booking's latest invite: 0, one more with each change. */
  sequence: number;
  /** The recurring series it is an occurrence of; null (or absent) outside one. */
  series_id?: string | null;
  manage_url?: string;
}

/** A fresh Idempotency-Key: one per submission, so a repeated request cannot book twice. */
function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** An embed's publishable key (`?key=`): every call of the page carries it. */
let credential: string | null = null;
export function useCredential(key: string | null): void {
  credential = key;
}

/** `token`: a bearer token for this call (a user's session, kept in the page's memory only). */
export async function api<T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  token?: string,
): Promise<Answer<T>> {
  // A GET is sent bare, so that it matches the page's <link rel="preload"> of the same URL.
  const headers: Record<string, string> = {};
  const bearer = token ?? credential;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  let payload: string | undefined;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  if (method === 'POST') headers['idempotency-key'] = newKey();
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: payload });
  } catch {
    return {
      ok: false,
      status: 0,
      problem: { status: 0, detail: 'The server could not be reached. Check your connection and try again.' },
    };
  }
  let json: unknown = null;
  try {
    json = await res.json();
  } catch {
    // an empty or non-JSON body: judged by the status alone
  }
  if (res.ok) return { ok: true, status: res.status, data: json as T };
  const problem = (json && typeof json === 'object' ? json : {}) as Problem;
  problem.status = res.status;
  problem.detail ??= `The request failed (HTTP ${res.status}).`;
  return { ok: false, status: res.status, problem };
}

/** A 409 that means "someone took this time first" (the slot, or the host's calendar, changed). */
export function slotTaken(p: Problem): boolean {
  return p.status === 409 && p.code === 'slot_unavailable';
}

/** A 409 that means "every seat of this slot was taken first" (a seated link). */
export function slotFull(p: Problem): boolean {
  return p.status === 409 && p.code === 'slot_full';
}

/** The path of the link's public API. */
export function linkPath(slug: string, rest = ''): string {
  return `/v1/public/links/${encodeURIComponent(slug)}${rest}`;
}
