/** Routes of the proposals module (docs/api.md#proposals-and-polls). */
import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/actor.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import { Pagination, Timestamp } from '../../platform/schemas.js';
import { MAX_EXPIRES_HOURS, type ProposalService } from './service.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const ActingFor = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'act for this host of the account (default: the caller)',
  }),
);
const STATUSES = ['proposed', 'accepted', 'rejected', 'countered', 'cancelled', 'expired'];
const Instant = Type.String({ minLength: 1, maxLength: 64, description: 'ISO 8601 instant with an offset' });
const SlotIn = Type.Object({ start: Instant, end: Instant }, { additionalProperties: false });

const Slot = Type.Object({
  id: Type.String({ description: 'slot_…' }),
  start: Timestamp,
  end: Timestamp,
  is_selected: Type.Boolean(),
  votes: Type.Integer(),
});
const Resolution = Type.Object(
  {
    winning_slot: Type.Object({ id: Type.String(), start: Timestamp, end: Timestamp }),
    vote_count: Type.Integer(),
    total_votes: Type.Integer(),
    tie_count: Type.Integer(),
  },
  { description: 'a resolved poll’s result (the proposal.resolved fields)' },
);
const Proposal = Type.Object({
  id: Type.String({ description: 'prop_…' }),
  thread_id: Type.String({ description: 'thr_…' }),
  parent_id: Nullable(Type.String({ description: 'the proposal this one counters' })),
  mode: Type.String({ enum: ['standard', 'poll'] }),
  poll_variant: Nullable(Type.String({ enum: ['named', 'open'] })),
  status: Type.String({ enum: STATUSES }),
  requester_id: Type.String(),
  participants: Type.Array(
    Type.Object({
      principal_id: Nullable(Type.String()),
      email: Nullable(Type.String()),
      name: Type.String(),
      response: Type.String({ enum: ['pending', 'accepted', 'rejected', 'countered', 'voted'] }),
    }),
  ),
  slots: Type.Array(Slot),
  title: Nullable(Type.String()),
  message: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.String()),
  resolution: Nullable(Resolution),
  booking_error: Nullable(Type.String({ description: 'slot_unavailable: a resolved poll’s time was taken' })),
  expires_at: Timestamp,
  created_at: Timestamp,
  resolved_at: Nullable(Timestamp),
});
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
    voted_slot_id: Nullable(Type.String()),
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
          '400': '`validation-error`; code `earliest_slot_too_soon` (poll slots start under 25 h ahead)',
          '403': '`forbidden`: code `consent_required` (a participant has not granted booking:propose)',
          '409': '`conflict`: code `calendar_disconnected_originator`',
        },
      },
      schema: {
        tags,
        operationId: 'createProposal',
        summary: 'Propose a meeting to principals (standard) or ask a poll (named or open)',
        body: Type.Object(
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
        response: {
          201: Type.Object({
            proposal: Proposal,
            invitations: Type.Optional(
              Type.Array(Type.Object({ email: Type.String(), magic_link_url: Type.String() }), {
                description: 'named poll: each invitee’s single-use link, shown once',
              }),
            ),
            magic_link_url: Type.Optional(
              Type.String({ description: 'open poll: the shared link, shown once' }),
            ),
          }),
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
        response: { 200: Type.Object({ proposals: Type.Array(Proposal), pagination: Pagination }) },
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
          '401': '`unauthorized`: code `invalid_token`',
          '404': '`not-found`: code `proposal_not_found`',
          '410': '`gone`: code `token_expired`',
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
        response: { 200: Type.Object({ proposal: PublicProposal }) },
      },
    },
    async (request) => proposals.byToken(request.query.token),
  );

  app.get(
    '/v1/proposals/:id',
    {
      config: { access: 'private', problems: { '404': '`not-found`: code `proposal_not_found`' } },
      schema: {
        tags,
        operationId: 'getProposal',
        summary: 'A proposal the caller is a party of',
        params: IdParams,
        response: { 200: ProposalAnswer },
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
          200: Type.Object({ thread: Type.Object({ id: Type.String(), proposals: Type.Array(Proposal) }) }),
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
          '400': '`validation-error`; code `poll_mode_only_supports_accept`',
          '401': '`unauthorized`: code `invalid_token` (unknown or used link, or no credential)',
          '403': '`forbidden`: code `organizer_cannot_respond`',
          '404': '`not-found`: code `proposal_not_found`',
          '409':
            '`conflict`: code `consent_revoked` (the proposal expired), `slot_mismatch`, `slot_unavailable`, `slot_passed`, `already_responded`, `already_voted`, `proposal_not_open` (with `status`)',
          '410': '`gone`: code `token_expired`',
        },
      },
      schema: {
        tags,
        operationId: 'respondToProposal',
        summary: 'Accept, counter or reject (a participant’s credential or magic-link token); vote in a poll',
        params: IdParams,
        body: Type.Object(
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
        response: { 200: ProposalAnswer },
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
        problems: { '409': '`conflict`: code `not_a_poll` or `proposal_not_open` (with `status`)' },
      },
      schema: {
        tags,
        operationId: 'closeProposal',
        summary:
          'Close a poll now (the requester): it resolves to the winning slot, or expires without votes',
        params: IdParams,
        body: Type.Object({}, { additionalProperties: false }),
        response: { 200: ProposalAnswer },
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
          '409': '`conflict`: code `proposal_not_open` (only an accepted standard proposal is cancelled)',
        },
      },
      schema: {
        tags,
        operationId: 'cancelProposal',
        summary: 'Cancel an accepted standard proposal (any party): its bookings are cancelled',
        params: IdParams,
        body: Type.Object(
          { reason: Type.Optional(Type.String({ maxLength: 1000 })) },
          { additionalProperties: false },
        ),
        response: { 200: ProposalAnswer },
      },
    },
    async (request) => proposals.cancel(actorOf(request.caller), request.params.id, request.body.reason),
  );
}
