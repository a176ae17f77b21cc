/**
 * Signed, expiring tokens for URLs (HMAC-SHA256 with `keys.linkKey`): the OAuth `state` and host
 * connect links. Payloads are readable but cannot be changed, and a token of one purpose is never
 * valid for another: the purpose is part of what is signed.
 */
import { hmacSha256Hex, safeEqual } from '../../platform/crypto.js';

export type TokenPurpose = 'oauth-state';

interface Envelope {
  /** Expiry, epoch ms. */
  exp: number;
}

function signature(key: Buffer, purpose: TokenPurpose, payload: string): string {
  return Buffer.from(hmacSha256Hex(key, `kairos:${purpose}:${payload}`), 'hex').toString('base64url');
}

export function signToken<T extends object>(
  key: Buffer,
  purpose: TokenPurpose,
  data: T,
  expMs: number,
): string {
  const payload = Buffer.from(JSON.stringify({ ...data, exp: expMs }), 'utf8').toString('base64url');
  return `${payload}.${signature(key, purpose, payload)}`;
}

/** The payload when the token is intact, of this purpose and not expired; null otherwise. */
export function verifyToken<T extends object>(
  key: Buffer,
  purpose: TokenPurpose,
  token: string,
  nowMs: number,
): (T & Envelope) | null {
  if (token.length > 4096) return null;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return null;
  const payload = token.slice(0, dot);
  if (!safeEqual(token.slice(dot + 1), signature(key, purpose, payload))) return null;
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof data !== 'object' || data === null) return null;
  const exp = (data as { exp?: unknown }).exp;
  if (typeof exp !== 'number' || exp <= nowMs) return null;
  return data as T & Envelope;
}

/**
 * A host connect link token, compact enough for one URL path segment (71 characters): version (which
 * also tells the mode: 1 live, 2 test), host id, account id, expiry (seconds) and a 128-bit truncated
 * HMAC, base64url. The mode is signed with the rest: a live link cannot be made a test one.
 */
export interface ConnectLink {
  hostId: string;
  accountId: string;
  /** The host's mode (docs/api.md#test-mode). */
  livemode: boolean;
  /** epoch ms, whole seconds */
  expMs: number;
}

const LINK_VERSION = 1;
/** A test-mode host's link: the same layout. */
const LINK_VERSION_TEST = 2;
const LINK_BODY = 1 + 16 + 16 + 4;
const LINK_SIG = 16;

function uuidBytes(id: string): Buffer {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError('not a UUID');
  return Buffer.from(hex, 'hex');
}

function uuidString(b: Buffer): string {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function linkSignature(key: Buffer, body: Buffer): Buffer {
  return Buffer.from(
    hmacSha256Hex(key, Buffer.concat([Buffer.from('kairos:connect-link:'), body])),
    'hex',
  ).subarray(0, LINK_SIG);
}

export function signConnectLink(key: Buffer, link: ConnectLink): string {
  const body = Buffer.alloc(LINK_BODY);
  body[0] = link.livemode ? LINK_VERSION : LINK_VERSION_TEST;
  uuidBytes(link.hostId).copy(body, 1);
  uuidBytes(link.accountId).copy(body, 17);
  body.writeUInt32BE(Math.floor(link.expMs / 1000), 33);
  return Buffer.concat([body, linkSignature(key, body)]).toString('base64url');
}

export function verifyConnectLink(key: Buffer, token: string, nowMs: number): ConnectLink | null {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return null;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length !== LINK_BODY + LINK_SIG) return null;
  if (raw[0] !== LINK_VERSION && raw[0] !== LINK_VERSION_TEST) return null;
  // One spelling per link: the last character also carries unused bits, which decoding ignores.
  if (raw.toString('base64url') !== token) return null;
  const body = raw.subarray(0, LINK_BODY);
  const sig = raw.subarray(LINK_BODY);
  if (!safeEqual(sig.toString('base64url'), linkSignature(key, body).toString('base64url'))) return null;
  const expMs = body.readUInt32BE(33) * 1000;
  if (expMs <= nowMs) return null;
  return {
    hostId: uuidString(body.subarray(1, 17)),
    accountId: uuidString(body.subarray(17, 33)),
    livemode: body[0] === LINK_VERSION,
    expMs,
  };
}
