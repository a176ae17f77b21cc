/**
 * The MCP tools (docs/mcp.md#tools): each mirrors one REST operation (named by its operationId; its
 * schemas are derived from that operation in derive.ts) or, for `current_time` and `check_consent`,
 * is composed here from REST calls. A tool's description is written for an agent: what it is for,
 * what it needs, what to call next.
 */

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Who sees a tool: `any` credential (publishable keys too: the public surface) or `private` ones. */
export type Audience = 'any' | 'private';

/**
 * In which mode a tool is listed (docs/api.md#test-mode): `any` (the default), or `test` for a tool
 * only a test key may call (the test clock: a live key would get 403 `test_mode_only`).
 */
export type ToolMode = 'any' | 'test';

export interface RestTool {
  kind: 'rest';
  name: string;
  title: string;
  operationId: string;
  description: string;
  audience: Audience;
  annotations: ToolAnnotations;
  /** Request fields the tool sets itself (hidden from its input): `create_poll` sets `mode: poll`. */
  fixed?: Record<string, unknown>;
  /** Request fields the tool does not take (what its `fixed` mode refuses): neither listed nor sent. */
  omit?: readonly string[];
  /** Agent-facing descriptions of input fields, over the route's own. */
  hints?: Record<string, string>;
  /** A creating call: takes an optional `idempotency_key`, sent as `Idempotency-Key`. */
  creates?: boolean;
  /** On a 403, the consent the caller lacks and how to get it. */
  consentHint?: string;
  /** Listed in which mode (default `any`). */
  mode?: ToolMode;
}

export interface CustomTool {
  kind: 'custom';
  name: string;
  title: string;
  description: string;
  audience: Audience;
  annotations: ToolAnnotations;
  /** Listed in which mode (default `any`). */
  mode?: ToolMode;
}

export type ToolDefinition = RestTool | CustomTool;

const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
const CREATE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};
const CHANGE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: true,
};
const CONSENT_FOR_AVAILABILITY =
  'Reading someone else’s availability needs their consent `availability:read:freebusy` (or a network connection): call check_consent for each principal; if one is missing, that principal grants it with grant_consent (their own credentials) — you cannot grant it for them.';
/** The same, as a tool's description says it (the full text is the next step of a 403). */
const CONSENT_SHORT =
  'Someone else’s needs their consent (or a network connection): check_consent first; only they can grant it.';
const TIMES = 'Times carry their offset in the answer’s `timezone`.';
/** The route's descriptions of the slot tools' fields, as an agent needs them. */
const SLOT_HINTS = {
  timezone: 'IANA zone of the answer (default: the principal’s); never changes the slots',
  slot_interval: 'minutes between slot starts from local midnight (default min(duration, 15))',
};
/** What a series booking does (create_booking, book_on_link). */
/** create_booking's and book_on_link's fields, as an agent needs them. */
const BOOKING_HINTS = {
  recurrence: 'a series repeating start_time',
  guests: 'other attendees’ e-mails (≤ 10), mailed and invited',
  success_url: 'a priced link: where Checkout returns after payment (default: the link’s page)',
  cancel_url: 'a priced link: where Checkout returns when abandoned',
};
const SERIES =
  '`recurrence` books a series, all or nothing: the answer adds `series` (get_booking_series reads it); a 409 names the failing occurrences in `conflicts` and books none.';

export const TOOLS: readonly ToolDefinition[] = [
  {
    kind: 'custom',
    name: 'current_time',
    title: 'Current time',
    description:
      'The current instant in an IANA zone (default UTC): its offset, local date and weekday, and `livemode` (false: a test key, on its account’s test clock). Call it first whenever the user says "today", "tomorrow" or "next week": never assume the date.',
    audience: 'any',
    annotations: { ...READ, idempotentHint: false },
  },
  {
    kind: 'rest',
    name: 'list_hosts',
    title: 'List hosts',
    operationId: 'listHosts',
    description:
      'The hosts (people or resources) your account manages, with their id (`principal_id`), IANA time zone and whether a calendar is connected. Use a host’s `principal_id` in availability and booking tools.',
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'get_available_slots',
    title: 'Available slots',
    operationId: 'listAvailableSlots',
    hints: SLOT_HINTS,
    description: `Bookable slots of one principal (you, your host, or someone who consented) between \`from\` and \`to\` (at most 62 days). ${TIMES} A principal without a connected calendar is an error that says so, never an empty list. ${CONSENT_SHORT}`,
    audience: 'any',
    annotations: READ,
    consentHint: CONSENT_FOR_AVAILABILITY,
  },
  {
    kind: 'rest',
    name: 'get_next_available',
    title: 'Next available slot',
    operationId: 'getNextAvailableSlot',
    hints: SLOT_HINTS,
    description: `The first bookable slot of one principal after \`after\` (default now), looking \`days_ahead\` days. \`slot: null\` means no free time in that window (a missing calendar is an error, not null). ${TIMES}`,
    audience: 'any',
    annotations: READ,
    consentHint: CONSENT_FOR_AVAILABILITY,
  },
  {
    kind: 'rest',
    name: 'find_mutual_availability',
    title: 'Mutual availability',
    operationId: 'listMutualSlots',
    hints: SLOT_HINTS,
    description: `Slots when 2–5 principals (\`principal_ids\`, comma-separated) are all free. Each must be you, your host, in your network or have consented: check_consent first. The answer says on what basis each was read. ${TIMES} Then propose a slot with create_proposal.`,
    audience: 'private',
    annotations: READ,
    consentHint: CONSENT_FOR_AVAILABILITY,
  },
  {
    kind: 'rest',
    name: 'get_principal_availability',
    title: 'Availability blocks',
    operationId: 'listAvailabilityBlocks',
    hints: {
      details:
        'add event titles to calendar blocks: for yourself, your hosts, or with availability:read:details (else 403)',
    },
    description: `One principal’s time between \`from\` and \`to\` as busy / free / outside-hours blocks (with event titles only when \`details=true\` and the consent allows). ${TIMES}`,
    audience: 'private',
    annotations: READ,
    consentHint: CONSENT_FOR_AVAILABILITY,
  },
  {
    kind: 'custom',
    name: 'check_consent',
    title: 'Check consent',
    description:
      'Whether a principal granted you (or the `principal_id` you act for) a scope: `availability:read:freebusy` (default; for the availability tools), `availability:read:details` or `booking:propose` (for create_proposal). If `granted` is false, only the principal can grant it (grant_consent, with their credentials).',
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'list_consents',
    title: 'List consents',
    operationId: 'listConsents',
    description:
      'Consents you granted (`role=grantor`) or received (`role=grantee`); `active_only=true` hides revoked and expired ones.',
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'grant_consent',
    title: 'Grant consent',
    operationId: 'grantConsent',
    description:
      'Grant another principal (`grantee_id`) scopes over YOUR calendar: `availability:read:freebusy`, `availability:read:details`, `booking:propose`. Only the grantor can grant, with their own credentials, and only when the user asked. Granting again merges scopes.',
    audience: 'private',
    annotations: { ...CREATE, idempotentHint: true },
    creates: true,
  },
  {
    kind: 'rest',
    name: 'revoke_consent',
    title: 'Revoke consent',
    operationId: 'revokeConsent',
    description:
      'Revoke a consent you granted (or give up one you received), by its `cons_…` id. Effective for the very next request.',
    audience: 'private',
    annotations: CHANGE,
  },
  {
    kind: 'rest',
    name: 'list_network',
    title: 'List network',
    operationId: 'listConnections',
    description:
      'Your network: principals connected to you. A connection lets both read each other’s availability and propose meetings without a separate consent.',
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'invite_to_network',
    title: 'Invite to network',
    operationId: 'createInvitation',
    description:
      'Invite someone by e-mail to your network (they accept by signing in). Inviting a pending address again resends it.',
    audience: 'private',
    annotations: CREATE,
    creates: true,
  },
  {
    kind: 'rest',
    name: 'list_booking_links',
    title: 'List booking links',
    operationId: 'listBookingLinks',
    description: 'Your account’s booking links (slug, title, durations, hosts, public URL).',
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'create_booking_link',
    title: 'Create booking link',
    operationId: 'createBookingLink',
    description: 'Create a booking link (a public page people book through) for hosts of your account.',
    hints: {
      slug: 'unique across the service: 3–64 of a–z, 0–9 and -; the page is {base_url}/book/{slug}',
      host_ids: 'you or hosts of your account, in your mode (default: you)',
      seats:
        'a group link: `capacity` customers per slot; one duration only, not with round_robin or recurrence',
      recurrence:
        'the series public bookers may book (null: single bookings); not on a priced or seated link',
    },
    audience: 'private',
    annotations: CREATE,
    creates: true,
  },
  {
    kind: 'rest',
    name: 'get_link_slots',
    title: 'Booking link slots',
    operationId: 'listPublicSlots',
    description: `Bookable slots of a booking link, by its \`slug\`, between \`from\` and \`to\`. ${TIMES} On a seated (group) link each slot may carry \`seats_remaining\`. Book one with book_on_link.`,
    audience: 'any',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'book_on_link',
    title: 'Book on a link',
    operationId: 'createPublicBooking',
    hints: BOOKING_HINTS,
    description: `Book a slot of a booking link (by \`slug\`) for a customer: \`start_time\` must be a slot get_link_slots offered. A conflict means the slot was just taken (\`slot_full\`: a seated slot has no seat left): ask for slots again. ${SERIES} The link must allow recurrence.`,
    audience: 'any',
    annotations: CREATE,
    creates: true,
  },
  {
    kind: 'rest',
    name: 'create_booking',
    title: 'Create booking',
    operationId: 'createBooking',
    hints: BOOKING_HINTS,
    description: `Book a principal of your account (\`principal_id\`, or through \`booking_link_id\`) for a customer at \`start_time\` (a slot get_available_slots offered). A conflict means the time was just taken: ask for slots again. ${SERIES}`,
    audience: 'private',
    annotations: CREATE,
    creates: true,
  },
  {
    kind: 'rest',
    name: 'list_bookings',
    title: 'List bookings',
    operationId: 'listBookings',
    description: `Bookings of your account by start time, filtered by \`principal_id\`, \`status\`, \`from\`, \`to\`. ${TIMES}`,
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'get_booking',
    title: 'Get booking',
    operationId: 'getBooking',
    description: `One booking by its \`booking_…\` id. ${TIMES}`,
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'reschedule_booking',
    title: 'Reschedule booking',
    operationId: 'updateBooking',
    description:
      'Move a booking to a new `start_time` (and optionally `end_time`), or change its notes. The new time is checked like a new booking: a conflict means it is taken, ask for slots again.',
    audience: 'private',
    annotations: CHANGE,
  },
  {
    kind: 'rest',
    name: 'cancel_booking',
    title: 'Cancel booking',
    operationId: 'cancelBooking',
    description:
      'Cancel a booking by id (with an optional `reason`); the customer and hosts are mailed. Cancelling again changes nothing. An occurrence of a series: `scope` single, following or series.',
    audience: 'private',
    annotations: CHANGE,
  },
  {
    kind: 'rest',
    name: 'get_booking_series',
    title: 'Get booking series',
    operationId: 'getBookingSeries',
    description: `One recurring series by its \`ser_…\` id (a booking’s \`series_id\`): its rule and every occurrence with its \`booking_id\` and status. ${TIMES}`,
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'join_waitlist',
    title: 'Join waitlist',
    operationId: 'joinWaitlist',
    description:
      'Put a customer on a booking link’s waitlist for a window (`preferred_from`–`preferred_to`): freed time inside it is offered to them by e-mail.',
    audience: 'any',
    annotations: CREATE,
    creates: true,
  },
  {
    kind: 'rest',
    name: 'create_proposal',
    title: 'Propose a meeting',
    operationId: 'createProposal',
    description:
      'Propose 1–10 candidate slots to principals (`participant_ids`); each must have granted you `booking:propose` or be in your network (check_consent). When all accept, everyone is booked. Slots usually come from find_mutual_availability.',
    audience: 'private',
    annotations: CREATE,
    fixed: { mode: 'standard' },
    omit: ['participant_emails'],
    hints: { expires_in_hours: 'default 72' },
    creates: true,
    consentHint:
      'Every participant must have granted you `booking:propose` (or be connected to you): call check_consent with scope `booking:propose`; a participant grants it with grant_consent using their own credentials.',
  },
  {
    kind: 'rest',
    name: 'create_poll',
    title: 'Create poll',
    operationId: 'createProposal',
    description:
      'Ask people to vote on 1–10 slots (each starting at least 25 h ahead): named (`participant_emails`, one link each) or open (no emails: one shared link). Close it with close_poll.',
    audience: 'private',
    annotations: CREATE,
    fixed: { mode: 'poll' },
    omit: ['participant_ids'],
    hints: { expires_in_hours: 'default 168; at most until an hour before its first slot' },
    creates: true,
  },
  {
    kind: 'rest',
    name: 'respond_to_proposal',
    title: 'Respond to proposal',
    operationId: 'respondToProposal',
    description:
      'Answer a proposal you take part in: `action` accept (with `selected_slot_id`), reject, or counter (with `counter_slots`). A conflict on accept means the slot was just taken.',
    audience: 'private',
    annotations: { ...CREATE, idempotentHint: false },
  },
  {
    kind: 'rest',
    name: 'close_poll',
    title: 'Close poll',
    operationId: 'closeProposal',
    description: 'Close a poll you asked now: the slot with the most votes wins.',
    audience: 'private',
    annotations: CHANGE,
  },
  {
    kind: 'rest',
    name: 'cancel_proposal',
    title: 'Cancel proposal',
    operationId: 'cancelProposal',
    description:
      'Withdraw an open proposal or poll you made, or cancel an accepted proposal (its bookings are cancelled).',
    audience: 'private',
    annotations: CHANGE,
  },
  {
    kind: 'rest',
    name: 'list_proposals',
    title: 'List proposals',
    operationId: 'listProposals',
    description: `Proposals and polls you made (\`role=requester\`) or were asked (\`role=participant\`), by \`status\`. ${TIMES}`,
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'get_proposal',
    title: 'Get proposal',
    operationId: 'getProposal',
    description: `One proposal by its \`prop_…\` id: participants’ responses, slots, resolution. ${TIMES}`,
    audience: 'private',
    annotations: READ,
  },
  {
    kind: 'rest',
    name: 'get_test_clock',
    title: 'Get test clock',
    operationId: 'getTestClock',
    description:
      'Test mode only: the account’s test clock, `now` and `offset_seconds` (real time plus the offset). Every time in test mode (minimum notice, horizons, holds, expiries) reads it; current_time shows the same `now`.',
    audience: 'private',
    annotations: READ,
    mode: 'test',
  },
  {
    kind: 'rest',
    name: 'advance_test_clock',
    title: 'Advance test clock',
    operationId: 'advanceTestClock',
    description:
      'Test mode only: move the account’s test clock forward by `seconds`, or `to` an instant (exactly one; never back; at most 400 days ahead of real time in all). The work that falls due in the skipped time (payment holds, waitlist offers, expiries, reminders) is done before it answers, as at the time each fell due. Live mode’s time never moves.',
    audience: 'private',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    creates: true,
    mode: 'test',
  },
];
