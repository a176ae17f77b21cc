import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** Constant-time string comparison; unequal lengths are rejected first (without leaking content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) return false;
  return timingSafeEqual(ab, bb);
}

/** Keyed hash (HMAC-SHA256 with the server pepper), hex. Used to store API keys. */
export function keyedHash(pepper: Buffer, value: string): string {
  return createHmac('sha256', pepper).update(value, 'utf8').digest('hex');
}

/** SHA-256 (hex) of a token: how single-use tokens of full entropy are stored and looked up. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function hmacSha256Hex(secret: string | Buffer, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * A pool of random bytes that `randomBytes` refills `size` at a time, handing each byte out once (a
 * refill makes a new pool; what was handed out is never written again); `prepare` may change a fresh
 * pool in place before any of it is handed out (ids map it to their alphabet). A call of
 * `randomBytes` costs about the same whatever its size (~5 µs for 16 bytes, ~8 µs for 4 KiB here:
 * the crypto job's set-up), and a booking's manage nonce made that way was 1.3 % of the server's busy
 * time under load (docs/performance.md, "Random bytes from a pool"). Node's own `randomUUID` keeps
 * such a pool. Answers `take(n)`; more than `size` bytes at once are made fresh, not pooled.
 */
export function randomPool(size = 4096, prepare?: (fresh: Buffer) => void): (n: number) => Buffer {
  const fresh = (n: number) => {
    const bytes = randomBytes(n);
    prepare?.(bytes);
    return bytes;
  };
  let pool = fresh(size);
  let offset = 0;
  return (n) => {
    if (n > size) return fresh(n);
    if (offset + n > size) {
      pool = fresh(size);
      offset = 0;
    }
    const out = pool.subarray(offset, offset + n);
    offset += n;
    return out;
  };
}

/** Random bytes for tokens, from one pool (`randomPool`). */
export const pooledRandomBytes = randomPool();

/** URL-safe random token with `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return pooledRandomBytes(bytes).toString('base64url');
}

/** A token as `randomToken()` issues them (32 bytes: 43 base64url characters); anything else is not looked up. */
export function isTokenShape(s: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(s);
}

/**
 * AES-256-GCM envelope for secrets at rest (webhook secrets, OAuth tokens, CalDAV passwords).
 * Format: `v1.<iv b64url>.<tag b64url>.<ciphertext b64url>`.
 */
export function encryptSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${ct.toString('base64url')}`;
}

export function decryptSecret(key: Buffer, envelope: string): string {
  const [v, iv, tag, ct] = envelope.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unsupported secret envelope');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
