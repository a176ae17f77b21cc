/**
 * The MCP prompts (docs/mcp.md#prompts): the two common jobs, each telling the agent which tools to
 * chain and what to check between them.
 */

export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  /** Only for credentials that see private tools. */
  audience: 'any' | 'private';
  text(args: Record<string, string>): string;
}

export const PROMPTS: readonly PromptDefinition[] = [
  {
    name: 'find_time_and_propose',
    title: 'Find a time with these people and propose it',
    description:
      'Finds slots when everyone is free (with their consent) and sends them a proposal they can accept.',
    audience: 'private',
    arguments: [
      { name: 'participant_ids', description: 'the people’s principal ids, comma-separated', required: true },
      { name: 'duration_minutes', description: 'meeting length (default 30)', required: false },
      { name: 'title', description: 'what the meeting is about', required: false },
      { name: 'timezone', description: 'the IANA zone to talk in (default: yours)', required: false },
    ],
    text: (a) =>
      [
        `Find a ${a.duration_minutes ?? '30'}-minute meeting time with ${a.participant_ids} and propose it${a.title ? ` ("${a.title}")` : ''}.`,
        '',
        '1. Call current_time (with the timezone) so "tomorrow" or "next week" means the right dates.',
        '2. For each participant call check_consent with scope `availability:read:freebusy`, then with scope `booking:propose`. If any is not granted, stop and tell the user who must grant what (they grant it themselves with grant_consent); do not work around it.',
        `3. Call find_mutual_availability with principal_ids including yourself and theirs, duration_minutes, a from/to window with offsets${a.timezone ? ` and timezone ${a.timezone}` : ''}. An error saying a calendar is not connected means unknown, not busy: tell the user.`,
        '4. Pick up to three slots and call create_proposal with participant_ids, those slots (start and end exactly as returned, with their offsets), the title, and an idempotency_key.',
        '5. Report the proposal id and the slots, each with its offset and zone; list_proposals / get_proposal show the answers later.',
      ].join('\n'),
  },
  {
    name: 'book_next_free_slot',
    title: 'Book the next free slot on this link',
    description: 'Books the earliest free slot of a booking link for a customer.',
    audience: 'any',
    arguments: [
      { name: 'slug', description: 'the booking link’s slug', required: true },
      { name: 'customer_name', description: 'who is booking', required: true },
      { name: 'customer_email', description: 'their e-mail address', required: true },
      { name: 'timezone', description: 'the customer’s IANA zone', required: false },
    ],
    text: (a) =>
      [
        `Book the next free slot on booking link "${a.slug}" for ${a.customer_name} <${a.customer_email}>.`,
        '',
        `1. Call current_time${a.timezone ? ` with timezone ${a.timezone}` : ''} to know today's date and offset.`,
        `2. Call get_link_slots with slug "${a.slug}", from now to 14 days ahead (instants with offsets)${a.timezone ? `, timezone ${a.timezone}` : ''}. If there are none, widen the window once, then offer join_waitlist.`,
        `3. Call book_on_link with slug, the first slot's start_time exactly as returned, customer_name, customer_email${a.timezone ? `, customer_timezone ${a.timezone}` : ''} and an idempotency_key you keep for retries.`,
        '4. If the answer is a conflict, the slot was just taken: go back to step 2 and take the next one (a new idempotency_key for the new time). If it is any other error, report its detail and next step.',
        '5. Report the booking time with its offset and zone, and the manage_url.',
      ].join('\n'),
  },
];
