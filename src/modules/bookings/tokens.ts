/**
 * The attendee's self-service token and the waitlist claim token (docs/api.md#public-booking-surface).
 *
 * - A manage token is HMAC-SHA256 (256 bits) of `booking-manage:<booking id>:<nonce>` under the
 *   server's link key, where the nonce is 128 fresh random bits kept with the booking: mails written
 *   later (reschedule) repeat the same link without the token being stored, and neither the nonce nor
 *   the stored SHA-256 of the token is enough to make it. It stops working 30 days after its booking ends.
 * - A claim token is 256 fresh random bits, mailed once; only its SHA-256 is stored, and it works only
 *   while its hold does.
 *
 * One purpose per token (the prefix of the HMAC input; claim tokens are looked up only among offers),
 * usable only for its booking or offer. Lookups go by the SHA-256, so no comparison of secrets runs
 * in variable time.
 */
import { createHmac } from 'node:crypto';
import { randomToken, sha256Hex } from '../../platform/crypto.js';

/** 128 random bits for a new booking's manage token (stored with the booking). */
export function newManageNonce(): string {
  return randomToken(16);
}

export function manageToken(linkKey: Buffer, bookingId: string, nonce: string): string {
  return createHmac('sha256', linkKey).update(`booking-manage:${bookingId}:${nonce}`).digest('base64url');
}

/** A fresh claim token: 256 random bits. */
export function newClaimToken(): string {
  return randomToken(32);
}

export function tokenHash(token: string): string {
  return sha256Hex(token);
}

export { isTokenShape } from '../../platform/crypto.js';
