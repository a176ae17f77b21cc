/** Routes of the proposals module (docs/api.md#proposals-and-polls). */
import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/actor.js';
import { answer, withExample } from '../../platform/openapi.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import { EmailAddress, Pagination, prefixedIdPattern, Timestamp } from '../../platform/schemas.js';
import { ISO_INSTANT_PATTERN } from '../../platform/validation.js';
import {
  POLL,
  PROPOSAL,
  Proposal,
  PROPOSAL_STATUSES as STATUSES,
  RESOLVED,
  Resolution,
  SLOTS,
  Slot,
} from './schemas.js';
import { MAX_EXPIRES_HOURS, type ProposalService } from './service.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const ActingFor = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'act for this host of the account (default: the caller)',
  }),
);
/** What the service accepts (platform/validation.ts `isIsoInstant`): seconds optional, an offset or Z. */
const Instant = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: ISO_INSTANT_PATTERN,
  description: 'ISO 8601 instant with an offset',
});
const SlotIn = Type.Object({ start: Instant, end: Instant }, { additionalProperties: false });

const ProposalAnswer = Type.Object({ proposal: Proposal, counter_proposal: Type.Optional(Proposal) });
const PublicProposal = Type.Object({
  id: Type.String(),
  mode: Type.String({ enum: ['standard', 'poll'] }),
  poll_variant: Nullable(Type.String({ enum: ['named', 'open'] })),
  status: Type.String({ enum: STATUSES }),
  requester_name: Type.String(),
  title: Nullable(Type.String()),
  message: Nullable(Type.String()),
  slots: Type.Array(Slot),
  participants: Type.Array(Type.Object({ name: Type.String(), response: Type.String() })),
  resolution: Nullable(Resolution),
  expires_at: Timestamp,
  viewer: Type.Object({
    name: Nullable(Type.String()),
    response: Nullable(Type.String()),
    voted_slot_id: Nullable(Type.String({ pattern: prefixedIdPattern('slot') })),
    can_respond: Type.Boolean(),
  }),
});

const IdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export function proposalRoutes(app: TypedApp, proposals: ProposalService): void {
  const tags = ['Proposals'];

  app.post(
    '/v1/proposals',
    {
      config: {
        access: 'private',
        problems: {
          '400': {
            description:
              '`validation-error`; code `earliest_slot_too_soon` (poll slots start under 25 h ahead)',
            codes: ['earliest_slot_too_soon'],
          },
          '403': {
            description:
              '`forbidden`: code `consent_required` (a participant has not granted booking:propose)',
            codes: ['consent_required'],
          },
          '409': {
            description: '`conflict`: code `calendar_disconnected_originator`',
            codes: ['calendar_disconnected_originator'],
          },
        },
      },
      schema: {
        tags,
        operationId: 'createProposal',
        summary: 'Propose a meeting to principals (standard) or ask a poll (named or open)',
        body: withExample(
          Type.Object(
            {
              mode: Type.String({ enum: ['standard', 'poll'] }),
              participant_ids: Type.Optional(
                Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 10 }),
              ),
              participant_emails: Type.Optional(
                Type.Array(Type.String({ minLength: 3, maxLength: 320 }), {
                  maxItems: 50,
                  description: 'named poll invitees; none (or absent) makes an open poll',
                }),
              ),
              slots: Type.Array(SlotIn, { minItems: 1, maxItems: 10 }),
              title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              message: Type.Optional(Type.String({ maxLength: 2000 })),
              metadata: Type.Optional(
                Type.Record(Type.String({ minLength: 1, maxLength: 40 }), Type.String({ maxLength: 500 }), {
                  maxProperties: 20,
                }),
              ),
              expires_in_hours: Type.Optional(
                Type.Integer({
                  minimum: 1,
                  maximum: MAX_EXPIRES_HOURS,
                  description:
                    'default 72 (standard) or 168 (poll; at most until an hour before its first slot)',
                }),
              ),
              principal_id: ActingFor,
            },
            { additionalProperties: false },
          ),
          {
            mode: 'standard',
            participant_ids: ['0190a4b8-1f2e-7c44-8a9d-3e5f7a1b2c3d'],
            title: 'Partnership kick-off',
            message: 'Either time works for us.',
            slots: [
              { start: '2026-06-10T14:00:00Z', end: '2026-06-10T15:00:00Z' },
              { start: '2026-06-11T09:00:00Z', end: '2026-06-11T10:00:00Z' },
            ],
          },
        ),
        response: {
          201: answer(
            'The proposal (and a poll’s links, shown once)',
            Type.Object({
              proposal: Proposal,
              invitations: Type.Optional(
                Type.Array(
                  Type.Object({ email: EmailAddress, magic_link_url: Type.String({ format: 'uri' }) }),
                  {
                    description: 'named poll: each invitee’s single-use link, shown once',
                  },
                ),
              ),
              magic_link_url: Type.Optional(
                Type.String({ format: 'uri', description: 'open poll: the shared link, shown once' }),
              ),
            }),
            {
              proposal: { ...POLL, participants: [], slots: POLL.slots.map((x) => ({ ...x, votes: 0 })) },
              magic_link_url: 'https://kairos.example.com/p/Zk3v2mQm8rT0yXc1nB5aL9dE7hJ4pW6sU2gF0oK8iVq',
            },
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const out = await proposals.create(actorOf(request.caller), {
        ...body,
        mode: body.mode as 'standard' | 'poll',
      });
      reply.code(201);
      return out;
    },
  );

  app.get(
    '/v1/proposals',
    {
      config: { access: 'private' },
      schema: {
        tags,
        operationId: 'listProposals',
        summary: 'Proposals the caller made or was asked, newest first',
        querystring: Type.Object(
          {
            role: Type.Optional(Type.String({ enum: ['requester', 'participant'] })),
            status: Type.Optional(Type.String({ enum: STATUSES })),
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
            cursor: Type.Optional(Type.String({ maxLength: 512 })),
            principal_id: ActingFor,
          },
          { additionalProperties: false },
        ),
        response: {
          200: answer(
            'A page of proposals, newest first',
            Type.Object({ proposals: Type.Array(Proposal), pagination: Pagination }),
            { proposals: [PROPOSAL], pagination: { next_cursor: null, has_more: false } },
          ),
        },
      },
    },
    async (request) =>
      proposals.list(actorOf(request.caller), {
        ...request.query,
        role: request.query.role as 'requester' | 'participant' | undefined,
        status: request.query.status as never,
      }),
  );

  app.get(
    '/v1/proposals/by-token',
    {
      config: {
        access: 'public',
        problems: {
          '401': { description: '`unauthorized`: code `invalid_token`', codes: ['invalid_token'] },
          '404': { description: '`not-found`: code `proposal_not_found`', codes: ['proposal_not_found'] },
          '410': { description: '`gone`: code `token_expired`', codes: ['token_expired'] },
        },
      },
      schema: {
        tags,
        operationId: 'getProposalByToken',
        summary: 'What a magic link shows (no credential; does not use the token up)',
        querystring: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 100 }) },
          { additionalProperties: false },
        ),
        response: {
          200: answer('The proposal as its link shows it', Type.Object({ proposal: PublicProposal }), {
            proposal: {
              id: POLL.id,
              mode: 'poll',
              poll_variant: 'open',
              status: 'proposed',
              requester_name: 'Acme Physio',
              title: 'Team dinner',
              message: null,
              slots: POLL.slots,
              participants: [{ name: 'Ana', response: 'voted' }],
              resolution: null,
              expires_at: POLL.expires_at,
              viewer: { name: null, response: null, voted_slot_id: null, can_respond: true },
            },
          }),
        },
      },
    },
    async (request) => proposals.byToken(request.query.token),
  );

  app.get(
    '/v1/proposals/:id',
    {
      config: {
        access: 'private',
        problems: {
          '404': { description: '`not-found`: code `proposal_not_found`', codes: ['proposal_not_found'] },
        },
      },
      schema: {
        tags,
        operationId: 'getProposal',
        summary: 'A proposal the caller is a party of',
        params: IdParams,
        response: { 200: answer('The proposal', ProposalAnswer, { proposal: PROPOSAL }) },
      },
    },
    async (request) => proposals.get(actorOf(request.caller), request.params.id),
  );

  app.get(
    '/v1/threads/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        operationId: 'getThread',
        summary: 'Every proposal of a thread (a proposal and its counter-proposals), oldest first',
        params: IdParams,
        response: {
          200: answer(
            'The thread’s proposals, oldest first',
            Type.Object({
              thread: Type.Object({
                id: Type.String({ pattern: prefixedIdPattern('thr') }),
                proposals: Type.Array(Proposal),
              }),
            }),
            { thread: { id: PROPOSAL.thread_id, proposals: [PROPOSAL] } },
          ),
        },
      },
    },
    async (request) => proposals.thread(actorOf(request.caller), request.params.id),
  );

  app.post(
    '/v1/proposals/:id/response',
    {
      config: {
        access: 'public',
        problems: {
          '400': {
            description: '`validation-error`; code `poll_mode_only_supports_accept`',
            codes: ['poll_mode_only_supports_accept'],
          },
          '401': {
            description: '`unauthorized`: code `invalid_token` (unknown or used link, or no credential)',
            codes: ['invalid_token'],
          },
          '403': {
            description: '`forbidden`: code `organizer_cannot_respond`',
            codes: ['organizer_cannot_respond'],
          },
          '404': { description: '`not-found`: code `proposal_not_found`', codes: ['proposal_not_found'] },
          '409': {
            description:
              '`conflict`: code `consent_revoked` (the proposal expired), `slot_mismatch`, `slot_unavailable`, `slot_passed`, `already_responded`, `already_voted`, `proposal_not_open` (with `proposal_status`, the proposal’s state)',
            codes: [
              'consent_revoked',
              'slot_mismatch',
              'slot_unavailable',
              'slot_passed',
              'already_responded',
              'already_voted',
              'proposal_not_open',
            ],
          },
          '410': { description: '`gone`: code `token_expired`', codes: ['token_expired'] },
        },
      },
      schema: {
        tags,
        operationId: 'respondToProposal',
        summary: 'Accept, counter or reject (a participant’s credential or magic-link token); vote in a poll',
        params: IdParams,
        body: withExample(
          Type.Object(
            {
              action: Type.String({ enum: ['accept', 'counter', 'reject'] }),
              selected_slot_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
              counter_slots: Type.Optional(Type.Array(SlotIn, { minItems: 1, maxItems: 10 })),
              message: Type.Optional(Type.String({ maxLength: 2000 })),
              token: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
              voter_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              voter_email: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
              principal_id: ActingFor,
            },
            { additionalProperties: false },
          ),
          { action: 'accept', selected_slot_id: SLOTS[0]!.id },
        ),
        response: {
          200: answer(
            'The proposal after the answer: as its parties see it (and the counter-proposal a counter made) to a participant’s credential, as the link shows it (no ids, no other parties’ addresses) to a magic-link token',
            Type.Union([ProposalAnswer, Type.Object({ proposal: PublicProposal })]),
            { proposal: PROPOSAL },
          ),
        },
      },
    },
    async (request) =>
      proposals.respond(request.caller, request.params.id, {
        ...request.body,
        action: request.body.action as 'accept' | 'counter' | 'reject',
      }),
  );

  app.post(
    '/v1/proposals/:id/close',
    {
      preValidation: emptyBodyIsObject,
      config: {
        access: 'private',
        problems: {
          '404': { description: '`not-found`: code `proposal_not_found`', codes: ['proposal_not_found'] },
          '409': {
            description:
              '`conflict`: code `not_a_poll` or `proposal_not_open` (with `proposal_status`, the proposal’s state)',
            codes: ['not_a_poll', 'proposal_not_open'],
          },
        },
      },
      schema: {
        tags,
        operationId: 'closeProposal',
        summary:
          'Close a poll now (the requester): it resolves to the winning slot, or expires without votes',
        params: IdParams,
        body: withExample(Type.Object({}, { additionalProperties: false }), {}),
        response: { 200: answer('The poll, resolved or expired', ProposalAnswer, { proposal: RESOLVED }) },
      },
    },
    async (request) => proposals.close(actorOf(request.caller), request.params.id),
  );

  app.post(
    '/v1/proposals/:id/cancel',
    {
      preValidation: emptyBodyIsObject,
      config: {
        access: 'private',
        problems: {
          '403': {
            description:
              '`forbidden`: code `requester_only` (a participant cannot withdraw an open proposal; it rejects it)',
            codes: ['requester_only'],
          },
          '404': { description: '`not-found`: code `proposal_not_found`', codes: ['proposal_not_found'] },
          '409': {
            description:
              '`conflict`: code `proposal_not_open` with `proposal_status` (rejected, countered, expired, already cancelled, or a resolved poll)',
            codes: ['proposal_not_open'],
          },
        },
      },
      schema: {
        tags,
        operationId: 'cancelProposal',
        summary:
          'Cancel an accepted standard proposal (any party), or withdraw an open proposal or poll (its requester)',
        description:
          'An accepted standard proposal: its bookings are cancelled, the calendar events removed, everyone is mailed a cancellation (`METHOD:CANCEL`), `proposal.cancelled`. An open proposal or poll (`proposed`): the requester withdraws it, it becomes `cancelled` (its links show that and take no answer), every participant it reached is mailed, `proposal.cancelled` (a poll’s to the requester’s account only).',
        params: IdParams,
        body: withExample(
          Type.Object(
            { reason: Type.Optional(Type.String({ maxLength: 1000 })) },
            { additionalProperties: false },
          ),
          { reason: 'Postponed to next quarter' },
        ),
        response: {
          200: answer('The cancelled proposal', ProposalAnswer, {
            proposal: { ...PROPOSAL, status: 'cancelled' },
          }),
        },
      },
    },
    async (request) => proposals.cancel(actorOf(request.caller), request.params.id, request.body.reason),
  );
}
