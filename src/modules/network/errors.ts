/** The problem `code`s the network module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const NETWORK_CODES = errorCodes('network', {
  consent_conflict: { status: 409, meaning: 'The consent changed concurrently; retry' },
  already_connected: { status: 409, meaning: 'The address is already in the caller’s network' },
  invitation_invalid: { status: 401, meaning: 'The invitation token is unknown or already used' },
  auth_method_invalid: { status: 403, meaning: 'Invitations are answered by the invited user’s session' },
  auth_email_mismatch: { status: 403, meaning: 'The signed-in user is not the invited address' },
  invitation_expired: { status: 410, meaning: 'The invitation has expired' },
});
type Codes = typeof NETWORK_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
