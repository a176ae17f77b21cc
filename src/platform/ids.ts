import { randomBytes } from 'node:crypto';
import { randomPool } from './crypto.js';

/** Crockford base32, lexicographically sortable. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeTime(ms: number, length: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/**
 * Random characters come from a pool (`randomPool`: one `randomBytes` call per 256 ids, not one
 * each) whose bytes are mapped to the alphabet (their low 5 bits) when it is refilled, so an id's
 * random part is one slice.
 */
const ALPHABET_CODES = Buffer.from(ALPHABET, 'latin1');
const randomChars = randomPool(4096, (bytes) => {
  for (let i = 0; i < bytes.length; i++) bytes[i] = ALPHABET_CODES[bytes[i]! & 31]!;
});

/** The time part of the last id made, and its millisecond (ids made in one millisecond share it). */
let lastTimeMs = -1;
let lastTime = '';

/**
 * A prefixed, sortable id: `<prefix>_` + 10 chars of millisecond time + 16 random chars (80 bits).
 * Used for every resource that is not a principal or an API key (docs/api.md#conventions).
 */
export function prefixedId(prefix: string, nowMs: number = Date.now()): string {
  if (nowMs !== lastTimeMs) {
    lastTimeMs = nowMs;
    lastTime = encodeTime(nowMs, 10);
  }
  return `${prefix}_${lastTime}${randomChars(16).toString('latin1')}`;
}

/** UUID v7 (time-ordered) for principals and API keys. */
export function uuidv7(nowMs: number = Date.now()): string {
  const b = randomBytes(16);
  const ts = BigInt(nowMs);
  for (let i = 0; i < 6; i++) b[i] = Number((ts >> BigInt(8 * (5 - i))) & 0xffn);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A prefixed id as `prefixedId` makes them (any prefix). */
export const isPrefixedId = (s: string): boolean => /^[a-z]{1,16}_[0-9a-hjkmnp-tv-z]{26}$/.test(s);

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const isUuid = (s: string): boolean => new RegExp(UUID_PATTERN).test(s);
