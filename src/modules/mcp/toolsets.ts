/**
 * Toolsets (docs/mcp.md#toolsets): named groups of tools a client may ask for alone
 * (`/mcp?toolsets=booking,availability`, `kairos mcp --toolsets …`), so an agent's context holds only
 * the tools its task needs. `current_time` belongs to every listing. Every other tool is in exactly
 * one toolset (service.ts refuses a catalogue where one is not).
 */
import { ValidationFailed } from '../../platform/errors.js';

export const TOOLSETS: Readonly<Record<string, readonly string[]>> = {
  hosts: ['list_hosts'],
  availability: [
    'get_available_slots',
    'get_next_available',
    'find_mutual_availability',
    'get_principal_availability',
  ],
  consent: ['check_consent', 'list_consents', 'grant_consent', 'revoke_consent'],
  network: ['list_network', 'invite_to_network'],
  links: ['list_booking_links', 'create_booking_link', 'get_link_slots', 'book_on_link', 'join_waitlist'],
  booking: [
    'create_booking',
    'list_bookings',
    'get_booking',
    'get_booking_series',
    'reschedule_booking',
    'cancel_booking',
  ],
  proposals: [
    'create_proposal',
    'create_poll',
    'respond_to_proposal',
    'close_poll',
    'cancel_proposal',
    'list_proposals',
    'get_proposal',
  ],
  test_clock: ['get_test_clock', 'advance_test_clock'],
};

/** Tools listed whatever the toolsets. */
export const ALWAYS = new Set(['current_time']);

/** Every toolset name, and `all`. */
export const TOOLSET_NAMES = [...Object.keys(TOOLSETS), 'all'];

/** The toolset each tool is in. */
export const TOOLSET_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(TOOLSETS).flatMap(([set, tools]) => tools.map((t) => [t, set] as const)),
);

/**
 * The tools a `toolsets` query value selects (comma-separated names), or undefined for every tool
 * (no value, or `all` among them). An unknown or empty name is a 400 naming `toolsets`.
 */
export function selectTools(value: unknown): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : String(value);
  const names = text.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !TOOLSET_NAMES.includes(n));
  if (unknown.length > 0) {
    const what = unknown.map((n) => (n === '' ? 'an empty name' : `"${n}"`)).join(', ');
    throw new ValidationFailed({
      toolsets: `names no toolset: ${what}; known: ${TOOLSET_NAMES.join(', ')}`,
    });
  }
  if (names.includes('all')) return undefined;
  return new Set([...ALWAYS, ...names.flatMap((n) => TOOLSETS[n] ?? [])]);
}
