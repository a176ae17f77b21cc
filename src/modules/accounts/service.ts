import { SignJWT } from 'jose';
import type { Db, Tx } from '../../db/store.js';
import { accountRef, announceRevocation, type RevocationListener } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, NotFound, Unauthorized, ValidationFailed } from '../../platform/errors.js';
import { uuidv7 } from '../../platform/ids.js';
import { hashPassword, verifyPassword } from '../../platform/passwords.js';
import type { KeyAccount, Plan } from '../api-keys/api.js';
import type { Platform } from '../module.js';
import type { AccountsApi, AccountsNeeds, PresentedAccount, PresentedUser } from './api.js';
import {
  emailTaken,
  findAccount,
  findSession,
  findUser,
  findUserByEmail,
  findUserEmail,
  findUserIdByEmail,
  insertAccount,
  insertSession,
  insertUser,
  listAccounts,
  listUsers,
  markSessionRevoked,
  revokeUserSessions,
  setPasswordHash,
  setUserName,
  updateAccount,
} from './repo.js';
import { isEmailAddress } from '../../platform/validation.js';
import type { SessionBody } from './schemas.js';

export type { SessionClaims } from './api.js';

export class AccountService implements AccountsApi {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly jwtKey: Buffer;
  private readonly sessionTtlSeconds: number;
  private readonly revocations: RevocationListener;

  constructor(
    platform: Pick<Platform, 'db' | 'clock' | 'keys' | 'config' | 'revocations'>,
    private readonly needs: AccountsNeeds,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.jwtKey = platform.keys.jwtKey;
    this.sessionTtlSeconds = platform.config.sessionTtlSeconds;
    this.revocations = platform.revocations;
  }

  /** Creates an account (a business and a principal) with its first secret key. */
  async createAccount(input: {
    name: string;
    plan?: Plan;
    rateLimitPerHour?: number | null;
    timezone?: string;
  }) {
    const name = input.name.trim();
    if (!name) throw new ValidationFailed({ name: 'must not be empty' });
    const plan = input.plan ?? 'free';
    if (input.rateLimitPerHour != null && plan !== 'enterprise') {
      throw new ValidationFailed({ rate_limit: 'a custom account rate limit needs the enterprise plan' });
    }
    return this.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const id = uuidv7(now.getTime());
      await this.needs.principals.insertPrincipal(trx, {
        id,
        kind: 'account',
        account_id: id,
        display_name: name,
        email: null,
        timezone: input.timezone ?? 'UTC',
        created_at: now,
      });
      await insertAccount(trx, {
        id,
        name,
        plan,
        rate_limit_per_hour: input.rateLimitPerHour ?? null,
        created_at: now,
      });
      const first = await this.needs.apiKeys.create(
        id,
        { name: 'Default secret key', key_type: 'secret' },
        trx,
      );
      return {
        account: {
          id,
          name,
          plan,
          rate_limit_per_hour: this.needs.apiKeys.planLimit(plan, input.rateLimitPerHour ?? null),
          created_at: now.toISOString(),
        },
        api_key: { ...first.api_key, key: first.key },
      };
    });
  }

  async getAccount(id: string) {
    const a = await findAccount(this.db, id);
    if (!a) throw new NotFound('No account with this id');
    return this.present(a);
  }

  /** Every account, oldest first (operators: `kairos accounts list`). */
  async listAccounts() {
    return (await listAccounts(this.db)).map((a) => this.present(a));
  }

  /**
   * Changes an account's plan and/or its own hourly limit (operators: `kairos accounts update`). A
   * custom limit needs the enterprise plan; leaving enterprise drops it. The change is announced like
   * a revocation (`account:<id>` on the auth channel, delivered at commit): every process drops the
   * account's cached credentials at once, so the next request anywhere carries the new limit.
   */
  async updateAccount(id: string, change: { plan?: Plan; rateLimitPerHour?: number | null }) {
    const a = await findAccount(this.db, id);
    if (!a) throw new NotFound('No account with this id');
    const plan = change.plan ?? a.plan;
    const custom = change.rateLimitPerHour !== undefined ? change.rateLimitPerHour : a.rate_limit_per_hour;
    if (custom !== null && plan !== 'enterprise') {
      throw new ValidationFailed({ rate_limit: 'a custom account rate limit needs the enterprise plan' });
    }
    const row = await this.db.transaction().execute(async (trx) => {
      const updated = await updateAccount(trx, id, { plan, rate_limit_per_hour: custom });
      if (updated) await announceRevocation(trx, accountRef(id));
      return updated;
    });
    if (!row) throw new NotFound('No account with this id');
    this.revocations.revoked(accountRef(id));
    return this.present(row);
  }

  private present(a: {
    id: string;
    name: string;
    plan: Plan;
    rate_limit_per_hour: number | null;
    created_at: Date | string;
  }): PresentedAccount {
    return {
      id: a.id,
      name: a.name,
      plan: a.plan,
      rate_limit_per_hour: this.needs.apiKeys.planLimit(a.plan, a.rate_limit_per_hour),
      created_at: new Date(a.created_at).toISOString(),
    };
  }

  /** The display name of a user's principal (the principals module owns it). */
  private async displayName(userId: string): Promise<string> {
    return (await this.needs.principals.contacts([userId])).get(userId)?.name ?? '';
  }

  /**
   * A user: its sign-in e-mail and its own name. Without a name, others see the account's name — never
   * the e-mail, which public pages and customers' mails must not show.
   */
  async createUser(input: {
    accountId: string;
    email: string;
    password: string;
    name?: string;
  }): Promise<PresentedUser> {
    const errors: Record<string, string> = {};
    const email = input.email.trim();
    if (!isEmailAddress(email)) errors.email = 'must be a valid e-mail address';
    if (input.password.length < 10) errors.password = 'must be at least 10 characters';
    const name = input.name === undefined ? null : userName(input.name, errors);
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const account = await this.getAccount(input.accountId);
    const displayName = name ?? account.name;
    const passwordHash = await hashPassword(input.password);
    return this.db.transaction().execute(async (trx) => {
      if (await emailTaken(trx, email)) throw new Conflict('A user with this e-mail already exists');
      const now = this.clock.now();
      const id = uuidv7(now.getTime());
      await this.needs.principals.insertPrincipal(trx, {
        id,
        kind: 'user',
        account_id: input.accountId,
        display_name: displayName,
        email,
        timezone: 'UTC',
        created_at: now,
      });
      await insertUser(trx, {
        id,
        account_id: input.accountId,
        email,
        name,
        password_hash: passwordHash,
        created_at: now,
      });
      return {
        id,
        account_id: input.accountId,
        email,
        name,
        display_name: displayName,
        created_at: now.toISOString(),
      };
    });
  }

  async listUsers(accountId?: string): Promise<PresentedUser[]> {
    if (accountId !== undefined) await this.getAccount(accountId);
    const rows = await listUsers(this.db, accountId);
    const names = await this.needs.principals.contacts(rows.map((u) => u.id));
    return rows.map((u) => ({
      id: u.id,
      account_id: u.account_id,
      email: u.email,
      name: u.name,
      display_name: names.get(u.id)?.name ?? '',
      created_at: new Date(u.created_at).toISOString(),
    }));
  }

  async resetPassword(email: string, password: string) {
    if (password.length < 10) throw new ValidationFailed({ password: 'must be at least 10 characters' });
    const user = await findUserByEmail(this.db, email.trim());
    if (!user) throw new NotFound(`No user signs in with ${email.trim()}`);
    const passwordHash = await hashPassword(password);
    const revoked = await this.db.transaction().execute(async (trx) => {
      await setPasswordHash(trx, user.id, passwordHash);
      const ids = await revokeUserSessions(trx, user.id, this.clock.now());
      for (const id of ids) await announceRevocation(trx, `session:${id}`);
      return ids;
    });
    for (const id of revoked) this.revocations.revoked(`session:${id}`);
    return { user: await this.getUser(user.id), sessions_revoked: revoked.length };
  }

  /** Sets a user's own name, and so how others see it (its principal's display name), in one transaction. */
  async renameUser(userId: string, raw: string): Promise<PresentedUser> {
    const errors: Record<string, string> = {};
    const name = userName(raw, errors);
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    await this.db.transaction().execute(async (trx) => {
      if (!(await setUserName(trx, userId, name))) throw new NotFound('No user with this id');
      await this.needs.principals.renameUser(trx, userId, name);
    });
    return this.getUser(userId);
  }

  /** Signs a user in: a short-lived JWT bound to a revocable session row. */
  async createSession({ email, password }: SessionBody) {
    const user = await findUserByEmail(this.db, email.trim());
    const ok = await verifyPassword(password, user?.password_hash ?? null);
    if (!user || !ok) throw new Unauthorized('Invalid e-mail or password');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.sessionTtlSeconds * 1000);
    const sid = uuidv7(now.getTime());
    await insertSession(this.db, {
      id: sid,
      user_id: user.id,
      created_at: now,
      expires_at: expiresAt,
      revoked_at: null,
    });
    const token = await new SignJWT({ sid, acc: user.account_id })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuedAt(Math.floor(now.getTime() / 1000))
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .setIssuer('kairos')
      .sign(this.jwtKey);
    return {
      token,
      expires_at: expiresAt.toISOString(),
      user: {
        id: user.id,
        account_id: user.account_id,
        email: user.email,
        name: user.name,
        display_name: await this.displayName(user.id),
        created_at: new Date(user.created_at).toISOString(),
      },
    };
  }

  async revokeSession(sessionId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await markSessionRevoked(trx, sessionId, this.clock.now());
      await announceRevocation(trx, `session:${sessionId}`);
    });
    // This process stops accepting the session before it answers; the others when the NOTIFY arrives.
    this.revocations.revoked(`session:${sessionId}`);
  }

  /** Whether a session is live (not revoked, not expired). */
  async sessionActive(sessionId: string): Promise<boolean> {
    const s = await findSession(this.db, sessionId);
    return !!s && s.revoked_at === null && new Date(s.expires_at).getTime() > this.clock.nowMs();
  }

  async getUser(id: string): Promise<PresentedUser> {
    const u = await findUser(this.db, id);
    if (!u) throw new NotFound('No user with this id');
    return {
      id: u.id,
      account_id: u.account_id,
      email: u.email,
      name: u.name,
      display_name: await this.displayName(u.id),
      created_at: new Date(u.created_at).toISOString(),
    };
  }

  async userEmail(userId: string): Promise<string | null> {
    return (await findUserEmail(this.db, userId)) ?? null;
  }

  async userIdByEmail(email: string): Promise<string | null> {
    return (await findUserIdByEmail(this.db, email)) ?? null;
  }

  /** An account as the API-keys module needs it (extension point `keyAccounts`), read in `trx` when given. */
  async keyAccount(id: string, trx?: Tx): Promise<KeyAccount | undefined> {
    const a = await findAccount(trx ?? this.db, id);
    return (
      a && { plan: a.plan, rateLimitPerHour: a.rate_limit_per_hour, name: a.name, createdAt: a.created_at }
    );
  }
}

/** A user's name as given: trimmed, not empty, at most 200 characters, and not an e-mail address. */
function userName(raw: string, errors: Record<string, string>): string {
  const name = raw.trim();
  if (!name) errors.name = 'must not be empty';
  else if (name.length > 200) errors.name = 'must be at most 200 characters';
  else if (isEmailAddress(name)) errors.name = 'must be a name, not an e-mail address';
  return name;
}
