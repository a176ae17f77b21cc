import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { purgeInBatches } from '../db/purge.js';
import type { Db } from '../db/store.js';
import type { Clock } from './clock.js';
import { decryptSecret, encryptSecret } from './crypto.js';
import { AppError, ValidationFailed } from './errors.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
/** How long an in-flight claim blocks others before it is presumed abandoned (a crashed process). */
const IN_FLIGHT_LEASE_MS = 60_000;
const KEY_PATTERN = /^[A-Za-z0-9_\-:.]{1,256}$/;
/** Response headers replayed with the stored body. */
export const REPLAYED_HEADERS = ['content-type', 'location'];

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; headers: Record<string, string>; body: string };

export function validateIdempotencyKey(raw: string | string[] | undefined): string | null {
  if (raw === undefined) return null;
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || !KEY_PATTERN.test(key)) {
    throw new ValidationFailed(
      { 'Idempotency-Key': 'must be 1 to 256 characters of A-Z, a-z, 0-9, _, -, :, .' },
      'Invalid Idempotency-Key header',
    );
  }
  return key;
}

export function bodyHash(body: unknown): string {
  return createHash('sha256')
    .update(body === undefined ? '' : JSON.stringify(body))
    .digest('hex');
}

/**
 * Idempotency records (docs/api.md#idempotency). The first request with a key claims it with an
 * INSERT that only one request can win; the others see the claim: in flight → 409, done → the stored
 * response byte for byte, same key with another request → 422. 5xx outcomes are never stored (the claim
 * is released so a retry can succeed). Stored bodies are encrypted: a creation response can hold a secret
 * shown only once (an API key, a webhook secret).
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly encryptionKey: Buffer,
  ) {}

  async claim(scope: string, key: string, method: string, path: string, hash: string): Promise<Claim> {
    const now = this.clock.nowMs();
    const { rows } = await sql<{ claimed: boolean }>`
      INSERT INTO idempotency_keys (scope, key, method, path, body_hash, state, created_at, locked_until)
      VALUES (${scope}, ${key}, ${method}, ${path}, ${hash}, 'in_flight', ${new Date(now)}, ${new Date(now + IN_FLIGHT_LEASE_MS)})
      ON CONFLICT (scope, key) DO UPDATE
        SET method = excluded.method, path = excluded.path, body_hash = excluded.body_hash, state = 'in_flight',
            response_status = NULL, response_headers = NULL, response_body = NULL,
            created_at = excluded.created_at, locked_until = excluded.locked_until
        WHERE idempotency_keys.created_at < ${new Date(now - IDEMPOTENCY_WINDOW_MS)}
           OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.locked_until < ${new Date(now)}
               AND idempotency_keys.method = excluded.method AND idempotency_keys.path = excluded.path
               AND idempotency_keys.body_hash = excluded.body_hash)
      RETURNING true AS claimed
    `.execute(this.db);
    if (rows.length > 0) return { kind: 'claimed' };
    const existing = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!existing) return this.claim(scope, key, method, path, hash); // released meanwhile: try again
    if (existing.method !== method || existing.path !== path || existing.body_hash !== hash) {
      throw new AppError(
        422,
        'idempotency-key-reused',
        'This Idempotency-Key was already used with a different request; use a new key for a new request',
      );
    }
    if (existing.state === 'in_flight') {
      throw new AppError(
        409,
        'idempotency-key-in-use',
        'A request with this Idempotency-Key is still being processed; retry shortly',
        {},
        { 'retry-after': '1' },
      );
    }
    return {
      kind: 'replay',
      status: existing.response_status ?? 200,
      headers: (existing.response_headers as Record<string, string> | null) ?? {},
      body: existing.response_body ? decryptSecret(this.encryptionKey, existing.response_body) : '',
    };
  }

  async complete(scope: string, key: string, status: number, headers: Record<string, string>, body: string) {
    await this.db
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        response_status: status,
        response_headers: JSON.stringify(headers),
        response_body: encryptSecret(this.encryptionKey, body),
      })
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  }

  async release(scope: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('state', '=', 'in_flight')
      .execute();
  }

  /** Deletes records older than the 24-hour window, in bounded batches (src/db/purge.ts). */
  async cleanup(): Promise<number> {
    const before = new Date(this.clock.nowMs() - IDEMPOTENCY_WINDOW_MS);
    return purgeInBatches(this.db, 'idempotency_keys', sql<boolean>`created_at < ${before}`);
  }
}
