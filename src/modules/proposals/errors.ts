/** The problem `code`s the proposals module answers (docs/api.md, Errors): its part of the closed set. */
import { AppError, Conflict, errorCodes, Forbidden } from '../../platform/errors.js';

export const PROPOSAL_CODES = errorCodes('proposals', {
  earliest_slot_too_soon: { status: 400, meaning: 'A poll slot starts less than 25 hours ahead' },
  poll_mode_only_supports_accept: { status: 400, meaning: 'A poll takes votes only (action accept)' },
  invalid_token: { status: 401, meaning: 'The proposal link is unknown or used, or there is no credential' },
  consent_required: {
    status: 403,
    meaning: 'A participant has not granted booking:propose (participant_ids names them)',
  },
  organizer_cannot_respond: { status: 403, meaning: 'The requester cannot answer its own proposal' },
  requester_only: { status: 403, meaning: 'Only the requester withdraws an open proposal' },
  proposal_not_found: { status: 404, meaning: 'No proposal with this id' },
  calendar_disconnected_originator: { status: 409, meaning: 'The requester has no connected calendar' },
  proposal_not_open: { status: 409, meaning: 'The proposal is no longer open (proposal_status says why)' },
  consent_revoked: { status: 409, meaning: 'A participant revoked consent: the proposal expired' },
  slot_mismatch: { status: 409, meaning: 'Another participant accepted a different slot (selected_slot_id)' },
  slot_unavailable: { status: 409, meaning: 'The selected slot is no longer free for everyone' },
  slot_passed: { status: 409, meaning: 'The slot has already begun' },
  already_responded: { status: 409, meaning: 'The participant already answered (response)' },
  already_voted: { status: 409, meaning: 'This e-mail address already voted in the poll' },
  not_a_poll: { status: 409, meaning: 'Only polls are closed' },
  token_expired: { status: 410, meaning: 'The proposal has expired' },
});
type Codes = typeof PROPOSAL_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}

/** The problems the proposals module answers in several places, built in one place each. */
export function invalidToken(detail = 'This link is not valid or was already used'): AppError {
  return new AppError(401, 'unauthorized', detail, { code: 'invalid_token' });
}
export function tokenExpired(): AppError {
  return new AppError(410, 'gone', 'This proposal has expired', { code: 'token_expired' });
}
export function notOpen(p: { status: string }, action: string): Conflict {
  return new Conflict(`The proposal is ${p.status}; it cannot be ${action} now`, {
    code: 'proposal_not_open',
    proposal_status: p.status,
  });
}
export function proposalNotFound(): AppError {
  return new AppError(404, 'not-found', 'No proposal with this id', { code: 'proposal_not_found' });
}
export function organizerCannotRespond(): Forbidden {
  return new Forbidden('The requester of a proposal cannot answer it', { code: 'organizer_cannot_respond' });
}
