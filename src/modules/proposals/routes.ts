/** Routes of the proposals module (docs/api.md#proposals-and-polls). */
import { actorOf } from '../../platform/actor.js';
import { answer, withExample } from '../../platform/openapi.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import {
  CancelProposalBody,
  CreateProposalBody,
  EmptyBody,
  POLL,
  PROPOSAL,
  ProposalAnswer,
  ProposalCreated,
  ProposalList,
  ProposalParams,
  ThreadParams,
  ProposalsQuery,
  PublicProposalAnswer,
  RESOLVED,
  RespondAnswer,
  RespondBody,
  SLOTS,
  Thread,
  TokenQuery,
} from './schemas.js';
import type { ProposalService } from './service.js';

export function proposalRoutes(app: TypedApp, proposals: ProposalService): void {
  const tags = ['Proposals'];

  app.post(
    '/v1/proposals',
    {
      config: {
        access: 'private',
        idempotent: true,
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
        body: withExample(CreateProposalBody, {
          mode: 'standard' as const,
          participant_ids: ['0190a4b8-1f2e-7c44-8a9d-3e5f7a1b2c3d'],
          title: 'Partnership kick-off',
          message: 'Either time works for us.',
          slots: [
            { start: '2054-06-10T14:00:00Z', end: '2054-06-10T15:00:00Z' },
            { start: '2054-06-11T09:00:00Z', end: '2054-06-11T10:00:00Z' },
          ],
        }),
        response: {
          201: answer('The proposal (and a poll’s links, shown once)', ProposalCreated, {
            proposal: { ...POLL, participants: [], slots: POLL.slots.map((x) => ({ ...x, votes: 0 })) },
            magic_link_url: 'https://kairos.example.com/p/Zk3v2mQm8rT0yXc1nB5aL9dE7hJ4pW6sU2gF0oK8iVq',
          }),
        },
      },
    },
    async (request, reply) => {
      const out = await proposals.create(actorOf(request.caller), request.body);
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
        querystring: ProposalsQuery,
        response: {
          200: answer('A page of proposals, newest first', ProposalList, {
            proposals: [PROPOSAL],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => proposals.list(actorOf(request.caller), request.query),
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
        querystring: TokenQuery,
        response: {
          200: answer('The proposal as its link shows it', PublicProposalAnswer, {
            proposal: {
              id: POLL.id,
              mode: 'poll' as const,
              poll_variant: 'open' as const,
              status: 'proposed' as const,
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
        params: ProposalParams,
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
        params: ThreadParams,
        response: {
          200: answer('The thread’s proposals, oldest first', Thread, {
            thread: { id: PROPOSAL.thread_id, proposals: [PROPOSAL] },
          }),
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
        params: ProposalParams,
        body: withExample(RespondBody, { action: 'accept', selected_slot_id: SLOTS[0]!.id }),
        response: {
          200: answer(
            'The proposal after the answer: as its parties see it (and the counter-proposal a counter made) to a participant’s credential, as the link shows it (no ids, no other parties’ addresses) to a magic-link token',
            RespondAnswer,
            { proposal: PROPOSAL },
          ),
        },
      },
    },
    async (request) => proposals.respond(request.caller, request.params.id, request.body),
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
        params: ProposalParams,
        body: withExample(EmptyBody, {}),
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
        params: ProposalParams,
        body: withExample(CancelProposalBody, { reason: 'Postponed to next quarter' }),
        response: {
          200: answer('The cancelled proposal', ProposalAnswer, {
            proposal: { ...PROPOSAL, status: 'cancelled' as const },
          }),
        },
      },
    },
    async (request) => proposals.cancel(actorOf(request.caller), request.params.id, request.body.reason),
  );
}
