/**
 * The console's work on the server (README.md, Console): one-time setup links, signing in and out
 * through the accounts module's sessions, the per-session CSRF proof, and the console's own request
 * allowance. The session token lives only in an httpOnly cookie (routes.ts); nothing here hands it
 * to a page.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import { AppError, Conflict } from '../../platform/errors.js';
import type { ConsoleNeeds } from './api.js';
import { ConsoleRepo } from './repo.js';
import type { SetupBody, SignInBody } from './schemas.js';
import { HOUR } from '../../lib/time.js';

/** How long a setup link works. */
export const SETUP_TTL_MS = 24 * 3_600_000;

/**
 * The console's own allowance per signed-in session and hour. Console requests are not counted
 * against the account's hourly API limit (README.md, Console): a person clicking through pages stays
 * far below this; a script driving the console's proxy instead of using a key does not.
 */
export const CONSOLE_REQUESTS_PER_HOUR = 2_000;

export interface SignedIn {
  token: string;
  expires_at: string;
  email: string;
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

export class ConsoleService {
  private readonly repo: ConsoleRepo;
  private readonly csrfKey: Buffer;
  private readonly windows = new Map<string, { start: number; count: number }>();
  /** Once an account is seen there is one for good (accounts are not deleted): no need to ask again. */
  private accountSeen = false;

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly needs: ConsoleNeeds,
    linkKey: Buffer,
  ) {
    this.repo = new ConsoleRepo(db);
    // A key of its own, derived from the signed-links key for this one purpose.
    this.csrfKey = createHmac('sha256', linkKey).update('kairos:console-csrf').digest();
  }

  async hasAccount(): Promise<boolean> {
    if (this.accountSeen) return true;
    this.accountSeen = (await this.needs.accounts.listAccounts()).length > 0;
    return this.accountSeen;
  }

  /** A fresh setup link path while there is no account (256 random bits, stored hashed). */
  async setupLink(): Promise<string | null> {
    if (await this.hasAccount()) return null;
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.repo.insertSetupToken(sha256(token), now, new Date(now.getTime() + SETUP_TTL_MS));
    return `/console/setup?token=${token}`;
  }

  /**
   * What a setup link is now: `set_up` when it is still unused but the server has an account by
   * other means (the CLI), so its form could only be refused.
   */
  async setupState(token: string): Promise<'valid' | 'used' | 'expired' | 'unknown' | 'set_up'> {
    if (!token) return 'unknown';
    const state = await this.repo.setupTokenState(sha256(token), this.clock.now());
    return state === 'valid' && (await this.hasAccount()) ? 'set_up' : state;
  }

  /**
   * Uses a setup link: the first account, its owner and its first secret key (whose full value is in
   * this answer only), and a session for the owner, signed in at once.
   */
  async completeSetup(body: SetupBody): Promise<{ session: SignedIn; key: string; keyPrefix: string }> {
    if (await this.hasAccount()) {
      throw new Conflict('This server is already set up: sign in at /console/sign-in');
    }
    if (!(await this.repo.consumeSetupTokens(sha256(body.token), this.clock.now()))) {
      throw new AppError(
        410,
        'gone',
        'This setup link was already used or has expired. Restart the server to get a new one while it has no account.',
      );
    }
    const { accounts } = this.needs;
    const created = await accounts.createAccount({ name: body.account_name });
    await accounts.createUser({
      accountId: created.account.id,
      email: body.email,
      password: body.password,
      ...(body.name?.trim() ? { name: body.name } : {}),
    });
    const session = await this.signIn({ email: body.email, password: body.password });
    return { session, key: created.api_key.key, keyPrefix: created.api_key.prefix };
  }

  async signIn(body: SignInBody): Promise<SignedIn> {
    const s = await this.needs.accounts.createSession(body);
    return { token: s.token, expires_at: s.expires_at, email: s.user.email };
  }

  /** The session id inside a session token (its `sid` claim), or null. Not a verification: the API verifies. */
  sessionIdOf(token: string): string | null {
    const payload = token.split('.')[1];
    if (!payload) return null;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sid?: unknown };
      return typeof claims.sid === 'string' && claims.sid.length > 0 ? claims.sid : null;
    } catch {
      return null;
    }
  }

  /** The CSRF proof of a session: an HMAC of its id, so it needs no storage and dies with the session. */
  csrfFor(sessionId: string): string {
    return createHmac('sha256', this.csrfKey).update(sessionId).digest('base64url');
  }

  /** Whether `proof` is this session's CSRF proof (compared in constant time). */
  csrfValid(sessionId: string, proof: string | undefined): boolean {
    if (typeof proof !== 'string') return false;
    const want = Buffer.from(this.csrfFor(sessionId));
    const got = Buffer.from(proof);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** Takes one of the session's console requests this hour; false when none is left. */
  take(sessionId: string): boolean {
    const now = this.clock.nowMs();
    const start = now - (now % HOUR);
    const w = this.windows.get(sessionId);
    if (!w || w.start !== start) {
      if (this.windows.size > 10_000) this.sweep(start);
      this.windows.set(sessionId, { start, count: 1 });
      return true;
    }
    w.count += 1;
    return w.count <= CONSOLE_REQUESTS_PER_HOUR;
  }

  private sweep(start: number): void {
    for (const [k, w] of this.windows) if (w.start !== start) this.windows.delete(k);
  }
}
