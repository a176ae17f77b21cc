/**
 * The attendee's self-service token and the waitlist claim token (docs/api.md#public-booking-surface).
 * Each is an HMAC-SHA256 (256 bits) of what it is for — `booking-manage:<booking id>` or
 * `waitlist-claim:<entry id>:<offer start>` — under the server's link key, so mails written later can
 * carry the same link without the token ever being stored: the database keeps only its SHA-256, which
 * is how a token is looked up. One purpose per token (the prefixes), usable only for its booking or
 * offer; a manage token stops working 30 days after its booking ends, a claim token with its hold.
 */
import { createHash, createHmac } from 'node:crypto';

export function manageToken(linkKey: Buffer, bookingId: string): string {
  return createHmac('sha256', linkKey).update(`booking-manage:${bookingId}`).digest('base64url');
}

export function claimToken(linkKey: Buffer, entryId: string, offerStartMs: number): string {
  return createHmac('sha256', linkKey)
    .update(`waitlist-claim:${entryId}:${offerStartMs}`)
    .digest('base64url');
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A token as we issue them (43 base64url characters); anything else is not looked up. */
export const isTokenShape = (s: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(s);
