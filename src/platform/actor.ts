import type { Caller } from './auth.js';
import type { Clock } from './clock.js';
import { Unauthorized } from './errors.js';

/**
 * Who acts in a use case: the account (business) and the acting principal — the account itself for
 * API keys, the user for sessions, or a host the account manages when a request acts for one. The one
 * actor type of every module.
 */
export interface Actor {
  accountId: string;
  principalId: string;
  /**
   * The mode it acts in (docs/api.md#test-mode): false for a test key. Every object it makes carries
   * it, every read is limited to it, and the outboxes (mail, webhooks, calendar writes, Stripe) decide
   * by it what leaves the server.
   */
  livemode: boolean;
  /** Its time: the server's clock, or in test mode the account's test clock. */
  clock: Clock;
}

/**
 * The caller as an actor. Routes that admit only credentials with an account (secret keys, sessions,
 * publishable keys) call this instead of asserting `caller.accountId!`; an anonymous caller is 401.
 */
export function actorOf(caller: Caller): Actor {
  if (caller.accountId === null || caller.principalId === null) throw new Unauthorized();
  return {
    accountId: caller.accountId,
    principalId: caller.principalId,
    livemode: caller.livemode,
    clock: caller.clock,
  };
}
